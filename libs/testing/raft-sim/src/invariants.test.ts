// The checkers must be able to fail: each is fed a history that breaks its property.
import { utf8 } from '@ward/shared/bytes';
import { describe, expect, it } from 'vitest';
import type { ConfState, Entry, NodeId } from '@ward/raft/core';
import { EntryType, MessageType, message, votersConfState } from '@ward/raft/core';
import { SafetyChecker } from './invariants';
import type { ObservedNode } from './invariants';
import { SimDisk } from './sim-disk';

function e(index: number, term: number, data = `d${index}`): Entry {
  return { index, term, type: EntryType.Normal, data: utf8(data) };
}

function kinds(checker: SafetyChecker): string[] {
  return checker.violations.map((v) => v.kind);
}

/** An ObservedNode with a fake RawNode exposing just what the checker reads. */
const THREE = votersConfState([1n, 2n, 3n]);

function observed(id: NodeId, status: { role: string; term: number; commit: number }, terms: Record<number, number>, disk = new SimDisk(), conf: ConfState = THREE): ObservedNode {
  const node = { basicStatus: () => status, termAt: (i: number) => terms[i] } as unknown as ObservedNode['node'];
  return { id, up: true, node, disk, snapshotIndex: () => 0, confHistory: [conf] };
}

describe('SafetyChecker', () => {
  it('election safety: two leaders in one term', () => {
    const c = new SafetyChecker(THREE);
    c.observe(observed(1n, { role: 'leader', term: 3, commit: 0 }, {}));
    c.observe(observed(2n, { role: 'leader', term: 4, commit: 0 }, {}));
    expect(kinds(c)).toEqual([]);
    c.observe(observed(3n, { role: 'leader', term: 3, commit: 0 }, {}));
    expect(kinds(c)).toEqual(['election-safety']);
  });

  it('log matching: one (index, term) with different contents or prefixes', () => {
    const c = new SafetyChecker(THREE);
    c.onPersisted(1n, undefined, [e(1, 1), e(2, 1)]);
    c.onPersisted(2n, undefined, [e(1, 1), e(2, 1)]);
    expect(kinds(c)).toEqual([]);
    c.onPersisted(3n, undefined, [e(1, 1, 'other'), e(2, 1)]);
    expect(kinds(c)).toEqual(['log-matching', 'log-matching']);
  });

  it('log matching follows truncation: an overwritten suffix is re-hashed', () => {
    const c = new SafetyChecker(THREE);
    c.onPersisted(1n, undefined, [e(1, 1), e(2, 1)]);
    c.onPersisted(1n, undefined, [e(2, 2)]);
    c.onPersisted(2n, undefined, [e(1, 1), e(2, 2)]);
    expect(kinds(c)).toEqual([]);
  });

  it('leader completeness: a new leader without the newest committed entry', () => {
    const c = new SafetyChecker(THREE);
    c.observe(observed(1n, { role: 'follower', term: 2, commit: 5 }, { 5: 2 }));
    c.observe(observed(2n, { role: 'leader', term: 3, commit: 4 }, { 4: 2, 5: 1 }));
    expect(kinds(c)).toContain('leader-completeness');
  });

  it('state machine safety: two entries applied at one index', () => {
    const c = new SafetyChecker(THREE);
    c.onApply(1n, e(1, 1), 0);
    c.onApply(2n, e(1, 1), 0);
    expect(kinds(c)).toEqual([]);
    c.onApply(3n, e(1, 2), 0);
    c.onApply(1n, e(3, 2), 1);
    expect(kinds(c)).toEqual(['state-machine-safety', 'applied-regressed']);
  });

  it('durability: the newest committed entry must be on a quorum of disks', () => {
    const c = new SafetyChecker(THREE);
    const disks = [new SimDisk(), new SimDisk(), new SimDisk()];
    disks[0]!.writeEntries([e(1, 1)]);
    disks[0]!.sync();
    c.observe(observed(1n, { role: 'leader', term: 1, commit: 1 }, { 1: 1 }));
    const nodes = disks.map((disk, i) => observed(BigInt(i + 1), { role: 'follower', term: 1, commit: 0 }, {}, disk));
    c.checkDurability(nodes);
    expect(kinds(c)).toEqual(['committed-entry-not-durable']);
    disks[1]!.writeEntries([e(1, 1)]);
    disks[1]!.sync();
    c.violations.length = 0;
    c.checkDurability(nodes);
    expect(kinds(c)).toEqual([]);
  });

  it('durability follows the configuration that counted the commit: both halves of a joint one', () => {
    const joint: ConfState = { ...votersConfState([1n, 4n, 5n]), votersOutgoing: [1n, 2n, 3n] };
    const c = new SafetyChecker(THREE);
    const disks = [1, 2, 3, 4, 5].map(() => new SimDisk());
    const hold = (i: number): void => {
      disks[i - 1]!.writeEntries([e(1, 1)]);
      disks[i - 1]!.sync();
    };
    c.observe(observed(1n, { role: 'leader', term: 1, commit: 1 }, { 1: 1 }, new SimDisk(), joint));
    const nodes = disks.map((disk, i) => observed(BigInt(i + 1), { role: 'follower', term: 1, commit: 0 }, {}, disk, joint));
    hold(1);
    hold(4);
    hold(5);
    c.checkDurability(nodes);
    // A majority of the incoming half only: not durable for the outgoing one.
    expect(kinds(c)).toEqual(['committed-entry-not-durable']);
    hold(2);
    c.violations.length = 0;
    c.checkDurability(nodes);
    expect(kinds(c)).toEqual([]);
  });

  it('votes: never two votes in a term; what was acted on survives a restart', () => {
    const c = new SafetyChecker(THREE);
    c.onHardState(1n, { term: 2, vote: 2n, commit: 0 });
    c.onHardState(1n, { term: 2, vote: 2n, commit: 1 });
    c.onHardState(1n, { term: 3, vote: 3n, commit: 1 });
    expect(kinds(c)).toEqual([]);
    c.onHardState(1n, { term: 3, vote: 2n, commit: 1 });
    expect(kinds(c)).toEqual(['vote-changed-in-term']);
    c.onSend(4n, message(MessageType.VoteResp, { from: 4n, to: 5n, term: 7 }));
    c.onRestart(4n, { term: 6, vote: 0n, commit: 0 });
    c.onRestart(4n, { term: 7, vote: 3n, commit: 0 });
    expect(kinds(c)).toEqual(['vote-changed-in-term', 'term-not-durable', 'vote-not-durable']);
  });
});

describe('SimDisk', () => {
  it('keeps only synced writes (or a prefix of the rest) across a crash', () => {
    const disk = new SimDisk();
    disk.writeEntries([e(1, 1)]);
    disk.writeHardState({ term: 1, vote: 1n, commit: 0 });
    disk.sync();
    disk.writeEntries([e(2, 1)]);
    disk.writeHardState({ term: 2, vote: 2n, commit: 1 });
    disk.crash({ nextInt: () => 0, nextFloat: () => 0, nextUint32: () => 0 }, 'random-prefix');
    expect(disk.durable.entries.map((x) => x.index)).toEqual([1]);
    expect(disk.durable.hardState.term).toBe(1);
    disk.writeEntries([e(2, 1)]);
    disk.writeHardState({ term: 2, vote: 2n, commit: 1 });
    disk.crash({ nextInt: () => 1, nextFloat: () => 0, nextUint32: () => 0 }, 'random-prefix');
    expect(disk.durable.entries.map((x) => x.index)).toEqual([1, 2]);
    expect(disk.durable.hardState.term).toBe(1);
  });

  it('a leader snapshot, its entries and its HardState survive a crash together or not at all', () => {
    const disk = new SimDisk();
    disk.writeEntries([e(1, 1)]);
    disk.writeHardState({ term: 1, vote: 1n, commit: 1 });
    disk.sync();
    const snapshot = { data: new Uint8Array(), metadata: { index: 5, term: 2, confState: { voters: [1n], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } } };
    disk.writeInstall(snapshot, [e(6, 2)], { term: 2, vote: 0n, commit: 6 });
    disk.writeHardState({ term: 2, vote: 0n, commit: 6 });
    disk.crash({ nextInt: () => 0, nextFloat: () => 0, nextUint32: () => 0 }, 'random-prefix');
    expect([disk.durable.snapshot, disk.durable.hardState.commit]).toEqual([undefined, 1]);
    disk.writeInstall(snapshot, [e(6, 2)], { term: 2, vote: 0n, commit: 6 });
    disk.writeHardState({ term: 2, vote: 0n, commit: 6 });
    disk.crash({ nextInt: () => 1, nextFloat: () => 0, nextUint32: () => 0 }, 'random-prefix');
    expect([disk.durable.snapshot?.metadata.index, disk.durable.entries.map((x) => x.index), disk.durable.hardState.commit]).toEqual([5, [6], 6]);
  });

  it('overwrites a suffix, installs leader snapshots, and compacts behind its own snapshots', () => {
    const disk = new SimDisk();
    disk.writeEntries([e(1, 1), e(2, 1), e(3, 1)]);
    disk.writeEntries([e(2, 2)]);
    disk.sync();
    expect(disk.durable.entries.map((x) => [x.index, x.term])).toEqual([[1, 1], [2, 2]]);
    const snapshot = { data: new Uint8Array(), metadata: { index: 1, term: 1, confState: { voters: [1n], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } } };
    disk.saveCompactionSnapshot(snapshot);
    expect(disk.durable.entries.map((x) => x.index)).toEqual([2]);
    expect(disk.durablyHolds(1, 1)).toBe(true);
    expect(disk.durablyHolds(2, 2)).toBe(true);
    expect(disk.durablyHolds(2, 1)).toBe(false);
    disk.writeInstall({ ...snapshot, metadata: { ...snapshot.metadata, index: 9, term: 3 } }, [e(10, 3)], { term: 3, vote: 2n, commit: 9 });
    disk.sync();
    expect(disk.durable.entries.map((x) => x.index)).toEqual([10]);
    expect(disk.durable.hardState.commit).toBe(9);
    expect(disk.durablyHolds(9, 3)).toBe(true);
  });
});
