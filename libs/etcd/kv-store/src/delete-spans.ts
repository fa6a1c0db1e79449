import type { ByteString } from './byte-string';
import { successorKey } from './byte-string';

/**
 * A set of half-open key intervals answering "does any interval hold this key?" in O(log n).
 * Intervals are kept merged, disjoint and sorted. This is the point query etcd's checkIntervals
 * asks of its interval tree of txn deletes (pkg/adt, string-affine intervals).
 */
export class DeleteSpans {
  private readonly starts: ByteString[] = [];
  private readonly ends: ByteString[] = [];

  /**
   * Adds a DeleteRange's interval as etcd's checkIntervals builds it: an empty range end is the
   * point [key, key+"\x00"); any other range end is [key, rangeEnd) compared as plain bytes, so a
   * from-key end ("\x00") or an end <= key yields an interval that holds no key. etcd accepts
   * a txn that puts a key its from-key delete covers; so does this.
   */
  addDelete(key: ByteString, rangeEnd: ByteString): void {
    this.add(key, rangeEnd.length === 0 ? successorKey(key) : rangeEnd);
  }

  /** Adds [start, end); an empty or inverted interval holds nothing and is dropped. */
  add(start: ByteString, end: ByteString): void {
    if (!(start < end)) return;
    const starts = this.starts;
    const ends = this.ends;
    // First interval whose end >= start: it or a later one may merge with [start, end).
    let low = 0;
    let high = ends.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (ends[mid]! < start) low = mid + 1;
      else high = mid;
    }
    let last = low;
    let mergedStart = start;
    let mergedEnd = end;
    while (last < starts.length && starts[last]! <= end) {
      if (starts[last]! < mergedStart) mergedStart = starts[last]!;
      if (ends[last]! > mergedEnd) mergedEnd = ends[last]!;
      last++;
    }
    starts.splice(low, last - low, mergedStart);
    ends.splice(low, last - low, mergedEnd);
  }

  /** Adds every interval of `other`. */
  addAll(other: DeleteSpans): void {
    for (let i = 0; i < other.starts.length; i++) this.add(other.starts[i]!, other.ends[i]!);
  }

  /** True when some interval holds `key`. */
  holds(key: ByteString): boolean {
    const starts = this.starts;
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (starts[mid]! <= key) low = mid + 1;
      else high = mid;
    }
    return low > 0 && key < this.ends[low - 1]!;
  }

  get intervalCount(): number {
    return this.starts.length;
  }
}
