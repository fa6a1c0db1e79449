// Replication flow control: probe and replicate states, the inflight window (messages and
// bytes), the message byte budget, and fast log rejection.
import { describe, expect, it } from 'vitest';
import { MessageType } from './message';
import { ProgressState } from './progress';
import type { Raft } from './raft';
import { ENTRY_HEADER_BYTES } from './types';
import type { RaftConfig } from './config';
import { Cluster } from './test/cluster';
import { advanceMessagesAfterAppend, entriesWithTerms, entry, msg, newTestRaft, readMessages, storageWithVoters } from './test/raft-harness';

function leaderWithFollowerInReplicate(extra: Partial<RaftConfig>): Raft {
  const r = newTestRaft(1n, 5, 1, storageWithVoters([1n, 2n]), extra);
  r.becomeCandidate();
  r.becomeLeader();
  readMessages(r);
  // The follower acknowledges the no-op: its progress moves to replicate.
  r.step(msg(MessageType.AppResp, 2n, 1n, { term: r.term, index: r.log.lastIndex() }));
  readMessages(r);
  return r;
}

function proposeBytes(r: Raft, size: number): void {
  r.step(msg(MessageType.Prop, 1n, 1n, { entries: [entry(0, 0, 'x'.repeat(size))] }));
}

function appsTo(msgs: readonly { type: number; to: bigint }[], to: bigint): number {
  return msgs.filter((m) => m.type === MessageType.App && m.to === to).length;
}

describe('flow control', () => {
  it('replicate state streams MsgApps until the inflight window (messages) is full, then waits for acks', () => {
    const r = leaderWithFollowerInReplicate({ maxInflightMessages: 3 });
    expect(r.trk.mustGet(2n).state).toBe(ProgressState.Replicate);
    const sent = [];
    for (let i = 0; i < 10; i++) {
      proposeBytes(r, 10);
      sent.push(...readMessages(r));
    }
    expect(appsTo(sent, 2n)).toBe(3);
    expect(r.trk.mustGet(2n).isPaused()).toBe(true);
    // Acknowledging the first MsgApp frees one slot: the rest goes out in one batch-limited message.
    const firstApp = sent.find((m) => m.type === MessageType.App)!;
    r.step(msg(MessageType.AppResp, 2n, 1n, { term: r.term, index: firstApp.index + firstApp.entries.length }));
    const next = readMessages(r).filter((m) => m.type === MessageType.App);
    expect(next.length).toBe(1);
    expect(next[0]!.entries.length).toBe(7);
  });

  it('the window is also bounded by bytes', () => {
    const entrySize = ENTRY_HEADER_BYTES + 100;
    const r = leaderWithFollowerInReplicate({ maxInflightBytes: 2 * entrySize, maxMessageBytes: entrySize, maxInflightMessages: 100 });
    const sent = [];
    for (let i = 0; i < 5; i++) {
      proposeBytes(r, 100);
      sent.push(...readMessages(r));
    }
    expect(appsTo(sent, 2n)).toBe(2);
    expect(r.trk.mustGet(2n).inflights.full()).toBe(true);
  });

  it('a MsgApp carries at most maxMessageBytes of entries (at least one)', () => {
    const entrySize = ENTRY_HEADER_BYTES + 100;
    const cluster = new Cluster(2, () => ({ maxMessageBytes: 3 * entrySize }));
    cluster.elect(1n);
    cluster.cut(1n, 2n);
    for (let i = 0; i < 10; i++) cluster.raw(1n).propose(new Uint8Array(100));
    cluster.stabilize();
    cluster.heal();
    cluster.tickAll(5);
    const apps = cluster.delivered.filter((m) => m.type === MessageType.App && m.entries.length > 0);
    expect(Math.max(...apps.map((m) => m.entries.length))).toBeLessThanOrEqual(3);
    expect(cluster.get(2n).applied.length).toBe(10);
  });

  it('probe state sends one MsgApp, then nothing more until an answer or the next heartbeat', () => {
    const r = newTestRaft(1n, 5, 1, storageWithVoters([1n, 2n]));
    r.becomeCandidate();
    r.becomeLeader();
    expect(r.trk.mustGet(2n).state).toBe(ProgressState.Probe);
    const sent = [];
    for (let i = 0; i < 5; i++) {
      proposeBytes(r, 10);
      sent.push(...readMessages(r));
    }
    // becomeLeader sends nothing itself; the first proposal probes, the next four wait.
    expect(appsTo(sent, 2n)).toBe(1);
    r.step(msg(MessageType.HeartbeatResp, 2n, 1n, { term: r.term }));
    expect(appsTo(readMessages(r), 2n)).toBe(1);
  });

  it('fast log rejection: a follower with a long divergent tail is repaired in one probe per term', () => {
    const leaderStorage = storageWithVoters([1n, 2n, 3n]);
    leaderStorage.append(entriesWithTerms([1, 3, 3, 3, 5, 5, 5, 5, 5]));
    const leader = newTestRaft(1n, 10, 1, leaderStorage);
    leader.loadState({ term: 5, vote: 1n, commit: 1 });
    const followerStorage = storageWithVoters([1n, 2n, 3n]);
    followerStorage.append(entriesWithTerms([1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]));
    const follower = newTestRaft(2n, 10, 1, followerStorage);
    follower.loadState({ term: 5, vote: 0n, commit: 1 });
    leader.becomeCandidate();
    leader.becomeLeader();
    leader.step(msg(MessageType.HeartbeatResp, 2n, 1n, { term: leader.term }));
    let rejections = 0;
    for (let round = 0; round < 20; round++) {
      const toFollower = readMessages(leader).filter((m) => m.to === 2n && m.type === MessageType.App);
      if (toFollower.length === 0) break;
      for (const m of toFollower) follower.step(m);
      for (const m of readMessages(follower)) {
        if (m.reject) rejections++;
        leader.step(m);
      }
    }
    expect(follower.log.lastIndex()).toBe(leader.log.lastIndex());
    expect(follower.log.lastTerm()).toBe(leader.term);
    // Without hints this would take one rejection per divergent index (about 15).
    expect(rejections).toBeLessThanOrEqual(2);
  });

  it('duplicated and reordered acknowledgements never move match or commit backwards', () => {
    const r = leaderWithFollowerInReplicate({});
    for (let i = 0; i < 4; i++) proposeBytes(r, 10);
    advanceMessagesAfterAppend(r);
    const last = r.log.lastIndex();
    r.step(msg(MessageType.AppResp, 2n, 1n, { term: r.term, index: last }));
    const committed = r.log.committed;
    expect(committed).toBe(last);
    for (const stale of [last - 2, last - 3, last, last - 1]) r.step(msg(MessageType.AppResp, 2n, 1n, { term: r.term, index: stale }));
    expect(r.trk.mustGet(2n).match).toBe(last);
    expect(r.log.committed).toBe(committed);
  });
});
