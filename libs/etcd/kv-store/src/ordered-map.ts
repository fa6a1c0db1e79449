import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';

// An ordered map from byte strings to values: a B+tree. Leaves hold sorted keys and their values
// and are chained for range scans; inner nodes hold separators (every key of children[i + 1] is
// >= keys[i], every key of children[i] is < keys[i]). Lookups, inserts and deletes cost
// O(log n) node visits plus an O(order) array shift; a scan costs O(log n + keys visited).

interface Leaf<V> {
  readonly leaf: true;
  keys: ByteString[];
  values: V[];
  next: Leaf<V> | null;
}

interface Inner<V> {
  readonly leaf: false;
  keys: ByteString[];
  children: Node<V>[];
}

type Node<V> = Leaf<V> | Inner<V>;

/** Entries per leaf and children per inner node (default). */
export const DEFAULT_ORDER = 64;

/** Index of the first key >= `key`. */
function lowerBound(keys: readonly ByteString[], key: ByteString): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keys[mid]! < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Index of the first key > `key` (= the child of an inner node that may hold `key`). */
function upperBound(keys: readonly ByteString[], key: ByteString): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keys[mid]! <= key) low = mid + 1;
    else high = mid;
  }
  return low;
}

function newLeaf<V>(keys: ByteString[], values: V[]): Leaf<V> {
  return { leaf: true, keys, values, next: null };
}

function newInner<V>(keys: ByteString[], children: Node<V>[]): Inner<V> {
  return { leaf: false, keys, children };
}

/** The smallest key under `node` (nodes are never empty below the root). */
function minKey<V>(node: Node<V>): ByteString {
  let current = node;
  while (!current.leaf) current = current.children[0]!;
  assert(current.keys.length > 0, 'ordered-map: empty non-root leaf');
  return current.keys[0]!;
}

/** Sizes that split `count` items into `parts` nearly equal parts. */
function evenSizes(count: number, parts: number): number[] {
  const sizes: number[] = [];
  const base = Math.floor(count / parts);
  const extra = count % parts;
  for (let i = 0; i < parts; i++) sizes.push(base + (i < extra ? 1 : 0));
  return sizes;
}

/**
 * A B+tree keyed by byte strings (ordered like etcd orders keys).
 *
 * Values are stored as given. Keys must be byte strings (see byte-string.ts).
 */
export class OrderedMap<V> {
  private root: Node<V>;
  private count = 0;
  private readonly maxEntries: number;
  private readonly minEntries: number;

  constructor(order: number = DEFAULT_ORDER) {
    if (!Number.isInteger(order) || order < 4 || order % 2 !== 0) {
      throw new TypeError(`OrderedMap: order must be an even integer >= 4, got ${order}`);
    }
    this.maxEntries = order;
    this.minEntries = order / 2;
    this.root = newLeaf<V>([], []);
  }

  /** Builds a map from keys in strictly ascending order, in O(n). */
  static fromSorted<V>(keys: ByteString[], values: V[], order: number = DEFAULT_ORDER): OrderedMap<V> {
    assert(keys.length === values.length, 'ordered-map: keys and values differ in length');
    const map = new OrderedMap<V>(order);
    if (keys.length === 0) return map;
    for (let i = 1; i < keys.length; i++) {
      if (!(keys[i - 1]! < keys[i]!)) throw new TypeError('OrderedMap.fromSorted: keys must be strictly ascending');
    }
    let level: Node<V>[] = map.buildLeaves(keys, values);
    while (level.length > 1) level = map.buildInnerLevel(level);
    map.root = level[0]!;
    map.count = keys.length;
    return map;
  }

  private buildLeaves(keys: ByteString[], values: V[]): Leaf<V>[] {
    const sizes = evenSizes(keys.length, Math.ceil(keys.length / this.maxEntries));
    const leaves: Leaf<V>[] = [];
    let offset = 0;
    for (const size of sizes) {
      const leaf = newLeaf(keys.slice(offset, offset + size), values.slice(offset, offset + size));
      if (leaves.length > 0) leaves[leaves.length - 1]!.next = leaf;
      leaves.push(leaf);
      offset += size;
    }
    return leaves;
  }

  private buildInnerLevel(children: Node<V>[]): Inner<V>[] {
    const sizes = evenSizes(children.length, Math.ceil(children.length / this.maxEntries));
    const level: Inner<V>[] = [];
    let offset = 0;
    for (const size of sizes) {
      const group = children.slice(offset, offset + size);
      level.push(newInner(group.slice(1).map((child) => minKey(child)), group));
      offset += size;
    }
    return level;
  }

  /** Number of keys. */
  get size(): number {
    return this.count;
  }

  get(key: ByteString): V | undefined {
    let node = this.root;
    while (!node.leaf) node = node.children[upperBound(node.keys, key)]!;
    const index = lowerBound(node.keys, key);
    return index < node.keys.length && node.keys[index] === key ? node.values[index] : undefined;
  }

  has(key: ByteString): boolean {
    return this.get(key) !== undefined;
  }

  /** Inserts or replaces. Returns true when the key was new. */
  set(key: ByteString, value: V): boolean {
    let inserted = false;
    this.upsert(key, (previous) => {
      inserted = previous === undefined;
      return value;
    });
    return inserted;
  }

  /**
   * Replaces the value of `key` with `update(previous)` (`previous` undefined when the key is new,
   * which inserts it), in one descent. Returns the value stored.
   */
  upsert(key: ByteString, update: (previous: V | undefined) => V): V {
    const path: Inner<V>[] = [];
    const slots: number[] = [];
    let node = this.root;
    while (!node.leaf) {
      const slot = upperBound(node.keys, key);
      path.push(node);
      slots.push(slot);
      node = node.children[slot]!;
    }
    const index = lowerBound(node.keys, key);
    if (index < node.keys.length && node.keys[index] === key) {
      const value = update(node.values[index]);
      node.values[index] = value;
      return value;
    }
    const value = update(undefined);
    node.keys.splice(index, 0, key);
    node.values.splice(index, 0, value);
    this.count += 1;
    if (node.keys.length > this.maxEntries) this.splitUpwards(node, path, slots);
    return value;
  }

  private splitUpwards(leaf: Leaf<V>, path: Inner<V>[], slots: number[]): void {
    const half = Math.ceil(leaf.keys.length / 2);
    const right = newLeaf(leaf.keys.splice(half), leaf.values.splice(half));
    right.next = leaf.next;
    leaf.next = right;
    let separator = right.keys[0]!;
    let newChild: Node<V> = right;
    for (let depth = path.length - 1; depth >= 0; depth--) {
      const parent = path[depth]!;
      const slot = slots[depth]!;
      parent.keys.splice(slot, 0, separator);
      parent.children.splice(slot + 1, 0, newChild);
      if (parent.children.length <= this.maxEntries) return;
      const keep = Math.ceil(parent.children.length / 2);
      const rightChildren = parent.children.splice(keep);
      const rightKeys = parent.keys.splice(keep);
      separator = parent.keys.pop()!;
      newChild = newInner(rightKeys, rightChildren);
    }
    this.root = newInner([separator], [this.root, newChild]);
  }

  /** Removes a key. Returns true when it was present. */
  delete(key: ByteString): boolean {
    const path: Inner<V>[] = [];
    const slots: number[] = [];
    let node = this.root;
    while (!node.leaf) {
      const slot = upperBound(node.keys, key);
      path.push(node);
      slots.push(slot);
      node = node.children[slot]!;
    }
    const index = lowerBound(node.keys, key);
    if (index >= node.keys.length || node.keys[index] !== key) return false;
    node.keys.splice(index, 1);
    node.values.splice(index, 1);
    this.count -= 1;
    this.rebalanceUpwards(node, path, slots);
    return true;
  }

  private rebalanceUpwards(start: Node<V>, path: Inner<V>[], slots: number[]): void {
    let node: Node<V> = start;
    for (let depth = path.length - 1; depth >= 0; depth--) {
      const size = node.leaf ? node.keys.length : node.children.length;
      if (size >= this.minEntries) return;
      const parent = path[depth]!;
      const slot = slots[depth]!;
      if (node.leaf) this.fixLeaf(node, parent, slot);
      else this.fixInner(node, parent, slot);
      node = parent;
    }
    if (!this.root.leaf && this.root.children.length === 1) this.root = this.root.children[0]!;
  }

  private fixLeaf(leaf: Leaf<V>, parent: Inner<V>, slot: number): void {
    const left = slot > 0 ? (parent.children[slot - 1] as Leaf<V>) : null;
    const right = slot + 1 < parent.children.length ? (parent.children[slot + 1] as Leaf<V>) : null;
    if (left !== null && left.keys.length > this.minEntries) {
      leaf.keys.unshift(left.keys.pop()!);
      leaf.values.unshift(left.values.pop()!);
      parent.keys[slot - 1] = leaf.keys[0]!;
    } else if (right !== null && right.keys.length > this.minEntries) {
      leaf.keys.push(right.keys.shift()!);
      leaf.values.push(right.values.shift()!);
      parent.keys[slot] = right.keys[0]!;
    } else if (left !== null) {
      for (let i = 0; i < leaf.keys.length; i++) {
        left.keys.push(leaf.keys[i]!);
        left.values.push(leaf.values[i]!);
      }
      left.next = leaf.next;
      parent.keys.splice(slot - 1, 1);
      parent.children.splice(slot, 1);
    } else {
      assert(right !== null, 'ordered-map: a non-root leaf has a sibling');
      for (let i = 0; i < right.keys.length; i++) {
        leaf.keys.push(right.keys[i]!);
        leaf.values.push(right.values[i]!);
      }
      leaf.next = right.next;
      parent.keys.splice(slot, 1);
      parent.children.splice(slot + 1, 1);
    }
  }

  private fixInner(node: Inner<V>, parent: Inner<V>, slot: number): void {
    const left = slot > 0 ? (parent.children[slot - 1] as Inner<V>) : null;
    const right = slot + 1 < parent.children.length ? (parent.children[slot + 1] as Inner<V>) : null;
    if (left !== null && left.children.length > this.minEntries) {
      node.children.unshift(left.children.pop()!);
      node.keys.unshift(parent.keys[slot - 1]!);
      parent.keys[slot - 1] = left.keys.pop()!;
    } else if (right !== null && right.children.length > this.minEntries) {
      node.children.push(right.children.shift()!);
      node.keys.push(parent.keys[slot]!);
      parent.keys[slot] = right.keys.shift()!;
    } else if (left !== null) {
      left.keys.push(parent.keys[slot - 1]!, ...node.keys);
      for (const child of node.children) left.children.push(child);
      parent.keys.splice(slot - 1, 1);
      parent.children.splice(slot, 1);
    } else {
      assert(right !== null, 'ordered-map: a non-root inner node has a sibling');
      node.keys.push(parent.keys[slot]!, ...right.keys);
      for (const child of right.children) node.children.push(child);
      parent.keys.splice(slot, 1);
      parent.children.splice(slot + 1, 1);
    }
  }

  /**
   * Visits keys in ascending order from the first key >= `start` up to, not including, `end`
   * (`null`: to the last key). Stops early when `visit` returns false.
   */
  scan(start: ByteString, end: ByteString | null, visit: (key: ByteString, value: V) => boolean | void): void {
    let node = this.root;
    while (!node.leaf) node = node.children[upperBound(node.keys, start)]!;
    let leaf: Leaf<V> | null = node;
    let index = lowerBound(leaf.keys, start);
    while (leaf !== null) {
      const keys = leaf.keys;
      const values = leaf.values;
      // Only the leaf holding `end` needs a bound; the keys before it are visited uncompared.
      const last = keys.length - 1;
      const stop = end !== null && last >= 0 && keys[last]! >= end ? lowerBound(keys, end) : keys.length;
      for (; index < stop; index++) {
        if (visit(keys[index]!, values[index]!) === false) return;
      }
      if (stop < keys.length) return;
      leaf = leaf.next;
      index = 0;
    }
  }

  /**
   * Like scan, but stores what `visit` returns under each visited key (the same value to leave it).
   * Keys are neither added nor removed, so the tree's shape does not change.
   */
  scanReplace(start: ByteString, end: ByteString | null, visit: (key: ByteString, value: V) => V): void {
    let node = this.root;
    while (!node.leaf) node = node.children[upperBound(node.keys, start)]!;
    let leaf: Leaf<V> | null = node;
    let index = lowerBound(leaf.keys, start);
    while (leaf !== null) {
      const keys = leaf.keys;
      const values = leaf.values;
      for (; index < keys.length; index++) {
        const key = keys[index]!;
        if (end !== null && key >= end) return;
        values[index] = visit(key, values[index]!);
      }
      leaf = leaf.next;
      index = 0;
    }
  }

  /** Checks every structural invariant; throws on the first broken one (for tests). */
  assertInvariants(): void {
    const leaves: Leaf<V>[] = [];
    const depthOf = this.checkNode(this.root, null, null, true, leaves);
    assert(depthOf >= 0, 'ordered-map: depth');
    let total = 0;
    for (let i = 0; i < leaves.length; i++) {
      total += leaves[i]!.keys.length;
      assert(leaves[i]!.next === (leaves[i + 1] ?? null), 'ordered-map: leaf chain out of order');
    }
    assert(total === this.count, 'ordered-map: size does not match the leaves');
  }

  private checkNode(
    node: Node<V>,
    low: ByteString | null,
    high: ByteString | null,
    isRoot: boolean,
    leaves: Leaf<V>[],
  ): number {
    for (let i = 0; i < node.keys.length; i++) {
      const key = node.keys[i]!;
      assert(i === 0 || node.keys[i - 1]! < key, 'ordered-map: keys not strictly ascending');
      assert(low === null || key >= low, 'ordered-map: key below its subtree bound');
      assert(high === null || key < high, 'ordered-map: key above its subtree bound');
    }
    if (node.leaf) {
      assert(node.keys.length === node.values.length, 'ordered-map: leaf keys and values differ');
      assert(node.keys.length <= this.maxEntries, 'ordered-map: leaf overflow');
      assert(isRoot || node.keys.length >= this.minEntries, 'ordered-map: leaf underflow');
      leaves.push(node);
      return 0;
    }
    assert(node.children.length === node.keys.length + 1, 'ordered-map: inner fan-out');
    assert(node.children.length <= this.maxEntries, 'ordered-map: inner overflow');
    assert(isRoot ? node.children.length >= 2 : node.children.length >= this.minEntries, 'ordered-map: inner underflow');
    let depth = -1;
    for (let i = 0; i < node.children.length; i++) {
      const childLow = i === 0 ? low : node.keys[i - 1]!;
      const childHigh = i === node.keys.length ? high : node.keys[i]!;
      const childDepth = this.checkNode(node.children[i]!, childLow, childHigh, false, leaves);
      assert(depth === -1 || depth === childDepth, 'ordered-map: leaves at different depths');
      depth = childDepth;
    }
    return depth + 1;
  }
}
