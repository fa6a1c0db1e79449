// Three RaftDrivers in one process over real WAL/snapshot directories, with an in-memory network:
// the Ready contract (persist before a follower speaks), replication and apply, local snapshots,
// and a member far behind the compacted log catching up through an installed snapshot.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeApplyRequest } from '@ward/etcd/apply';
import { createLogger } from '@ward/platform/logging';
import { ConfChangeTransition, ConfChangeType, EntryType, MemoryStorage, MessageType, NO_NODE, RawNode, votersConfState, type ConfChangeV2, type Message, type Ready } from '@ward/raft/core';
import { RaftPersistence, memberWalMetadata } from '@ward/raft/storage';
import { SeededRng } from '@ward/shared/clock';
import { READY_TURN_MS, RaftDriver, entriesAfter } from './raft-driver';
import { StateMachine, type AppliedMembershipChange } from './state-machine';
import type { MemberSpec } from './members';
import { encodeChangeContext } from './membership/codec';

const IDS = [1n, 2n, 3n];
const CLUSTER = 7n;
const spec = (id: bigint): MemberSpec => ({ id, name: `m${id}`, peerAddress: `127.0.0.1:${1000 + Number(id)}`, apiAddress: `127.0.0.1:${2000 + Number(id)}` });
const INITIAL_MEMBERS = IDS.map(spec);
const logger = createLogger({ name: 'test', level: 'silent' });
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

interface Member {
  driver: RaftDriver;
  stateMachine: StateMachine;
  persistence: RaftPersistence;
  restored: number;
  violations: string[];
  /** While set, this member's writes of the Readies it holds wait (a stalled disk). */
  gate: { holds: (ready: Ready) => boolean; until: Promise<void> } | undefined;
  /** Writes waiting at the gate now. */
  held: number;
  /** Membership changes applied, in order. */
  membership: AppliedMembershipChange[];
  /** Local snapshots written: index, key-space revision then, and state-machine bytes. */
  snapshots: { index: number; revision: number; bytes: number }[];
  /** While set, local snapshot writes wait for it (a slow disk under a large snapshot). */
  snapshotGate: Promise<void> | undefined;
  /** Local snapshot writes waiting at the gate now. */
  snapshotsHeld: number;
  node: RawNode;
}

class Network {
  readonly members = new Map<bigint, Member>();
  readonly down = new Set<bigint>();
  deliver(messages: readonly Message[]): void {
    for (const m of messages) {
      if (this.down.has(m.to) || this.down.has(m.from)) continue;
      setImmediate(() => {
        this.members.get(m.to)?.driver.step(m);
        // As the members' transport does once a snapshot's bytes are sent: the leader then probes
        // the follower again (and sends a newer snapshot if the follower refused this one).
        if (m.type === MessageType.Snap) this.members.get(m.from)?.driver.reportSnapshot(m.to, true);
      });
    }
  }
}

async function boot(net: Network, id: bigint, dir: string, snapshotEntries: number, snapshotBytes = 1 << 30, maxSnapshotBytes?: number, snapshotStateBytesPerEntry?: number): Promise<Member> {
  const booted = await RaftPersistence.open({ dir, metadata: memberWalMetadata(CLUSTER, id), bootstrapConfState: votersConfState(IDS), catchUpEntries: 5, ...(maxSnapshotBytes === undefined ? {} : { maxSnapshotBytes }) });
  const stateMachine = StateMachine.boot(
    { applier: {}, maxEntryBytes: 1 << 20, onUndecodable: () => undefined, initialMembers: INITIAL_MEMBERS, initialConfState: votersConfState(IDS), clusterId: CLUSTER },
    booted.snapshot,
  );
  const node = new RawNode({ id, storage: booted.storage, rng: new SeededRng(Number(id)), applied: stateMachine.appliedIndex, electionTimeoutTicks: 10, heartbeatIntervalTicks: 1 });
  const violations: string[] = [];
  /** The key space's revision at each applied index reported. */
  const revisionAt = new Map<number, number>();
  const storage = booted.storage; // updated only once the WAL write of a Ready is durable
  const member: Member = { driver: undefined as never, stateMachine, persistence: booted.persistence, restored: 0, violations, gate: undefined, held: 0, membership: [], snapshots: [], snapshotGate: undefined, snapshotsHeld: 0, node };
  // The real persistence, with writes that can be held back.
  const persistence: RaftPersistence = Object.create(booted.persistence);
  persistence.persist = async (ready) => {
    const gate = member.gate;
    if (gate !== undefined && gate.holds(ready)) {
      member.held++;
      await gate.until;
      member.held--;
    }
    return booted.persistence.persist(ready);
  };
  persistence.createSnapshotStreamed = async (...args) => {
    if (member.snapshotGate !== undefined) {
      member.snapshotsHeld++;
      await member.snapshotGate;
      member.snapshotsHeld--;
    }
    return booted.persistence.createSnapshotStreamed(...args);
  };
  member.driver = new RaftDriver({
    node,
    persistence,
    send: (messages) => {
      // An ack or a vote may only leave once what it vouches for is durable.
      for (const m of messages) {
        if (m.type === MessageType.AppResp && !m.reject && m.index > storage.lastIndex()) violations.push(`member ${id} acked ${m.index} before it was durable`);
        const hs = storage.initialState().hardState;
        if (m.type === MessageType.VoteResp && !m.reject && (hs.term < m.term || hs.vote !== m.to)) violations.push(`member ${id} voted before its vote was durable`);
      }
      net.deliver(messages);
    },
    stateMachine,
    tickMs: 5,
    snapshotEntries,
    snapshotBytes,
    ...(snapshotStateBytesPerEntry === undefined ? {} : { snapshotStateBytesPerEntry }),
    bootSnapshotIndex: booted.snapshot?.metadata.index ?? 0,
    logger,
    hooks: {
      onLeaderChange: () => undefined,
      onApplied: (applied, appliedIndex) => {
        // Only entries in this member's durable log are ever applied.
        for (const { index } of applied) if (index > storage.lastIndex()) violations.push(`member ${id} applied ${index} before it was durable here`);
        revisionAt.set(appliedIndex, stateMachine.applier.keySpaceView.currentRevision);
      },
      onMembership: (change) => member.membership.push(change),
      onRestored: () => member.restored++,
      onReadStates: () => undefined,
      // Reported once the file is written, while the member applies on: the revision at its index.
      onSnapshot: (index, bytes) => member.snapshots.push({ index, revision: revisionAt.get(index) ?? -1, bytes }),
      onFatal: (error) => violations.push(`fatal: ${String(error)}`),
    },
  });
  net.members.set(id, member);
  member.driver.start();
  return member;
}

/** Three members, each over a fresh directory, joined by one in-memory network. */
async function startMembers(snapshotEntries: number, snapshotBytes?: number, maxSnapshotBytes?: number, snapshotStateBytesPerEntry?: number): Promise<{ net: Network; roots: string[]; members: Member[] }> {
  const net = new Network();
  const roots = await Promise.all(IDS.map(() => mkdtemp(join(tmpdir(), 'ward-driver-'))));
  dirs.push(...roots);
  const members = await Promise.all(IDS.map((id, i) => boot(net, id, roots[i]!, snapshotEntries, snapshotBytes, maxSnapshotBytes, snapshotStateBytesPerEntry)));
  return { net, roots, members };
}

async function stopAll(members: readonly Member[]): Promise<void> {
  await Promise.all(members.map(async (m) => { await m.driver.stop(); await m.persistence.close(); }));
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Proposes `data` at the leader, again when a stepping-down leader drops it (it throws: nothing was appended). */
function proposeAtLeader(members: readonly Member[], data: Uint8Array): Promise<void> {
  return until(() => {
    try {
      members.find((m) => m.driver.isLeader)?.driver.propose(data);
      return members.some((m) => m.driver.isLeader);
    } catch {
      return false;
    }
  });
}

const put = (i: number): Uint8Array =>
  encodeApplyRequest({ header: { id: BigInt(i), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: new TextEncoder().encode(`k${i % 7}`), value: new TextEncoder().encode(`v${i}`) } } });

/** Puts 1..count one at a time, each applied by every member before the next (revision 1 + i). */
async function putEach(members: readonly Member[], count: number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    await proposeAtLeader(members, put(i));
    await until(() => members.every((m) => m.stateMachine.applier.keySpaceView.currentRevision === 1 + i));
  }
}

describe('RaftDriver', () => {
  it('elects, replicates and applies identically; followers never answer before their Ready is durable', async () => {
    const { members } = await startMembers(1000);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    const leader = members.find((m) => m.driver.isLeader)!;
    for (let i = 1; i <= 60; i++) leader.driver.propose(put(i));
    await until(() => members.every((m) => m.stateMachine.applier.keySpaceView.currentRevision === 61));
    const hashes = new Set(members.map((m) => m.stateMachine.applier.stateHash()));
    expect(hashes.size).toBe(1);
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  it('answers committed entries while the next Ready is still being written; applies only what is durable here', async () => {
    const { net, members } = await startMembers(1000);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    const leader = members.find((m) => m.driver.isLeader)!;
    const revision = (m: Member): number => m.stateMachine.applier.keySpaceView.currentRevision;
    leader.driver.propose(put(1));
    await until(() => members.every((m) => revision(m) === 2));
    let release: () => void = () => undefined;
    const stall = (member: Member, holds: (ready: Ready) => boolean): void => {
      member.gate = { holds, until: new Promise((resolve) => (release = resolve)) };
    };
    // A follower misses put 2 and gets it, already committed, in one message: the Ready carries
    // the entry both to write and to apply, and its write stalls. It is not applied before.
    const follower = members.find((m) => m !== leader)!;
    const followerId = IDS[members.indexOf(follower)]!;
    net.down.add(followerId);
    leader.driver.propose(put(2));
    await until(() => revision(leader) === 3);
    stall(follower, (ready) => ready.entries.length > 0);
    net.down.delete(followerId);
    await until(() => follower.held === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(revision(follower)).toBe(2);
    release();
    await until(() => revision(follower) === 3);
    // The leader's entries are durable, but the write of the Ready that commits them stalls:
    // put 3 is applied (its proposer answered) while that write is still waiting.
    stall(leader, (ready) => ready.entries.length === 0 && ready.committedEntries.length > 0);
    leader.driver.propose(put(3));
    await until(() => revision(leader) === 4);
    expect(leader.held).toBe(1);
    release();
    await until(() => members.every((m) => revision(m) === 4) && leader.held === 0);
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  it('a member far behind the compacted log catches up through a snapshot from the leader', async () => {
    const { net, roots, members } = await startMembers(20);
    await until(() => members.some((m) => m.driver.isLeader));
    const leader = members.find((m) => m.driver.isLeader)!;
    const laggard = members.find((m) => !m.driver.isLeader)!;
    const laggardId = IDS[members.indexOf(laggard)]!;
    // the laggard goes down; the others write well past a snapshot and its catch-up tail
    net.down.add(laggardId);
    await laggard.driver.stop();
    await laggard.persistence.close();
    for (let i = 1; i <= 100; i++) leader.driver.propose(put(i));
    const others = members.filter((m) => m !== laggard);
    await until(() => others.every((m) => m.stateMachine.applier.keySpaceView.currentRevision === 101));
    // the leader snapshots (every 20 entries) and compacts its log behind a 5-entry tail
    await until(() => leader.persistence.storage.firstIndex() > 10);
    net.down.delete(laggardId);
    const back = await boot(net, laggardId, roots[members.indexOf(laggard)]!, 20);
    await until(() => back.stateMachine.applier.keySpaceView.currentRevision === 101);
    expect(back.restored).toBeGreaterThanOrEqual(1);
    expect(back.stateMachine.applier.stateHash()).toBe(leader.stateMachine.applier.stateHash());
    expect([...others, back].flatMap((m) => m.violations)).toEqual([]);
    await stopAll([...others, back]);
  });
});

describe('RaftDriver snapshot triggers', () => {
  const bigPut = (i: number): Uint8Array =>
    encodeApplyRequest({ header: { id: BigInt(i), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: new TextEncoder().encode(`k${i}`), value: new Uint8Array(1000).fill(i) } } });

  it('writes no snapshot of a state larger than a snapshot may be and applies on; snapshots again once the state is small', async () => {
    // A snapshot every 3 entries, at most 4,000 bytes: four 1,000-byte values no longer fit.
    const { members } = await startMembers(3, undefined, 4000);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    const revision = (m: Member): number => m.stateMachine.applier.keySpaceView.currentRevision;
    for (let i = 1; i <= 12; i++) {
      await proposeAtLeader(members, bigPut(i));
      await until(() => members.every((m) => revision(m) === 1 + i));
    }
    // Every member applied all twelve and stopped for none; each snapshot it wrote held a state
    // small enough (at most three of the values).
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    for (const m of members) {
      expect(m.snapshots.length).toBeGreaterThan(0);
      for (const s of m.snapshots) expect(s.bytes).toBeLessThan(4000);
      expect(Math.max(...m.snapshots.map((s) => s.revision))).toBeLessThanOrEqual(4);
    }
    // Deleted and compacted, the state is small again: the next snapshots are written.
    const before = members.map((m) => m.snapshots.length);
    const del = encodeApplyRequest({ header: { id: 200n, username: '', authRevision: 0 }, operation: { type: 'deleteRange', request: { key: new TextEncoder().encode('k'), rangeEnd: new TextEncoder().encode('l') } } });
    await proposeAtLeader(members, del);
    await until(() => members.every((m) => revision(m) === 14));
    await proposeAtLeader(members, encodeApplyRequest({ header: { id: 201n, username: '', authRevision: 0 }, operation: { type: 'compact', request: { revision: 14 } } }));
    for (let i = 0; i < 12; i++) await proposeAtLeader(members, put(100 + i));
    await until(() => members.every((m, k) => m.snapshots.length > before[k]!));
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  it('once a snapshot is past the bytes floor, the next waits for one entry per snapshotStateBytesPerEntry of it, not for the configured count', async () => {
    // A snapshot every 3 entries or 1,000 bytes; past that floor, one entry per 100 snapshot bytes.
    const { members } = await startMembers(3, 1000, undefined, 100);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    const revision = (m: Member): number => m.stateMachine.applier.keySpaceView.currentRevision;
    // Each large value is larger than the whole state before it, so its entry alone is past the
    // bytes trigger (the last snapshot's size) whenever it is applied: however the snapshots fall
    // between the applies, each member's last one ends up holding all three values, and nothing
    // applied after it counts toward the next.
    const LARGE_PUTS = 3;
    const large = (i: number): Uint8Array =>
      encodeApplyRequest({ header: { id: BigInt(1000 + i), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: new TextEncoder().encode(`large${i}`), value: new Uint8Array(1500 * 2 ** (i - 1)).fill(i) } } });
    for (let i = 1; i <= LARGE_PUTS; i++) {
      await proposeAtLeader(members, large(i));
      await until(() => members.every((m) => revision(m) === 1 + i));
    }
    await until(() => members.every((m) => m.snapshots.some((s) => s.revision === 1 + LARGE_PUTS)));
    const first = members.map((m) => m.snapshots.at(-1)!);
    members.forEach((m) => expect(m.driver.appliedBytesSinceSnapshot).toBe(0));
    const triggers = first.map((s) => Math.floor(s.bytes / 100));
    const trigger = Math.min(...triggers);
    expect(trigger).toBeGreaterThan(40);
    // Small puts: fewer entries than bytes / 100 (and fewer bytes than the snapshot): none taken,
    // where the configured count would have taken one every 3 entries.
    let next = 1;
    for (; next <= trigger - 5; next++) await proposeAtLeader(members, put(next));
    await until(() => members.every((m) => revision(m) === LARGE_PUTS + next));
    await new Promise((resolve) => setTimeout(resolve, 200));
    members.forEach((m, k) => expect(m.snapshots.at(-1)).toBe(first[k]));
    // Then the count is reached: a snapshot, no sooner than bytes / 100 entries after the last.
    for (const last = Math.max(...triggers) + 5; next <= last; next++) await proposeAtLeader(members, put(next));
    await until(() => members.every((m, k) => m.snapshots.at(-1) !== first[k]));
    members.forEach((m, k) => expect(m.snapshots.at(-1)!.index - first[k]!.index).toBeGreaterThanOrEqual(Math.floor(first[k]!.bytes / 100)));
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  it('commits and applies on while a local snapshot is being written: a slow snapshot disk never holds the log', async () => {
    const { members } = await startMembers(5);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    for (const m of members) m.snapshotGate = gate;
    await putEach(members, 20);
    // Each member reached its first snapshot after 5 entries and still holds its write (one at a time).
    for (const m of members) expect([m.snapshotsHeld, m.snapshots.length]).toEqual([1, 0]);
    release();
    // Once its held write is done a member may start its next snapshot at once (more than 5
    // entries were applied meanwhile), so "at least one" is what every member must reach.
    await until(() => members.every((m) => m.snapshots.length >= 1 && m.snapshotsHeld === 0));
    for (const m of members) expect(m.snapshots[0]!.index).toBeLessThan(m.stateMachine.appliedIndex);
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  /**
   * Local snapshots whose taking is held: the steps of a member's n-th task (from 0) report more
   * to do without doing any (a large state's encoding, turn after turn) until `control.released`
   * exceeds n. Returns the indexes of the tasks started.
   */
  const holdSnapshotTaking = (member: Member, control: { released: number }): number[] => {
    const taken: number[] = [];
    const original = member.stateMachine.snapshotTask.bind(member.stateMachine);
    member.stateMachine.snapshotTask = (stream) => {
      const task = original(stream);
      const ordinal = taken.push(task.index) - 1;
      const step = task.step.bind(task);
      return Object.assign(Object.create(task) as typeof task, { step: () => (ordinal >= control.released ? 'more' : step()) });
    };
    return taken;
  };

  /** Three members snapshotting every 5 entries, a leader known, every snapshot's taking held. */
  const startHeldMembers = async (): Promise<{ members: Member[]; control: { released: number }; taken: number[][] }> => {
    const { members } = await startMembers(5);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    const control = { released: 0 };
    return { members, control, taken: members.map((m) => holdSnapshotTaking(m, control)) };
  };

  it('takes a local snapshot in turns: the member commits and applies between them, and the snapshot holds the state at its index', async () => {
    const { members, control, taken } = await startHeldMembers();
    await putEach(members, 20);
    // Every member started one snapshot (a few entries in) and applied on while it was taken.
    for (const [i, m] of members.entries()) {
      expect(taken[i]).toHaveLength(1);
      expect(m.stateMachine.appliedIndex).toBeGreaterThan(taken[i]![0]! + 10);
      expect(m.snapshots).toHaveLength(0);
    }
    control.released = 1;
    await until(() => members.every((m) => m.snapshots.length === 1 && m.snapshotsHeld === 0));
    for (const [i, m] of members.entries()) {
      const first = m.snapshots[0]!;
      expect(first.index).toBe(taken[i]![0]);
      // The core's snapshot decodes to the state at its index, not to the one when it was done.
      const stored = m.persistence.storage.snapshot();
      expect(stored.metadata.index).toBe(first.index);
      const atIndex = first;
      const restored = StateMachine.boot(
        { applier: {}, maxEntryBytes: 1 << 20, onUndecodable: () => undefined, initialMembers: INITIAL_MEMBERS, initialConfState: votersConfState(IDS), clusterId: CLUSTER },
        stored,
      );
      expect(restored.appliedIndex).toBe(stored.metadata.index);
      expect(restored.applier.keySpaceView.currentRevision).toBe(atIndex.revision);
      expect(atIndex.revision).toBeLessThan(21);
    }
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  it('drops a local snapshot a compaction overtook while it was taken, and takes another of the state after it', async () => {
    const { members, control, taken } = await startHeldMembers();
    await putEach(members, 8);
    for (const t of taken) expect(t).toHaveLength(1);
    await proposeAtLeader(members, encodeApplyRequest({ header: { id: 100n, username: '', authRevision: 0 }, operation: { type: 'compact', request: { revision: 8 } } }));
    await until(() => members.every((m) => m.stateMachine.applier.keySpaceView.compactRevision === 8));
    const compactedAt = members.map((m) => m.stateMachine.appliedIndex);
    control.released = 2;
    await until(() => members.every((m) => m.snapshots.length === 1 && m.snapshotsHeld === 0));
    for (const [i, m] of members.entries()) {
      // The first task went stale; the one written was taken after the compaction.
      expect(taken[i]!.length).toBeGreaterThanOrEqual(2);
      expect(m.snapshots[0]!.index).toBe(taken[i]![1]);
      expect(m.snapshots[0]!.index).toBeGreaterThanOrEqual(compactedAt[i]!);
    }
    expect(members.flatMap((m) => m.violations)).toEqual([]);
    await stopAll(members);
  });

  it('snapshots once the bytes applied since the last snapshot reach the limit, long before the entry count; a restart replays only the tail', async () => {
    const trigger = 4500;
    const { net, roots, members } = await startMembers(1_000_000, trigger);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    const revision = (m: Member): number => m.stateMachine.applier.keySpaceView.currentRevision;
    // One put per Ready, so the trigger is checked after each. Leaders' empty entries carry no
    // bytes: the first snapshot comes with the put that reaches the limit, whatever the elections.
    let bytes = 0;
    let expected = 0;
    for (let i = 1; i <= 12; i++) {
      const data = bigPut(i);
      bytes += data.length;
      if (expected === 0 && bytes >= trigger) expected = 1 + i;
      await proposeAtLeader(members, data);
      await until(() => members.every((m) => revision(m) === 1 + i));
    }
    expect(expected).toBeGreaterThan(2);
    for (const m of members) expect(m.snapshots[0]?.revision).toBe(expected);
    // a further snapshot waits for max(limit, the last snapshot's size) more bytes
    for (const m of members) {
      for (let k = 1; k < m.snapshots.length; k++) expect(m.snapshots[k]!.revision - m.snapshots[k - 1]!.revision).toBeGreaterThanOrEqual(Math.ceil(Math.max(trigger, m.snapshots[k - 1]!.bytes) / bigPut(12).length));
    }
    // a follower restarted boots from its last snapshot and applies only the entries after it
    const leader = members.find((m) => m.driver.isLeader) ?? members[0]!;
    const follower = members.find((m) => m !== leader)!;
    const followerId = IDS[members.indexOf(follower)]!;
    const hash = leader.stateMachine.applier.stateHash();
    // Stopping waits for a snapshot still being written: the last one is known after it.
    await follower.driver.stop();
    await follower.persistence.close();
    const lastSnapshot = follower.snapshots.at(-1)!.index;
    const back = await boot(net, followerId, roots[members.indexOf(follower)]!, 1_000_000, trigger);
    expect(back.persistence.storage.snapshot().metadata.index).toBe(lastSnapshot);
    await until(() => revision(back) === 13);
    expect(back.driver.appliedBytesSinceSnapshot).toBeLessThan(Math.max(trigger, follower.snapshots.at(-1)!.bytes));
    expect(back.stateMachine.applier.stateHash()).toBe(hash);
    expect([...members, back].flatMap((m) => m.violations)).toEqual([]);
    await stopAll([...members.filter((m) => m !== follower), back]);
  });
});

describe('RaftDriver Ready loop', () => {
  it('applies a backlog of committed entries (a reboot replaying its log tail) a Ready at a time, letting other work in between', async () => {
    const { net, roots, members } = await startMembers(1_000_000);
    await until(() => members.some((m) => m.driver.isLeader) && members.every((m) => m.driver.leader !== NO_NODE));
    // About 4 MB of entries: on a reboot, several Readies of committed entries (1 MiB each) that
    // write nothing.
    const big = (i: number): Uint8Array =>
      encodeApplyRequest({ header: { id: BigInt(i), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: new TextEncoder().encode(`big${i}`), value: new Uint8Array(100_000).fill(i) } } });
    for (let i = 1; i <= 40; i++) await proposeAtLeader(members, big(i));
    await until(() => members.every((m) => m.stateMachine.applier.keySpaceView.currentRevision === 41));
    const follower = members.find((m) => !m.driver.isLeader)!;
    const index = members.indexOf(follower);
    await follower.driver.stop();
    await follower.persistence.close();
    const running = members.filter((m) => m !== follower).map((m) => m.stateMachine);
    // Event-loop turns, counted by a chain of setImmediate; each apply of the rebooted member
    // records the count and then takes longer than READY_TURN_MS.
    let turns = 0;
    let probing = true;
    const probe = (): void => {
      turns++;
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    const seen: number[] = [];
    const original = StateMachine.prototype.apply;
    StateMachine.prototype.apply = function (this: StateMachine, ...args: Parameters<StateMachine['apply']>) {
      if (!running.includes(this) && args[0].length > 0) {
        seen.push(turns);
        const busyUntil = performance.now() + READY_TURN_MS + 1;
        while (performance.now() < busyUntil) {
          // an apply slower than a turn
        }
      }
      return original.apply(this, args);
    };
    let back: Member;
    try {
      back = await boot(net, IDS[index]!, roots[index]!, 1_000_000);
      await until(() => back.stateMachine.applier.keySpaceView.currentRevision === 41);
    } finally {
      StateMachine.prototype.apply = original;
      probing = false;
    }
    expect(seen.length).toBeGreaterThanOrEqual(4);
    // Each Ready's apply came in an event-loop turn of its own.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!, `apply ${i}`).toBeGreaterThan(seen[i - 1]!);
    expect(back.stateMachine.applier.stateHash()).toBe(members.find((m) => m !== follower)!.stateMachine.applier.stateHash());
    expect([...members, back].flatMap((m) => m.violations)).toEqual([]);
    await stopAll([...members.filter((m) => m !== follower), back]);
  });
});

describe('RaftDriver membership', () => {
  const change = (type: ConfChangeType, id: bigint, requestId: bigint, records: MemberSpec[] = []): ConfChangeV2 => ({
    transition: ConfChangeTransition.Auto,
    changes: [{ type, nodeId: id }],
    context: encodeChangeContext({ requestId, records: records.map((r) => ({ ...r, isLearner: type === ConfChangeType.AddLearnerNode })) }),
  });
  const listOf = (m: Member): string => JSON.stringify(m.stateMachine.members.members.map((r) => [r.id.toString(), r.name, r.isLearner]));

  it('adds a learner that catches up by a snapshot listing it, promotes it, removes the leader; lists and configurations agree, also after a restart', async () => {
    const { net, roots, members } = await startMembers(20);
    await until(() => members.some((m) => m.driver.isLeader));
    const leader = (): Member => [...net.members.values()].find((m) => m.driver.isLeader && !net.down.has(idOf(m)))!;
    const idOf = (m: Member): bigint => [...net.members.entries()].find(([, v]) => v === m)![0];
    for (let i = 1; i <= 60; i++) leader().driver.propose(put(i));
    await until(() => members.every((m) => m.stateMachine.applier.keySpaceView.currentRevision === 61));
    await until(() => leader().persistence.storage.firstIndex() > 10);
    // member 4 starts with the initial voters (index 0), as every node does, and an empty log
    const dir4 = await mkdtemp(join(tmpdir(), 'ward-driver-'));
    dirs.push(dir4);
    const joiner = await boot(net, 4n, dir4, 20);
    leader().driver.proposeConfChange(change(ConfChangeType.AddLearnerNode, 4n, 41n, [spec(4n)]));
    await until(() => joiner.stateMachine.applier.keySpaceView.currentRevision === 61 && joiner.stateMachine.members.has(4n));
    // the log it needed was compacted: it was caught up by a snapshot, which listed it
    expect(joiner.restored).toBeGreaterThanOrEqual(1);
    expect(joiner.stateMachine.confState.learners).toEqual([4n]);
    expect(joiner.stateMachine.members.get(4n)).toEqual({ ...spec(4n), isLearner: true });
    const added = members[0]!.membership.find((c) => c.requestId === 41n)!;
    expect(added.refused).toBeUndefined();
    expect(added.change.added.map((r) => r.id)).toEqual([4n]);

    leader().driver.proposeConfChange(change(ConfChangeType.AddNode, 4n, 42n));
    await until(() => [...members, joiner].every((m) => m.stateMachine.confState.voters.length === 4));
    const old = leader();
    const oldId = idOf(old);
    old.driver.proposeConfChange(change(ConfChangeType.RemoveNode, oldId, 43n));
    await until(() => [...members, joiner].filter((m) => m !== old).every((m) => m.stateMachine.members.isRemoved(oldId)) && old.stateMachine.members.isRemoved(oldId));
    // the others elect a leader among themselves and keep committing
    await until(() => leader() !== undefined && leader() !== old);
    leader().driver.propose(put(61));
    const rest = [...members, joiner].filter((m) => m !== old);
    await until(() => rest.every((m) => m.stateMachine.applier.keySpaceView.currentRevision === 62));
    expect(new Set(rest.map(listOf)).size).toBe(1);
    expect(new Set(rest.map((m) => JSON.stringify(m.stateMachine.confState, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))).size).toBe(1);
    expect(rest[0]!.stateMachine.confState.voters).toEqual(IDS.filter((id) => id !== oldId).concat([4n]).sort((a, b) => (a < b ? -1 : 1)));
    expect(rest[0]!.stateMachine.members.members.map((r) => [r.id, r.isLearner])).toEqual(rest[0]!.stateMachine.confState.voters.map((id) => [id, false]));
    // a member restarted from its snapshot and log comes back with the same list and configuration
    const again = rest.find((m) => m !== leader())!;
    const againId = idOf(again);
    const before = listOf(again);
    await again.driver.stop();
    await again.persistence.close();
    const back = await boot(net, againId, againId === 4n ? dir4 : roots[IDS.indexOf(againId)]!, 20);
    await until(() => back.stateMachine.applier.keySpaceView.currentRevision === 62);
    expect(listOf(back)).toBe(before);
    expect(back.node.confState().voters).toEqual(rest[0]!.stateMachine.confState.voters);
    expect([...rest, back].flatMap((m) => m.violations)).toEqual([]);
    await stopAll([old, ...rest.filter((m) => m !== again), back]);
  });
});

describe('entriesAfter (a replica feed going on from its index)', () => {
  // A log compacted at 3 (term 1), holding 4..9: terms 1, 1, 2, 2, 3, 3.
  const storage = new MemoryStorage();
  const terms = [1, 1, 1, 1, 1, 2, 2, 3, 3];
  storage.append(terms.map((term, i) => ({ index: i + 1, term, type: EntryType.Normal, data: new Uint8Array(10).fill(i + 1) })));
  storage.compact(3);
  const indexes = (entries: ReturnType<typeof entriesAfter>): number[] | undefined => entries?.map((e) => e.index);

  it('gives the entries after an index whose term matches, up to the given one', () => {
    expect(indexes(entriesAfter(storage, 5, 1, 8, 1000))).toEqual([6, 7, 8]);
    expect(indexes(entriesAfter(storage, 3, 1, 9, 1000))).toEqual([4, 5, 6, 7, 8, 9]);
    expect(indexes(entriesAfter(storage, 9, 3, 9, 1000))).toEqual([]);
    // Read in pieces when the storage gives fewer at once: 60 bytes are six entries of 10.
    expect(indexes(entriesAfter(storage, 3, 1, 9, 60))).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it('gives nothing when the log differs there, no longer or not yet holds the entries, or they are too many bytes', () => {
    expect(entriesAfter(storage, 6, 1, 9, 1000)).toBeUndefined();
    expect(entriesAfter(storage, 2, 1, 9, 1000)).toBeUndefined();
    expect(entriesAfter(storage, 5, 1, 10, 1000)).toBeUndefined();
    expect(entriesAfter(storage, 8, 3, 7, 1000)).toBeUndefined();
    expect(entriesAfter(storage, 3, 1, 9, 59)).toBeUndefined();
  });
});
