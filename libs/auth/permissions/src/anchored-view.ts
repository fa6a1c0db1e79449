import { assert } from '@ward/shared/errors';
import type { CoveredInterval } from './coverage-index';
import { FNV_OFFSET, fnvStep } from './key-table';

// A read-optimized, immutable copy of a covered set (its maximal disjoint intervals) that finds the
// interval containing a key by hashing instead of searching. Every key of a finite interval
// [begin, end) starts with the longest common prefix of begin and end, its "anchor": the anchor of
// [/data/7/a, /data/7/m) is /data/7/, of a single key k = [k, k\0) it is k, of a prefix grant
// [/data/7/, /data/70) it is /data/7. So the intervals are grouped in an open-addressing table by
// anchor, and a key is looked up by each of its prefixes whose length some anchor has: one
// incremental FNV-1a pass over the key, one probe per distinct anchor length, then a search among
// the intervals sharing that anchor (a scan: at most MAX_BUCKET_INTERVALS). The cost does not grow with the number of intervals, only with
// the number of distinct anchor lengths and the size of a bucket, which the build caps
// (MAX_ANCHOR_LENGTHS, MAX_BUCKET_INTERVALS; past them it refuses and the caller keeps its O(log n)
// index). An interval open to +∞ (only ever the last one) has no anchor and is kept as its begin.
// The intervals being maximal, a range is covered exactly when the interval holding its first key
// reaches its end.
//
// Layout, for few and dense cache lines per lookup (the working set of a check over thousands of
// grants should stay in the core's L2 cache): the common prefix of all finite intervals is held once
// and compared first (every key they hold starts with it), so only anchor bytes after it are hashed
// and stored. Slots are two Int32s, [hash, record offset + 1 (0 marks an empty slot)]; a bucket's
// record in one byte arena is its interval count (u8), anchor length (u16), each interval's begin
// and end tail lengths (u16 each: the bytes after the anchor), the anchor bytes after the common
// prefix, then each interval's begin and end tails, ascending. A lookup reads one slot line and one
// record (14 bytes for [/data/00000007/a, /data/00000007/m) among 10,000 such grants).

/** Past this many distinct anchor lengths a lookup would probe too often: the view is refused. */
export const MAX_ANCHOR_LENGTHS = 16;
/** Past this many intervals under one anchor a lookup would search too long: the view is refused. */
export const MAX_BUCKET_INTERVALS = 64;
/** Record lengths are u16: an anchor or tail longer than this refuses the view. */
export const MAX_STORED_LENGTH = 0xffff;

const FOUND = 0;
const NONE = -1;
const OPEN = -2;
/** searchRecord: the slot's hash matched but its anchor is another one. */
const OTHER_ANCHOR = -3;

function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const length = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < length && a[i] === b[i]) i++;
  return i;
}

/** Compares bytes[offset, offset + length) with key[from, key.length). */
function compareTail(bytes: Uint8Array, offset: number, length: number, key: Uint8Array, from: number): number {
  const keyLength = key.length - from;
  const shorter = length < keyLength ? length : keyLength;
  for (let i = 0; i < shorter; i++) {
    const a = bytes[offset + i]!;
    const b = key[from + i]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return length - keyLength;
}

/** bytes[offset, offset + to - from) equals key[from, to). */
function sameBytes(bytes: Uint8Array, offset: number, key: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[offset++] !== key[i]) return false;
  return true;
}

/** FNV-1a over bytes[from, to). */
function hashRange(bytes: Uint8Array, from: number, to: number): number {
  let hash = FNV_OFFSET;
  for (let i = from; i < to; i++) hash = fnvStep(hash, bytes[i]!);
  return hash;
}

/** Copies from[start, stop) to `to` at `at` (small copies: a loop beats subarray + set); returns the next offset. */
function copyBytes(from: Uint8Array, start: number, stop: number, to: Uint8Array, at: number): number {
  for (let i = start; i < stop; i++) to[at++] = from[i]!;
  return at;
}

function writeU16(bytes: Uint8Array, offset: number, value: number): void {
  bytes[offset] = value & 0xff;
  bytes[offset + 1] = value >>> 8;
}

export class AnchoredView {
  /** Where the last locate found its interval: anchor length, and its end tail's offset and length. */
  private locatedAnchor = 0;
  private locatedEndOffset = 0;
  private locatedEndLength = 0;

  private constructor(
    /** The common prefix of every finite interval's keys. */
    private readonly prefix: Uint8Array,
    private readonly slots: Int32Array,
    private readonly records: Uint8Array,
    private readonly lengths: Int32Array,
    private readonly openBegin: Uint8Array | null,
  ) {}

  /**
   * The view of `intervals` (disjoint, non-touching, ascending: CoverageIndex.mergedIntervals), or
   * null when it would pass MAX_ANCHOR_LENGTHS, MAX_BUCKET_INTERVALS or MAX_STORED_LENGTH. O(n)
   * expected time.
   */
  static build(intervals: readonly CoveredInterval[]): AnchoredView | null {
    let finite = intervals.length;
    let openBegin: Uint8Array | null = null;
    if (finite > 0 && intervals[finite - 1]!.end === null) {
      openBegin = intervals[finite - 1]!.begin;
      finite--;
    }
    // Every key between the first begin and the last end starts with their common prefix: it is
    // compared once per lookup, and only the anchor bytes after it are hashed and stored.
    const common = finite === 0 ? 0 : commonPrefixLength(intervals[0]!.begin, intervals[finite - 1]!.end!);
    const prefix = finite === 0 ? new Uint8Array(0) : intervals[0]!.begin.slice(0, common);
    const anchorLengths = new Int32Array(finite);
    const distinct = new Set<number>();
    for (let i = 0; i < finite; i++) {
      const { begin, end } = intervals[i]!;
      assert(end !== null, 'only the last interval is open-ended');
      const anchor = commonPrefixLength(begin, end);
      if (anchor > MAX_STORED_LENGTH || begin.length - anchor > MAX_STORED_LENGTH || end.length - anchor > MAX_STORED_LENGTH) return null;
      anchorLengths[i] = anchor;
      distinct.add(anchor);
      if (distinct.size > MAX_ANCHOR_LENGTHS) return null;
    }
    // Group by anchor in a scratch table: per bucket its hash, anchor length, first interval, count.
    let scratchCapacity = 8;
    while (scratchCapacity < finite * 2) scratchCapacity *= 2;
    const scratchMask = scratchCapacity - 1;
    const bucketAt = new Int32Array(scratchCapacity).fill(-1);
    const bucketHash = new Int32Array(finite);
    const bucketFirst = new Int32Array(finite);
    const bucketCount = new Int32Array(finite);
    const bucketOf = new Int32Array(finite);
    const tailBytes = new Float64Array(finite);
    let buckets = 0;
    for (let i = 0; i < finite; i++) {
      const begin = intervals[i]!.begin;
      const anchor = anchorLengths[i]!;
      const hash = hashRange(begin, common, anchor) | 0;
      let at = hash & scratchMask;
      let bucket = -1;
      for (; bucketAt[at] !== -1; at = (at + 1) & scratchMask) {
        const b = bucketAt[at]!;
        const first = bucketFirst[b]!;
        if (bucketHash[b] === hash && anchorLengths[first] === anchor && commonPrefixLength(intervals[first]!.begin, begin) >= anchor) {
          bucket = b;
          break;
        }
      }
      if (bucket < 0) {
        bucket = buckets++;
        bucketAt[at] = bucket;
        bucketHash[bucket] = hash;
        bucketFirst[bucket] = i;
      }
      if (++bucketCount[bucket]! > MAX_BUCKET_INTERVALS) return null;
      bucketOf[i] = bucket;
      tailBytes[bucket] = tailBytes[bucket]! + begin.length + intervals[i]!.end!.length - 2 * anchor;
    }
    // Records: sizes, then offsets, then contents; intervals arrive in ascending order.
    const recordOffset = new Int32Array(buckets);
    const written = new Int32Array(buckets); // intervals written so far, per bucket
    const tailCursor = new Int32Array(buckets);
    let size = 0;
    for (let b = 0; b < buckets; b++) {
      recordOffset[b] = size;
      const anchor = anchorLengths[bucketFirst[b]!]!;
      size += 3 + 4 * bucketCount[b]! + anchor - common;
      tailCursor[b] = size;
      size += tailBytes[b]!;
    }
    const records = new Uint8Array(size);
    for (let b = 0; b < buckets; b++) {
      const offset = recordOffset[b]!;
      const first = intervals[bucketFirst[b]!]!.begin;
      const anchor = anchorLengths[bucketFirst[b]!]!;
      records[offset] = bucketCount[b]!;
      writeU16(records, offset + 1, anchor);
      copyBytes(first, common, anchor, records, offset + 3 + 4 * bucketCount[b]!);
    }
    for (let i = 0; i < finite; i++) {
      const b = bucketOf[i]!;
      const { begin, end } = intervals[i]!;
      const anchor = anchorLengths[i]!;
      const lengthAt = recordOffset[b]! + 3 + 4 * written[b]!++;
      writeU16(records, lengthAt, begin.length - anchor);
      writeU16(records, lengthAt + 2, end!.length - anchor);
      let cursor = tailCursor[b]!;
      cursor = copyBytes(begin, anchor, begin.length, records, cursor);
      tailCursor[b] = copyBytes(end!, anchor, end!.length, records, cursor);
    }
    // The lookup table: at most 0.7 full.
    let capacity = 8;
    while (capacity * 7 < buckets * 10) capacity *= 2;
    const mask = capacity - 1;
    const slots = new Int32Array(capacity * 2);
    for (let b = 0; b < buckets; b++) {
      let at = bucketHash[b]! & mask;
      while (slots[at * 2 + 1] !== 0) at = (at + 1) & mask;
      slots[at * 2] = bucketHash[b]!;
      slots[at * 2 + 1] = recordOffset[b]! + 1;
    }
    return new AnchoredView(prefix, slots, records, Int32Array.from(distinct).sort(), openBegin);
  }

  /**
   * etcd's check of `[key, rangeEnd)`: a single key when `rangeEnd` is empty, to +∞ when it is 0x00;
   * an inverted range (end ≤ key) is decided by its key alone. The empty key is never covered.
   */
  permits(key: Uint8Array, rangeEnd: Uint8Array): boolean {
    if (key.length === 0) return false;
    const at = this.locate(key);
    if (at === NONE) return false;
    if (rangeEnd.length === 0 || at === OPEN) return true;
    if (rangeEnd.length === 1 && rangeEnd[0] === 0) return false;
    // Covered when the interval's end (the key's first `anchor` bytes, then the end tail) is at or
    // above rangeEnd; an inverted range (rangeEnd ≤ key, so below that end) passes the same test.
    const anchor = this.locatedAnchor;
    const shorter = anchor < rangeEnd.length ? anchor : rangeEnd.length;
    for (let i = 0; i < shorter; i++) if (rangeEnd[i] !== key[i]) return rangeEnd[i]! < key[i]!;
    if (rangeEnd.length < anchor) return true;
    return compareTail(this.records, this.locatedEndOffset, this.locatedEndLength, rangeEnd, anchor) >= 0;
  }

  /** Finds the interval holding the non-empty `key`: FOUND (and sets located*), OPEN or NONE. */
  private locate(key: Uint8Array): number {
    const { lengths, slots } = this;
    const mask = (slots.length >> 1) - 1;
    let hash = FNV_OFFSET;
    const prefix = this.prefix;
    const common = prefix.length;
    let hashed = common;
    const finiteMayHold = key.length >= common && sameBytes(prefix, 0, key, 0, common);
    for (let l = 0; finiteMayHold && l < lengths.length; l++) {
      const anchor = lengths[l]!;
      if (anchor > key.length) break;
      for (; hashed < anchor; hashed++) hash = fnvStep(hash, key[hashed]!);
      for (let at = hash & mask; ; at = (at + 1) & mask) {
        const record = slots[at * 2 + 1]! - 1;
        if (record < 0) break;
        if (slots[at * 2] !== (hash | 0)) continue;
        const found = this.searchRecord(record, key, anchor);
        if (found === FOUND) return FOUND;
        if (found === NONE) break; // the anchor matched: no other slot holds it
        // OTHER_ANCHOR: keep probing.
      }
    }
    const open = this.openBegin;
    if (open !== null && compareTail(open, 0, open.length, key, 0) <= 0) return OPEN;
    return NONE;
  }

  /**
   * The record's interval holding `key` when its anchor is key[0, anchor): FOUND or NONE;
   * OTHER_ANCHOR when the record's anchor differs.
   */
  private searchRecord(record: number, key: Uint8Array, anchor: number): number {
    const bytes = this.records;
    if ((bytes[record + 1]! | (bytes[record + 2]! << 8)) !== anchor) return OTHER_ANCHOR;
    const count = bytes[record]!;
    let length = record + 3;
    const anchorAt = length + 4 * count;
    const common = this.prefix.length;
    if (!sameBytes(bytes, anchorAt, key, common, anchor)) return OTHER_ANCHOR;
    // The last interval beginning at or before the key: tails ascend, so scan until one is above.
    let tail = anchorAt + anchor - common;
    let endAt = -1;
    let endLength = 0;
    for (let j = 0; j < count; j++, length += 4) {
      const beginLength = bytes[length]! | (bytes[length + 1]! << 8);
      if (compareTail(bytes, tail, beginLength, key, anchor) > 0) break;
      endAt = tail + beginLength;
      endLength = bytes[length + 2]! | (bytes[length + 3]! << 8);
      tail = endAt + endLength;
    }
    if (endAt < 0 || compareTail(bytes, endAt, endLength, key, anchor) <= 0) return NONE;
    this.locatedAnchor = anchor;
    this.locatedEndOffset = endAt;
    this.locatedEndLength = endLength;
    return FOUND;
  }
}
