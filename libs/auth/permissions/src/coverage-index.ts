import { compareBytes } from '@ward/shared/bytes';
import { assert } from '@ward/shared/errors';
import { CoverageView } from './coverage-view';
import { SettledView } from './settled-view';

// A multiset of half-open byte-key intervals, kept as a difference map: +1 at each interval's begin,
// -1 at its end (an end at +∞ is left out; nothing lies beyond it). The coverage count of a key is
// the sum of the deltas at or below it, so "is this key covered" is "is that prefix sum > 0", and
// "is [k, e) covered" is "is the smallest prefix sum over [k, e) > 0". The map is an AVL tree whose
// nodes also hold their subtree's delta sum and minimum prefix sum, which makes adding or removing
// an interval and both queries O(log n) in the number of distinct boundaries. Touching intervals
// ([a,b) + [b,c)) cancel at b and cover [a,c) with no gap, as etcd requires.
//
// Tree nodes are scattered objects, so a query walks ~log n cache misses. Once the set stops changing
// the index answers from a CoverageView instead (the merged intervals in flat arrays): it is built
// after enough queries to pay for its O(n) construction and dropped on the next change (the rule of
// SettledView). Either path is O(log n) per query.

interface CoverageNode {
  readonly key: Uint8Array;
  delta: number;
  /** Sum of the deltas in this subtree. */
  sum: number;
  /** Minimum over this subtree's in-order prefix sums (each prefix includes at least one node). */
  minPrefix: number;
  height: number;
  left: CoverageNode | null;
  right: CoverageNode | null;
}

/** A maximal covered interval; `end === null` means +∞. */
export interface CoveredInterval {
  readonly begin: Uint8Array;
  readonly end: Uint8Array | null;
}

function heightOf(node: CoverageNode | null): number {
  return node === null ? 0 : node.height;
}

function sumOf(node: CoverageNode | null): number {
  return node === null ? 0 : node.sum;
}

function minPrefixOf(node: CoverageNode | null): number {
  return node === null ? Number.POSITIVE_INFINITY : node.minPrefix;
}

function refresh(node: CoverageNode): void {
  const { left, right } = node;
  const throughNode = sumOf(left) + node.delta;
  node.height = 1 + Math.max(heightOf(left), heightOf(right));
  node.sum = throughNode + sumOf(right);
  node.minPrefix = Math.min(minPrefixOf(left), throughNode, throughNode + minPrefixOf(right));
}

function rotateRight(node: CoverageNode): CoverageNode {
  const pivot = node.left!;
  node.left = pivot.right;
  pivot.right = node;
  refresh(node);
  refresh(pivot);
  return pivot;
}

function rotateLeft(node: CoverageNode): CoverageNode {
  const pivot = node.right!;
  node.right = pivot.left;
  pivot.left = node;
  refresh(node);
  refresh(pivot);
  return pivot;
}

function rebalance(node: CoverageNode): CoverageNode {
  refresh(node);
  const balance = heightOf(node.left) - heightOf(node.right);
  if (balance > 1) {
    if (heightOf(node.left!.left) < heightOf(node.left!.right)) node.left = rotateLeft(node.left!);
    return rotateRight(node);
  }
  if (balance < -1) {
    if (heightOf(node.right!.right) < heightOf(node.right!.left)) node.right = rotateRight(node.right!);
    return rotateLeft(node);
  }
  return node;
}

function extractMin(node: CoverageNode): { min: CoverageNode; rest: CoverageNode | null } {
  if (node.left === null) return { min: node, rest: node.right };
  const extracted = extractMin(node.left);
  node.left = extracted.rest;
  return { min: extracted.min, rest: rebalance(node) };
}

function removeNode(node: CoverageNode): CoverageNode | null {
  if (node.left === null) return node.right;
  if (node.right === null) return node.left;
  const { min, rest } = extractMin(node.right);
  min.left = node.left;
  min.right = rest;
  return rebalance(min);
}

export class CoverageIndex {
  private root: CoverageNode | null = null;
  private boundaryCount = 0;
  private intervalCount = 0;
  private readonly view = new SettledView(() => new CoverageView(this.mergedIntervals()));

  /** Intervals currently added (with multiplicity). */
  get size(): number {
    return this.intervalCount;
  }

  /** Distinct boundary keys held (the n of the O(log n) bounds). */
  get boundaries(): number {
    return this.boundaryCount;
  }

  /** Adds `[begin, end)` (`end === null`: to +∞). The arrays must not be mutated afterwards. */
  add(begin: Uint8Array, end: Uint8Array | null): void {
    assert(begin.length > 0, 'an interval begins at a non-empty key');
    assert(end === null || compareBytes(begin, end) < 0, 'an interval is not empty');
    this.adjust(begin, 1);
    if (end !== null) this.adjust(end, -1);
    this.intervalCount++;
    this.invalidateView();
  }

  /** Removes one earlier-added copy of `[begin, end)`. */
  remove(begin: Uint8Array, end: Uint8Array | null): void {
    assert(this.intervalCount > 0, 'remove from an empty coverage index');
    this.adjust(begin, -1);
    if (end !== null) this.adjust(end, 1);
    this.intervalCount--;
    this.invalidateView();
  }

  /** True when some interval contains `key`. The empty key is never covered. */
  coversKey(key: Uint8Array): boolean {
    const view = this.currentView();
    if (view !== null) return view.coversKey(key);
    return key.length > 0 && this.countAt(key) > 0;
  }

  /**
   * True when the intervals cover every key of `[key, end)` (`end === null`: to +∞) with no gap.
   * An empty or inverted range (end ≤ key) asks for `key` alone: etcd's interval tree treats an
   * interval containing `key` as overlapping it and reports it covered.
   */
  coversRange(key: Uint8Array, end: Uint8Array | null): boolean {
    const view = this.currentView();
    if (view !== null) return view.coversRange(key, end);
    if (key.length === 0 || this.countAt(key) <= 0) return false;
    if (end !== null && compareBytes(end, key) <= 0) return true;
    return this.minCountBetween(this.root, 0, key, end, true, end !== null) > 0;
  }

  /** The covered set as maximal disjoint intervals, in key order (for diagnostics and tests). */
  mergedIntervals(): CoveredInterval[] {
    const out: CoveredInterval[] = [];
    let count = 0;
    let openBegin: Uint8Array | null = null;
    this.forEachNode((node) => {
      const before = count;
      count += node.delta;
      assert(count >= 0, 'coverage count never drops below zero');
      if (before === 0 && count > 0) openBegin = node.key;
      if (before > 0 && count === 0) {
        out.push({ begin: openBegin!, end: node.key });
        openBegin = null;
      }
    });
    if (openBegin !== null) out.push({ begin: openBegin, end: null });
    return out;
  }

  /** Asserts the tree's order, balance and aggregates (tests and snapshot restore call this). */
  checkInvariants(): void {
    let previous: Uint8Array | null = null;
    let nodes = 0;
    this.forEachNode((node) => {
      assert(node.delta !== 0, 'no node holds a zero delta');
      assert(previous === null || compareBytes(previous, node.key) < 0, 'keys strictly ascend');
      previous = node.key;
      nodes++;
    });
    assert(nodes === this.boundaryCount, 'boundary count matches the tree');
    checkSubtree(this.root);
    assert(minPrefixOf(this.root) >= 0 || this.root === null, 'coverage never negative');
  }

  /** Whether queries are being answered from the flat view (for tests and diagnostics). */
  get hasView(): boolean {
    return this.view.built;
  }

  private invalidateView(): void {
    this.view.drop();
  }

  /** The flat view, built once enough tree queries have run since the last change to pay for it. */
  private currentView(): CoverageView | null {
    return this.view.current(this.boundaryCount);
  }

  private countAt(key: Uint8Array): number {
    let count = 0;
    let node = this.root;
    while (node !== null) {
      const order = compareBytes(key, node.key);
      if (order < 0) {
        node = node.left;
        continue;
      }
      count += sumOf(node.left) + node.delta;
      if (order === 0) break;
      node = node.right;
    }
    return count;
  }

  /**
   * The smallest prefix sum at a boundary strictly between `low` and `high` (`high === null`: +∞),
   * or +∞ when there is none. `offset` is the delta sum of everything left of `node`'s subtree;
   * `needLow`/`needHigh` say whether the subtree may still hold keys outside the bounds.
   */
  private minCountBetween(
    node: CoverageNode | null,
    offset: number,
    low: Uint8Array,
    high: Uint8Array | null,
    needLow: boolean,
    needHigh: boolean,
  ): number {
    if (node === null) return Number.POSITIVE_INFINITY;
    if (!needLow && !needHigh) return offset + node.minPrefix;
    const throughNode = offset + sumOf(node.left) + node.delta;
    if (needLow && compareBytes(node.key, low) <= 0) {
      return this.minCountBetween(node.right, throughNode, low, high, needLow, needHigh);
    }
    if (needHigh && compareBytes(node.key, high!) >= 0) {
      return this.minCountBetween(node.left, offset, low, high, needLow, needHigh);
    }
    const leftMin = this.minCountBetween(node.left, offset, low, high, needLow, false);
    const rightMin = this.minCountBetween(node.right, throughNode, low, high, false, needHigh);
    return Math.min(leftMin, throughNode, rightMin);
  }

  private adjust(key: Uint8Array, change: number): void {
    this.root = this.adjustNode(this.root, key, change);
  }

  private adjustNode(node: CoverageNode | null, key: Uint8Array, change: number): CoverageNode | null {
    if (node === null) {
      this.boundaryCount++;
      return { key, delta: change, sum: change, minPrefix: change, height: 1, left: null, right: null };
    }
    const order = compareBytes(key, node.key);
    if (order === 0) {
      node.delta += change;
      if (node.delta !== 0) {
        refresh(node);
        return node;
      }
      this.boundaryCount--;
      return removeNode(node);
    }
    if (order < 0) node.left = this.adjustNode(node.left, key, change);
    else node.right = this.adjustNode(node.right, key, change);
    return rebalance(node);
  }

  private forEachNode(visit: (node: CoverageNode) => void): void {
    const stack: CoverageNode[] = [];
    let node = this.root;
    while (node !== null || stack.length > 0) {
      while (node !== null) {
        stack.push(node);
        node = node.left;
      }
      const next = stack.pop()!;
      visit(next);
      node = next.right;
    }
  }
}

function checkSubtree(node: CoverageNode | null): void {
  if (node === null) return;
  checkSubtree(node.left);
  checkSubtree(node.right);
  const { height, sum, minPrefix } = node;
  refresh(node);
  assert(node.height === height && node.sum === sum && node.minPrefix === minPrefix, 'aggregates are current');
  assert(Math.abs(heightOf(node.left) - heightOf(node.right)) <= 1, 'AVL balance holds');
}
