import { describe, expect, it } from 'vitest';
import { CompactedError } from './errors';
import { MemoryStorage } from './memory-storage';
import { RaftLog } from './raft-log';
import { entriesWithTerms, entry, ids } from './test/raft-harness';
import { Unstable } from './unstable';
import { votersConfState } from './types';

function logWith(terms: number[], unstable: number[] = []): RaftLog {
  const storage = new MemoryStorage(votersConfState([1n]));
  storage.append(entriesWithTerms(terms));
  const log = new RaftLog(storage, Number.MAX_SAFE_INTEGER);
  if (unstable.length > 0) log.append(unstable.map((t, i) => entry(terms.length + 1 + i, t)));
  return log;
}

describe('RaftLog', () => {
  it('findConflict names the first entry that differs or is missing', () => {
    const log = logWith([1, 2, 3]);
    expect(log.findConflict([entry(1, 1), entry(2, 2)])).toBe(0);
    expect(log.findConflict([entry(2, 2), entry(3, 4)])).toBe(3);
    expect(log.findConflict([entry(3, 3), entry(4, 4)])).toBe(4);
  });

  it('findConflictByTerm finds the largest index <= i whose term is <= t', () => {
    const log = logWith([1, 1, 3, 3, 5]);
    expect(log.findConflictByTerm(5, 4)).toEqual({ index: 4, term: 3 });
    expect(log.findConflictByTerm(5, 2)).toEqual({ index: 2, term: 1 });
    expect(log.findConflictByTerm(5, 0)).toEqual({ index: 0, term: 0 });
    expect(log.findConflictByTerm(3, 9)).toEqual({ index: 3, term: 3 });
  });

  it('maybeAppend: appends after a matching entry, truncates conflicts, and commits up to the new last index', () => {
    const log = logWith([1, 2, 3]);
    expect(log.maybeAppend(3, 9, 3, [entry(4, 9)])).toBeUndefined();
    expect(log.maybeAppend(1, 1, 10, [entry(2, 4), entry(3, 4)])).toBe(3);
    expect(ids(log.slice(1, 4, 1e9))).toEqual([[1, 1], [2, 4], [3, 4]]);
    expect(log.committed).toBe(3);
    expect(() => log.maybeAppend(1, 1, 3, [entry(2, 5)])).toThrow(/conflicts with committed/);
  });

  it('isUpToDate compares last terms first, then last indexes (§5.4.1)', () => {
    const log = logWith([1, 2, 2]);
    expect(log.isUpToDate(3, 2)).toBe(true);
    expect(log.isUpToDate(2, 2)).toBe(false);
    expect(log.isUpToDate(1, 3)).toBe(true);
    expect(log.isUpToDate(10, 1)).toBe(false);
  });

  it('slices across the stable/unstable boundary and honours the byte budget', () => {
    const log = logWith([1, 1], [2, 2]);
    expect(ids(log.slice(1, 5, 1e9))).toEqual([[1, 1], [2, 1], [3, 2], [4, 2]]);
    expect(ids(log.slice(2, 4, 0))).toEqual([[2, 1]]);
    expect(log.nextUnstableEntries().map((e) => e.index)).toEqual([3, 4]);
  });

  it('throws CompactedError below the first index', () => {
    const storage = new MemoryStorage(votersConfState([1n]));
    storage.append(entriesWithTerms([1, 1, 1]));
    storage.createSnapshot(2, undefined, new Uint8Array());
    storage.compact(2);
    const log = new RaftLog(storage, 1e9);
    expect(() => log.slice(1, 3, 1e9)).toThrow(CompactedError);
    expect(() => log.term(0)).toThrow(CompactedError);
    expect(log.term(2)).toBe(1);
  });

  it('commit never goes backwards; applied never passes commit', () => {
    const log = logWith([1, 1, 1]);
    log.commitTo(2);
    log.commitTo(1);
    expect(log.committed).toBe(2);
    expect(() => log.commitTo(9)).toThrow(/out of range/);
    expect(() => log.appliedTo(3, 0)).toThrow(/out of range/);
  });
});

describe('Unstable', () => {
  it('stableTo ignores an acknowledgement for an entry that was overwritten meanwhile', () => {
    const u = new Unstable(5);
    u.truncateAndAppend([entry(5, 1), entry(6, 1)]);
    u.acceptInProgress();
    u.truncateAndAppend([entry(6, 2)]);
    u.stableTo(6, 1);
    expect(ids(u.entries)).toEqual([[5, 1], [6, 2]]);
    u.stableTo(5, 1);
    expect(ids(u.entries)).toEqual([[6, 2]]);
    expect(u.nextEntries().map((e) => e.index)).toEqual([6]);
  });

  it('truncating below the in-progress offset re-exposes the new entries for persisting', () => {
    const u = new Unstable(1);
    u.truncateAndAppend([entry(1, 1), entry(2, 1), entry(3, 1)]);
    u.acceptInProgress();
    expect(u.nextEntries()).toEqual([]);
    u.truncateAndAppend([entry(2, 2)]);
    expect(ids(u.nextEntries())).toEqual([[2, 2]]);
  });
});
