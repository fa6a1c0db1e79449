import { assert } from '@ward/shared/errors';
import type { CoveredInterval } from './coverage-index';
import { FNV_OFFSET, fnvHash, fnvStep } from './key-table';

// A read-optimized, immutable copy of a covered set (its maximal disjoint intervals) that finds the
// interval containing a key by hashing instead of searching. Every key of a finite interval
// [begin, end) starts with the longest common prefix of begin and end, its "anchor": the anchor of
// [/data/7/a, /data/7/m) is /data/7/, of a single key k = [k, k\0) it is k, of a prefix grant
// [/data/7/, /data/70) it is /data/7. So the intervals are grouped in an open-addressing table by
// anchor, and a key is looked up by each of its prefixes whose length some anchor has: one
// incremental FNV-1a pass over the key, one probe per distinct anchor length, then a search among
// the intervals sharing that anchor. The cost does not grow with the number of intervals, only with
// the number of distinct anchor lengths and the size of a bucket, which the build caps
// (MAX_ANCHOR_LENGTHS, MAX_BUCKET_INTERVALS; past them it refuses and the caller keeps its O(log n)
// index). An interval open to +∞ (only ever the last one) has no anchor and is kept as its begin.
// The intervals being maximal, a range is covered exactly when the interval holding its first key
// reaches its end.
//
// Layout, for two cache lines per lookup: a slot is 32 bytes, [hash, interval count (0 marks an
// empty slot), anchor length, anchor offset, first interval, its begin and end tail lengths]; the
// arena holds per bucket the anchor bytes, then each interval's begin and end after the anchor
// ("tails"), so a one-interval bucket is answered from its slot and one arena run. Larger buckets
// search their intervals' [tail offset, begin tail length, end tail length] in `meta`.

/** Past this many distinct anchor lengths a lookup would probe too often: the view is refused. */
export const MAX_ANCHOR_LENGTHS = 16;
/** Past this many intervals under one anchor a lookup would search too long: the view is refused. */
export const MAX_BUCKET_INTERVALS = 64;

const STRIDE = 8;
const HASH = 0;
const COUNT = 1;
const ANCHOR_LENGTH = 2;
const ANCHOR_OFFSET = 3;
const FIRST = 4;
const BEGIN_TAIL = 5;
const END_TAIL = 6;
const META = 3;

/** locate's answers besides an interval index: no interval / the open-ended one holds the key. */
const NONE = -1;
const OPEN = -2;

function commonPrefixLength(a: Uint8Array, b: Uint8Array): number {
  const length = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < length && a[i] === b[i]) i++;
  return i;
}

/** Compares arena[offset, offset + length) with key[from, key.length). */
function compareTail(arena: Uint8Array, offset: number, length: number, key: Uint8Array, from: number): number {
  const keyLength = key.length - from;
  const shorter = length < keyLength ? length : keyLength;
  for (let i = 0; i < shorter; i++) {
    const a = arena[offset + i]!;
    const b = key[from + i]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return length - keyLength;
}

/** arena[offset, offset + length) equals key[0, length). */
function sameStart(arena: Uint8Array, offset: number, key: Uint8Array, length: number): boolean {
  for (let i = 0; i < length; i++) if (arena[offset + i] !== key[i]) return false;
  return true;
}

export class AnchoredView {
  private constructor(
    private readonly slots: Int32Array,
    private readonly lengths: Int32Array,
    private readonly meta: Int32Array,
    private readonly arena: Uint8Array,
    private readonly openBegin: Uint8Array | null,
  ) {}

  /** The anchor length of the bucket where the last locate found its interval. */
  private locatedAnchor = 0;

  /**
   * The view of `intervals` (disjoint, non-touching, ascending: CoverageIndex.mergedIntervals), or
   * null when it would pass MAX_ANCHOR_LENGTHS or MAX_BUCKET_INTERVALS. O(n) expected time.
   */
  static build(intervals: readonly CoveredInterval[]): AnchoredView | null {
    let finite = intervals.length;
    let openBegin: Uint8Array | null = null;
    if (finite > 0 && intervals[finite - 1]!.end === null) {
      openBegin = intervals[finite - 1]!.begin;
      finite--;
    }
    const anchorLengths = new Int32Array(finite);
    const distinct = new Set<number>();
    for (let i = 0; i < finite; i++) {
      const { begin, end } = intervals[i]!;
      assert(end !== null, 'only the last interval is open-ended');
      anchorLengths[i] = commonPrefixLength(begin, end);
      distinct.add(anchorLengths[i]!);
      if (distinct.size > MAX_ANCHOR_LENGTHS) return null;
    }
    // Buckets: one slot per distinct anchor, at most 0.7 full. FIRST temporarily holds the index
    // (into `intervals`) of the bucket's first interval.
    let capacity = 8;
    while (capacity * 7 < finite * 10) capacity *= 2;
    const mask = capacity - 1;
    const slots = new Int32Array(capacity * STRIDE);
    const slotOf = new Int32Array(finite);
    for (let i = 0; i < finite; i++) {
      const begin = intervals[i]!.begin;
      const anchor = anchorLengths[i]!;
      const hash = fnvHash(begin, anchor) | 0;
      let at = hash & mask;
      for (; slots[at * STRIDE + COUNT] !== 0; at = (at + 1) & mask) {
        const base = at * STRIDE;
        if (slots[base + HASH] !== hash || slots[base + ANCHOR_LENGTH] !== anchor) continue;
        if (commonPrefixLength(intervals[slots[base + FIRST]!]!.begin, begin) >= anchor) break;
      }
      const base = at * STRIDE;
      if (slots[base + COUNT] === 0) {
        slots[base + HASH] = hash;
        slots[base + FIRST] = i;
        slots[base + ANCHOR_LENGTH] = anchor;
      }
      if (++slots[base + COUNT]! > MAX_BUCKET_INTERVALS) return null;
      slotOf[i] = at;
    }
    // Lay the buckets out one after the other, each in ascending order, anchor first.
    const cursor = new Int32Array(capacity);
    let placed = 0;
    let arenaBytes = 0;
    for (let at = 0; at < capacity; at++) {
      const base = at * STRIDE;
      if (slots[base + COUNT] === 0) continue;
      arenaBytes += slots[base + ANCHOR_LENGTH]!;
      slots[base + FIRST] = placed;
      cursor[at] = placed;
      placed += slots[base + COUNT]!;
    }
    const order = new Int32Array(finite);
    for (let i = 0; i < finite; i++) {
      order[cursor[slotOf[i]!]!++] = i;
      arenaBytes += intervals[i]!.begin.length + intervals[i]!.end!.length - 2 * anchorLengths[i]!;
    }
    const meta = new Int32Array(finite * META);
    const arena = new Uint8Array(arenaBytes);
    let offset = 0;
    for (let at = 0; at < capacity; at++) {
      const base = at * STRIDE;
      const count = slots[base + COUNT]!;
      if (count === 0) continue;
      const first = slots[base + FIRST]!;
      const anchor = slots[base + ANCHOR_LENGTH]!;
      slots[base + ANCHOR_OFFSET] = offset;
      arena.set(intervals[order[first]!]!.begin.subarray(0, anchor), offset);
      offset += anchor;
      for (let p = first; p < first + count; p++) {
        const { begin, end } = intervals[order[p]!]!;
        meta[p * META] = offset;
        meta[p * META + 1] = begin.length - anchor;
        meta[p * META + 2] = end!.length - anchor;
        arena.set(begin.subarray(anchor), offset);
        offset += begin.length - anchor;
        arena.set(end!.subarray(anchor), offset);
        offset += end!.length - anchor;
      }
      slots[base + BEGIN_TAIL] = meta[first * META + 1]!;
      slots[base + END_TAIL] = meta[first * META + 2]!;
    }
    const lengths = Int32Array.from(distinct).sort();
    return new AnchoredView(slots, lengths, meta, arena, openBegin);
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
    const meta = this.meta;
    return compareTail(this.arena, meta[at * META]! + meta[at * META + 1]!, meta[at * META + 2]!, rangeEnd, anchor) >= 0;
  }

  /** The interval holding the non-empty `key`: its index, OPEN or NONE. */
  private locate(key: Uint8Array): number {
    const { lengths, slots, arena } = this;
    const mask = slots.length / STRIDE - 1;
    let hash = FNV_OFFSET;
    let hashed = 0;
    for (let l = 0; l < lengths.length; l++) {
      const anchor = lengths[l]!;
      if (anchor > key.length) break;
      for (; hashed < anchor; hashed++) hash = fnvStep(hash, key[hashed]!);
      for (let at = hash & mask; ; at = (at + 1) & mask) {
        const base = at * STRIDE;
        const count = slots[base + COUNT]!;
        if (count === 0) break;
        if (slots[base + HASH] !== (hash | 0) || slots[base + ANCHOR_LENGTH] !== anchor) continue;
        const anchorOffset = slots[base + ANCHOR_OFFSET]!;
        if (!sameStart(arena, anchorOffset, key, anchor)) continue;
        const found = count === 1 ? this.holderOfOne(base, anchorOffset + anchor, key, anchor) : this.holderAmong(slots[base + FIRST]!, count, key, anchor);
        if (found !== NONE) {
          this.locatedAnchor = anchor;
          return found;
        }
        break;
      }
    }
    const open = this.openBegin;
    if (open !== null && compareTail(open, 0, open.length, key, 0) <= 0) return OPEN;
    return NONE;
  }

  /** The bucket's single interval if it holds `key`, from the slot alone and its arena run. */
  private holderOfOne(base: number, tails: number, key: Uint8Array, anchor: number): number {
    const slots = this.slots;
    const beginTail = slots[base + BEGIN_TAIL]!;
    if (compareTail(this.arena, tails, beginTail, key, anchor) > 0) return NONE;
    return compareTail(this.arena, tails + beginTail, slots[base + END_TAIL]!, key, anchor) > 0 ? slots[base + FIRST]! : NONE;
  }

  /** The interval among `count` from `first` (ascending) that holds `key`, by binary search. */
  private holderAmong(first: number, count: number, key: Uint8Array, anchor: number): number {
    const { meta, arena } = this;
    let low = first;
    let high = first + count - 1;
    let found = NONE;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (compareTail(arena, meta[middle * META]!, meta[middle * META + 1]!, key, anchor) <= 0) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    if (found === NONE) return NONE;
    const endTail = meta[found * META]! + meta[found * META + 1]!;
    return compareTail(arena, endTail, meta[found * META + 2]!, key, anchor) > 0 ? found : NONE;
  }
}
