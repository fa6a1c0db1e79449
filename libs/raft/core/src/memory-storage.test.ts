import { utf8 } from '@ward/shared/bytes';
import { describe, expect, it } from 'vitest';
import { CompactedError, SnapshotOutOfDateError, UnavailableError } from './errors';
import { MemoryStorage } from './memory-storage';
import { entry, ids } from './test/raft-harness';
import { ENTRY_HEADER_BYTES, votersConfState } from './types';

/** Storage holding a snapshot at 3 (term 3) and entries 4..5 (terms 4, 5). */
function storage(): MemoryStorage {
  const s = new MemoryStorage(votersConfState([1n]));
  s.append([entry(1, 1), entry(2, 2), entry(3, 3), entry(4, 4), entry(5, 5)]);
  s.createSnapshot(3, undefined, utf8('snap'));
  s.compact(3);
  return s;
}

describe('MemoryStorage', () => {
  it('answers term() for [firstIndex-1, lastIndex], with coded errors outside', () => {
    const s = storage();
    expect([s.firstIndex(), s.lastIndex()]).toEqual([4, 5]);
    expect([3, 4, 5].map((i) => s.term(i))).toEqual([3, 4, 5]);
    expect(() => s.term(2)).toThrow(CompactedError);
    expect(() => s.term(6)).toThrow(UnavailableError);
  });

  it('entries(lo, hi, maxBytes) returns a size-limited range, never empty for a non-empty range', () => {
    const s = new MemoryStorage();
    s.append([entry(1, 1, 'aaaa'), entry(2, 1, 'bbbb'), entry(3, 1, 'cccc')]);
    const one = ENTRY_HEADER_BYTES + 4;
    expect(ids(s.entries(1, 4, Number.MAX_SAFE_INTEGER))).toEqual([[1, 1], [2, 1], [3, 1]]);
    expect(ids(s.entries(1, 4, 2 * one))).toEqual([[1, 1], [2, 1]]);
    expect(ids(s.entries(1, 4, 2 * one - 1))).toEqual([[1, 1]]);
    expect(ids(s.entries(1, 4, 0))).toEqual([[1, 1]]);
    expect(() => storage().entries(3, 5, 100)).toThrow(CompactedError);
  });

  it('append replaces a conflicting suffix and ignores entries already compacted', () => {
    const s = storage();
    s.append([entry(3, 3), entry(4, 6), entry(5, 6), entry(6, 6)]);
    expect([4, 5, 6].map((i) => s.term(i))).toEqual([6, 6, 6]);
    s.append([entry(5, 7)]);
    expect(s.lastIndex()).toBe(5);
    expect(s.term(5)).toBe(7);
    s.append([entry(1, 1), entry(2, 2)]);
    expect(s.lastIndex()).toBe(5);
  });

  it('refuses a gap in the log', () => {
    expect(() => storage().append([entry(7, 7)])).toThrow(/missing log entry/);
  });

  it('snapshots and compaction refuse positions they already passed', () => {
    const s = storage();
    expect(() => s.createSnapshot(3, undefined, utf8(''))).toThrow(SnapshotOutOfDateError);
    expect(() => s.compact(3)).toThrow(CompactedError);
    const snap = s.createSnapshot(5, undefined, utf8('later'));
    expect(snap.metadata).toMatchObject({ index: 5, term: 5 });
    expect(() => s.applySnapshot({ data: utf8(''), metadata: { confState: votersConfState([1n]), index: 4, term: 4 } })).toThrow(SnapshotOutOfDateError);
    s.applySnapshot({ data: utf8('from leader'), metadata: { confState: votersConfState([1n, 2n]), index: 9, term: 8 } });
    expect([s.firstIndex(), s.lastIndex(), s.term(9)]).toEqual([10, 9, 8]);
    expect(s.initialState().confState.voters).toEqual([1n, 2n]);
  });
});
