import { compareBytes, equalBytes, prefixRangeEnd } from '@ward/shared/bytes';
import { AnchoredView } from './anchored-view';
import { CoverageIndex } from './coverage-index';
import { FNV_OFFSET, KeyTable, fnvStep } from './key-table';
import { isOpenEnded, permissionInterval, type Permission } from './permission';
import { SettledView } from './settled-view';

// One user's ranges for one access type (READ or WRITE). The CoverageIndex over every grant answers
// any question in O(log n). Most grants are single keys or prefixes (etcdctl's default and
// --prefix), and for those a hash lookup per distinct prefix length answers "is this key granted"
// and "is this range inside one prefix" in time independent of how many grants the user holds:
//
//   exact    single-key grants, looked up by the whole key;
//   prefixes grants [p, prefixEnd(p)), looked up by each prefix of the key whose length some grant
//            has (one incremental hash pass over the key);
//   other    every other grant, in its own CoverageIndex (empty for most users).
//
// A key is covered iff one of the three covers it (coverage is a union). A range not inside one
// prefix grant goes to the full index, which sees grants of every class together.
//
// Once the set settles (SettledView's rule, as for the CoverageIndex's own view), every check is
// answered by an AnchoredView of the full index's merged intervals instead: hash probes by anchor
// length, one bucket, exact for keys and ranges alike, in time independent of the number of
// grants. A set whose anchors the view refuses (too many lengths, too full a bucket) keeps the
// tiers above.

/** True for a grant of exactly the keys starting with `key` (etcd's --prefix). */
function isPrefixGrant(permission: Permission): boolean {
  return permission.rangeEnd.length > 0 && equalBytes(permission.rangeEnd, prefixRangeEnd(permission.key));
}

/**
 * For `end` > `key` and p = key[0..length): is end ≤ prefixEnd(p)? Every key above p that does not
 * start with p is ≥ prefixEnd(p), so: end starts with p, or end is prefixEnd(p) itself (p without
 * its trailing 0xff bytes, last byte plus one). (When p is all 0xff every key above it starts with
 * it, so the first test decides.) Reads only the two keys, never the table.
 */
export function endWithinPrefix(key: Uint8Array, length: number, end: Uint8Array): boolean {
  if (end.length >= length) {
    let same = true;
    for (let i = 0; i < length && same; i++) same = end[i] === key[i];
    if (same) return true;
  }
  let last = length - 1;
  while (last >= 0 && key[last] === 0xff) last--;
  if (end.length !== last + 1 || end[last] !== key[last]! + 1) return false;
  for (let i = 0; i < last; i++) if (end[i] !== key[i]) return false;
  return true;
}

export class AccessIndex {
  readonly full = new CoverageIndex();
  private readonly exact = new KeyTable();
  private readonly prefixes = new KeyTable();
  private readonly other = new CoverageIndex();
  private readonly prefixLengthCounts = new Map<number, number>();
  private sortedPrefixLengths: Int32Array | null = new Int32Array(0);
  private readonly view = new SettledView(() => AnchoredView.build(this.full.mergedIntervals()));

  add(permission: Permission): void {
    this.dropView();
    const { begin, end } = permissionInterval(permission);
    this.full.add(begin, end);
    if (permission.rangeEnd.length === 0) this.exact.add(permission.key);
    else if (isPrefixGrant(permission)) {
      this.prefixes.add(permission.key);
      this.countPrefixLength(permission.key.length, 1);
    } else this.other.add(begin, end);
  }

  remove(permission: Permission): void {
    this.dropView();
    const { begin, end } = permissionInterval(permission);
    this.full.remove(begin, end);
    if (permission.rangeEnd.length === 0) this.exact.remove(permission.key);
    else if (isPrefixGrant(permission)) {
      this.prefixes.remove(permission.key);
      this.countPrefixLength(permission.key.length, -1);
    } else this.other.remove(begin, end);
  }

  /** `[key, rangeEnd)` with etcd's meanings (empty: the key alone; 0x00: to +∞). */
  permits(key: Uint8Array, rangeEnd: Uint8Array): boolean {
    const view = this.view.current(this.full.boundaries);
    if (view !== null) return view.permits(key, rangeEnd);
    if (rangeEnd.length === 0) return this.coversKey(key);
    if (isOpenEnded(rangeEnd)) return this.coversKey(key) && this.full.coversRange(key, null);
    if (compareBytes(rangeEnd, key) <= 0) return this.coversKey(key);
    if (this.insideOnePrefix(key, rangeEnd)) return true;
    // A range is covered only if its first key is: a quick refusal before the interval index.
    return this.coversKey(key) && this.full.coversRange(key, rangeEnd);
  }

  coversKey(key: Uint8Array): boolean {
    if (key.length === 0) return false;
    const lengths = this.prefixLengths();
    let hash = FNV_OFFSET;
    let hashed = 0;
    for (let i = 0; i < lengths.length; i++) {
      const length = lengths[i]!;
      if (length > key.length) break;
      for (; hashed < length; hashed++) hash = fnvStep(hash, key[hashed]!);
      if (this.prefixes.find(key, length, hash) >= 0) return true;
    }
    if (this.exact.size > 0) {
      for (; hashed < key.length; hashed++) hash = fnvStep(hash, key[hashed]!);
      if (this.exact.find(key, key.length, hash) >= 0) return true;
    }
    return this.other.size > 0 && this.other.coversKey(key);
  }

  /** True when the shortest granted prefix of `key` also contains `end` (so all of [key, end)). */
  private insideOnePrefix(key: Uint8Array, end: Uint8Array): boolean {
    const lengths = this.prefixLengths();
    let hash = FNV_OFFSET;
    let hashed = 0;
    for (let i = 0; i < lengths.length; i++) {
      const length = lengths[i]!;
      if (length > key.length) return false;
      for (; hashed < length; hashed++) hash = fnvStep(hash, key[hashed]!);
      if (this.prefixes.find(key, length, hash) >= 0) return endWithinPrefix(key, length, end);
    }
    return false;
  }

  /** Whether checks are being answered from the AnchoredView (for tests and diagnostics). */
  get hasView(): boolean {
    return this.view.built;
  }

  private dropView(): void {
    this.view.drop();
  }

  private countPrefixLength(length: number, change: 1 | -1): void {
    const count = (this.prefixLengthCounts.get(length) ?? 0) + change;
    if (count === 0) this.prefixLengthCounts.delete(length);
    else this.prefixLengthCounts.set(length, count);
    this.sortedPrefixLengths = null;
  }

  private prefixLengths(): Int32Array {
    if (this.sortedPrefixLengths === null) {
      this.sortedPrefixLengths = Int32Array.from(this.prefixLengthCounts.keys()).sort();
    }
    return this.sortedPrefixLengths;
  }
}
