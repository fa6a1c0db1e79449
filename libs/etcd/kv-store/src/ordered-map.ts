import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';

// An ordered map from byte strings to values: a B+tree. Leaves hold sorted keys and their values
// and are chained for range scans; inner nodes hold separators (every key of children[i + 1] is
// >= keys[i], every key of children[i] is < keys[i]). Lookups, inserts and deletes cost
// O(log n) node visits plus an O(order) array shift; a scan costs O(log n + keys visited).
//
// Every node also keeps two figures of its subtree (see EntryStats): how many values are
// `counted`, and an upper bound of their `stamp`s. countWhere uses them to count a key range in
// O(log n) node visits where the bound shows the totals apply, instead of visiting every key.

/** What every subtree keeps about its values, for countWhere. */
export interface EntryStats<V> {
  /** Whether a value is counted in its subtrees' totals. */
  counted(value: V): boolean;
  /** A number of the value; each subtree keeps an upper bound of its values' stamps. */
  stamp(value: V): number;
}

/** The default: every value counts, every stamp is 0. */
const COUNT_ALL: EntryStats<unknown> = { counted: () => true, stamp: () => 0 };

interface Leaf<V> {
  readonly leaf: true;
  keys: ByteString[];
  values: V[];
  next: Leaf<V> | null;
  /** Values of this node that `counted` selects. */
  counted: number;
  /** At least every stamp of this node (exact after a restat, an upper bound after deletes). */
  maxStamp: number;
}

interface Inner<V> {
  readonly leaf: false;
  keys: ByteString[];
  children: Node<V>[];
  /** Counted values of the whole subtree. */
  counted: number;
  /** At least every stamp of the subtree. */
  maxStamp: number;
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

/** A leaf whose figures the caller sets (restat) before anyone reads them. */
function newLeaf<V>(keys: ByteString[], values: V[]): Leaf<V> {
  return { leaf: true, keys, values, next: null, counted: 0, maxStamp: 0 };
}

/** An inner node whose figures the caller sets (restat) before anyone reads them. */
function newInner<V>(keys: ByteString[], children: Node<V>[]): Inner<V> {
  return { leaf: false, keys, children, counted: 0, maxStamp: 0 };
}

/** Index of the first child that may hold a key >= `start` (the one `get(start)` descends to). */
function firstChild(keys: readonly ByteString[], start: ByteString | null): number {
  return start === null ? 0 : upperBound(keys, start);
}

/** Index of the last child that may hold a key < `end`. */
function lastChild(keys: readonly ByteString[], end: ByteString | null): number {
  return end === null ? keys.length : lowerBound(keys, end);
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

/** Keys (strictly ascending) and their values, one at a time, then the map (OrderedMap.sortedBuilder). */
export interface SortedMapBuilder<V> {
  add(key: ByteString, value: V): void;
  finish(): OrderedMap<V>;
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
  private readonly stats: EntryStats<V>;

  constructor(order: number = DEFAULT_ORDER, stats: EntryStats<V> = COUNT_ALL) {
    if (!Number.isInteger(order) || order < 4 || order % 2 !== 0) {
      throw new TypeError(`OrderedMap: order must be an even integer >= 4, got ${order}`);
    }
    this.maxEntries = order;
    this.minEntries = order / 2;
    this.stats = stats;
    this.root = newLeaf<V>([], []);
  }

  /** Builds a map from keys in strictly ascending order, in O(n). */
  static fromSorted<V>(keys: ByteString[], values: V[], order: number = DEFAULT_ORDER, stats: EntryStats<V> = COUNT_ALL): OrderedMap<V> {
    assert(keys.length === values.length, 'ordered-map: keys and values differ in length');
    const builder = OrderedMap.sortedBuilder<V>(keys.length, order, stats);
    for (let i = 0; i < keys.length; i++) builder.add(keys[i]!, values[i]!);
    return builder.finish();
  }

  /**
   * Builds a map of `count` keys handed over one at a time in strictly ascending order, a leaf as
   * soon as its keys are in (a decoder builds the index as the keys arrive); `finish` adds the
   * inner levels. The tree is the one fromSorted makes of the same keys.
   */
  static sortedBuilder<V>(count: number, order: number = DEFAULT_ORDER, stats: EntryStats<V> = COUNT_ALL): SortedMapBuilder<V> {
    assert(Number.isSafeInteger(count) && count >= 0, 'ordered-map: the key count must be a non-negative integer');
    const map = new OrderedMap<V>(order, stats);
    const sizes = count === 0 ? [] : evenSizes(count, Math.ceil(count / map.maxEntries));
    const leaves: Leaf<V>[] = [];
    let keys: ByteString[] = [];
    let values: V[] = [];
    let added = 0;
    let previous: ByteString | undefined;
    return {
      add(key, value) {
        if (added === count) throw new TypeError(`OrderedMap.sortedBuilder: more than the ${count} keys announced`);
        if (previous !== undefined && !(previous < key)) throw new TypeError('OrderedMap.fromSorted: keys must be strictly ascending');
        previous = key;
        keys.push(key);
        values.push(value);
        added++;
        if (keys.length < sizes[leaves.length]!) return;
        const leaf = newLeaf(keys, values);
        map.restat(leaf);
        if (leaves.length > 0) leaves[leaves.length - 1]!.next = leaf;
        leaves.push(leaf);
        keys = [];
        values = [];
      },
      finish() {
        if (added !== count) throw new TypeError(`OrderedMap.sortedBuilder: ${added} keys of the ${count} announced`);
        if (count === 0) return map;
        let level: Node<V>[] = leaves;
        while (level.length > 1) level = map.buildInnerLevel(level);
        map.root = level[0]!;
        map.count = count;
        return map;
      },
    };
  }

  private buildInnerLevel(children: Node<V>[]): Inner<V>[] {
    const sizes = evenSizes(children.length, Math.ceil(children.length / this.maxEntries));
    const level: Inner<V>[] = [];
    let offset = 0;
    for (const size of sizes) {
      const group = children.slice(offset, offset + size);
      const node = newInner(group.slice(1).map((child) => minKey(child)), group);
      this.restat(node);
      level.push(node);
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
      const previous = node.values[index]!;
      const value = update(previous);
      node.values[index] = value;
      this.noteChange(node, path, this.countOf(value) - this.countOf(previous), this.stats.stamp(value));
      return value;
    }
    const value = update(undefined);
    node.keys.splice(index, 0, key);
    node.values.splice(index, 0, value);
    this.count += 1;
    this.noteChange(node, path, this.countOf(value), this.stats.stamp(value));
    if (node.keys.length > this.maxEntries) this.splitUpwards(node, path, slots);
    return value;
  }

  private countOf(value: V): number {
    return this.stats.counted(value) ? 1 : 0;
  }

  /** Adds `delta` counted values and a value stamped `stamp` to a leaf and its ancestors. */
  private noteChange(leaf: Leaf<V>, path: readonly Inner<V>[], delta: number, stamp: number): void {
    leaf.counted += delta;
    if (stamp > leaf.maxStamp) leaf.maxStamp = stamp;
    for (const node of path) {
      node.counted += delta;
      if (stamp > node.maxStamp) node.maxStamp = stamp;
    }
  }

  /** Recomputes a node's figures from its values (a leaf) or its children's figures. */
  private restat(node: Node<V>): void {
    let counted = 0;
    let maxStamp = Number.NEGATIVE_INFINITY;
    if (node.leaf) {
      for (const value of node.values) {
        if (this.stats.counted(value)) counted += 1;
        const stamp = this.stats.stamp(value);
        if (stamp > maxStamp) maxStamp = stamp;
      }
    } else {
      for (const child of node.children) {
        counted += child.counted;
        if (child.maxStamp > maxStamp) maxStamp = child.maxStamp;
      }
    }
    node.counted = counted;
    node.maxStamp = maxStamp;
  }

  private splitUpwards(leaf: Leaf<V>, path: Inner<V>[], slots: number[]): void {
    const half = Math.ceil(leaf.keys.length / 2);
    const right = newLeaf(leaf.keys.splice(half), leaf.values.splice(half));
    right.next = leaf.next;
    leaf.next = right;
    this.restat(leaf);
    this.restat(right);
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
      this.restat(parent);
      this.restat(newChild);
    }
    const root = newInner([separator], [this.root, newChild]);
    this.restat(root);
    this.root = root;
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
    const removed = node.values[index]!;
    node.keys.splice(index, 1);
    node.values.splice(index, 1);
    this.count -= 1;
    // The stamp bounds stay: an upper bound that is too high only costs countWhere a descent.
    this.noteChange(node, path, -this.countOf(removed), Number.NEGATIVE_INFINITY);
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
      this.restat(left);
      this.restat(leaf);
    } else if (right !== null && right.keys.length > this.minEntries) {
      leaf.keys.push(right.keys.shift()!);
      leaf.values.push(right.values.shift()!);
      parent.keys[slot] = right.keys[0]!;
      this.restat(right);
      this.restat(leaf);
    } else if (left !== null) {
      for (let i = 0; i < leaf.keys.length; i++) {
        left.keys.push(leaf.keys[i]!);
        left.values.push(leaf.values[i]!);
      }
      left.next = leaf.next;
      parent.keys.splice(slot - 1, 1);
      parent.children.splice(slot, 1);
      this.restat(left);
    } else {
      assert(right !== null, 'ordered-map: a non-root leaf has a sibling');
      for (let i = 0; i < right.keys.length; i++) {
        leaf.keys.push(right.keys[i]!);
        leaf.values.push(right.values[i]!);
      }
      leaf.next = right.next;
      parent.keys.splice(slot, 1);
      parent.children.splice(slot + 1, 1);
      this.restat(leaf);
    }
  }

  private fixInner(node: Inner<V>, parent: Inner<V>, slot: number): void {
    const left = slot > 0 ? (parent.children[slot - 1] as Inner<V>) : null;
    const right = slot + 1 < parent.children.length ? (parent.children[slot + 1] as Inner<V>) : null;
    if (left !== null && left.children.length > this.minEntries) {
      node.children.unshift(left.children.pop()!);
      node.keys.unshift(parent.keys[slot - 1]!);
      parent.keys[slot - 1] = left.keys.pop()!;
      this.restat(left);
      this.restat(node);
    } else if (right !== null && right.children.length > this.minEntries) {
      node.children.push(right.children.shift()!);
      node.keys.push(parent.keys[slot]!);
      parent.keys[slot] = right.keys.shift()!;
      this.restat(right);
      this.restat(node);
    } else if (left !== null) {
      left.keys.push(parent.keys[slot - 1]!, ...node.keys);
      for (const child of node.children) left.children.push(child);
      parent.keys.splice(slot - 1, 1);
      parent.children.splice(slot, 1);
      this.restat(left);
    } else {
      assert(right !== null, 'ordered-map: a non-root inner node has a sibling');
      node.keys.push(parent.keys[slot]!, ...right.keys);
      for (const child of right.children) node.children.push(child);
      parent.keys.splice(slot, 1);
      parent.children.splice(slot + 1, 1);
      this.restat(node);
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
   * Keys are neither added nor removed, so the tree's shape does not change; the figures of every
   * node visited are recomputed.
   */
  scanReplace(start: ByteString, end: ByteString | null, visit: (key: ByteString, value: V) => V): void {
    if (end !== null && end <= start) return;
    this.replaceIn(this.root, start, end, visit);
  }

  /** scanReplace below `node`; `start` / `end` null: the node lies wholly above / below them. */
  private replaceIn(node: Node<V>, start: ByteString | null, end: ByteString | null, visit: (key: ByteString, value: V) => V): void {
    if (node.leaf) {
      const keys = node.keys;
      const values = node.values;
      const to = end === null ? keys.length : lowerBound(keys, end);
      for (let i = start === null ? 0 : lowerBound(keys, start); i < to; i++) values[i] = visit(keys[i]!, values[i]!);
    } else {
      const first = firstChild(node.keys, start);
      const last = lastChild(node.keys, end);
      for (let i = first; i <= last; i++) this.replaceIn(node.children[i]!, i === first ? start : null, i === last ? end : null, visit);
    }
    this.restat(node);
  }

  /**
   * Number of keys in [start, end) (`end` null: to the last key) whose value passes `test`.
   *
   * Where every stamp of a subtree is at most `stampBound`, the subtree's total of `counted`
   * values is taken instead of visiting it: the caller promises that `test` and `counted` agree
   * on any value stamped at most `stampBound`. Costs O(log n) node visits when the bound covers
   * the range, up to O(log n + keys in range) when recent changes reach everywhere.
   */
  countWhere(start: ByteString, end: ByteString | null, stampBound: number, test: (value: V) => boolean): number {
    if (end !== null && end <= start) return 0;
    return this.countIn(this.root, start, end, stampBound, test);
  }

  private countIn(node: Node<V>, start: ByteString | null, end: ByteString | null, bound: number, test: (value: V) => boolean): number {
    if (start === null && end === null && node.maxStamp <= bound) return node.counted;
    if (node.leaf) {
      const values = node.values;
      const to = end === null ? values.length : lowerBound(node.keys, end);
      let total = 0;
      for (let i = start === null ? 0 : lowerBound(node.keys, start); i < to; i++) if (test(values[i]!)) total += 1;
      return total;
    }
    const first = firstChild(node.keys, start);
    const last = lastChild(node.keys, end);
    let total = 0;
    for (let i = first; i <= last; i++) total += this.countIn(node.children[i]!, i === first ? start : null, i === last ? end : null, bound, test);
    return total;
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
    this.checkFigures(node);
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

  /** The node's count is exact and its stamp bound holds. */
  private checkFigures(node: Node<V>): void {
    let counted = 0;
    let maxStamp = Number.NEGATIVE_INFINITY;
    if (node.leaf) {
      for (const value of node.values) {
        if (this.stats.counted(value)) counted += 1;
        maxStamp = Math.max(maxStamp, this.stats.stamp(value));
      }
    } else {
      for (const child of node.children) {
        counted += child.counted;
        maxStamp = Math.max(maxStamp, child.maxStamp);
      }
    }
    assert(node.counted === counted, 'ordered-map: a node miscounts its values');
    assert(node.maxStamp >= maxStamp, 'ordered-map: a stamp above its node bound');
  }
}
