import { compareBytes } from '@ward/shared/bytes';
import { assert } from '@ward/shared/errors';
import type { CoveredInterval } from './coverage-index';

// A read-optimized, immutable copy of a covered set: its maximal disjoint intervals in flat arrays.
// Every boundary shares the set's longest common prefix, so a key is compared first against that
// prefix once, then by a "head": the next six bytes after the prefix as one exact number (base 257,
// 0 marking the end of the key, so shorter keys order first, as byte order requires). Binary search
// runs over a contiguous Float64Array of heads and only falls back to byte comparison on equal
// heads. This keeps a check within a few cache lines even for 100,000 intervals.

const HEAD_BYTES = 6;
const HEAD_BASE = 257;

function headOf(key: Uint8Array, offset: number): number {
  let head = 0;
  for (let i = offset; i < offset + HEAD_BYTES; i++) head = head * HEAD_BASE + (i < key.length ? key[i]! + 1 : 0);
  return head;
}

/** Compares two keys known to agree on their first `offset` bytes. */
function compareFrom(a: Uint8Array, b: Uint8Array, offset: number): number {
  const length = a.length < b.length ? a.length : b.length;
  for (let i = offset; i < length; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const length = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < length && a[i] === b[i]) i++;
  return i;
}

export class CoverageView {
  private readonly begins: Uint8Array[];
  private readonly ends: Array<Uint8Array | null>;
  private readonly beginHeads: Float64Array;
  private readonly endHeads: Float64Array;
  private readonly prefix: Uint8Array;

  /** `intervals` must be disjoint, non-touching and ascending (CoverageIndex.mergedIntervals). */
  constructor(intervals: readonly CoveredInterval[]) {
    const count = intervals.length;
    this.begins = intervals.map((i) => i.begin);
    this.ends = intervals.map((i) => i.end);
    this.beginHeads = new Float64Array(count);
    this.endHeads = new Float64Array(count);
    if (count === 0) {
      this.prefix = new Uint8Array(0);
      return;
    }
    const last = this.ends[count - 1] ?? this.begins[count - 1]!;
    assert(compareBytes(this.begins[0]!, last) <= 0, 'intervals ascend');
    this.prefix = this.begins[0]!.slice(0, commonPrefixLength(this.begins[0]!, last));
    for (let i = 0; i < count; i++) {
      this.beginHeads[i] = headOf(this.begins[i]!, this.prefix.length);
      const end = this.ends[i]!;
      this.endHeads[i] = end === null ? Number.POSITIVE_INFINITY : headOf(end, this.prefix.length);
    }
  }

  get size(): number {
    return this.begins.length;
  }

  /** True when some interval contains `key` (the empty key never). */
  coversKey(key: Uint8Array): boolean {
    const count = this.begins.length;
    if (key.length === 0 || count === 0) return false;
    const order = this.prefixOrder(key);
    if (order !== 0) return order > 0 && this.ends[count - 1] === null;
    const head = headOf(key, this.prefix.length);
    const at = this.locate(key, head);
    return at >= 0 && this.isBeforeEnd(key, head, at);
  }

  /** True when `[key, end)` (`end === null`: +∞) lies inside one interval; end ≤ key asks for key. */
  coversRange(key: Uint8Array, end: Uint8Array | null): boolean {
    const count = this.begins.length;
    if (key.length === 0 || count === 0) return false;
    const order = this.prefixOrder(key);
    if (order !== 0) return order > 0 && this.ends[count - 1] === null;
    const head = headOf(key, this.prefix.length);
    const at = this.locate(key, head);
    if (at < 0 || !this.isBeforeEnd(key, head, at)) return false;
    const coveredEnd = this.ends[at]!;
    if (coveredEnd === null) return true;
    if (end === null) return false;
    return compareBytes(end, coveredEnd) <= 0 || compareBytes(end, key) <= 0;
  }

  /** -1: `key` sorts before every boundary; 1: after every one; 0: it starts with the common prefix. */
  private prefixOrder(key: Uint8Array): -1 | 0 | 1 {
    const prefix = this.prefix;
    for (let i = 0; i < prefix.length; i++) {
      if (i >= key.length || key[i]! < prefix[i]!) return -1;
      if (key[i]! > prefix[i]!) return 1;
    }
    return 0;
  }

  /** Index of the last interval beginning at or before `key` (which has the common prefix), or -1. */
  private locate(key: Uint8Array, head: number): number {
    const heads = this.beginHeads;
    const tailOffset = this.prefix.length + HEAD_BYTES;
    let low = 0;
    let high = this.begins.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const h = heads[middle]!;
      if (h < head || (h === head && compareFrom(this.begins[middle]!, key, tailOffset) <= 0)) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    return found;
  }

  private isBeforeEnd(key: Uint8Array, head: number, at: number): boolean {
    const end = this.ends[at]!;
    if (end === null) return true;
    const endHead = this.endHeads[at]!;
    if (head !== endHead) return head < endHead;
    return compareFrom(key, end, this.prefix.length + HEAD_BYTES) < 0;
  }
}
