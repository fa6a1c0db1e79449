// Membership changes through the RawNode API and the tracker, beyond the scripted scenarios.
import { describe, expect, it } from 'vitest';
import { ConfChangeTransition, ConfChangeType } from './confchange/conf-change';
import { ConfChangeError } from './errors';
import { MessageType } from './message';
import { ProgressTracker } from './tracker';
import type { Entry } from './types';
import { EntryType, votersConfState } from './types';
import { Cluster } from './test/cluster';
import { advanceMessagesAfterAppend, entry, msg, newTestRaft, persistAndApply, readMessages, storageWithVoters } from './test/raft-harness';
import { decodeConfChangeEntry, encodeConfChange } from './codec/codec';
import { MemoryStorage } from './memory-storage';
import { RawNode } from './raw-node';
import { SeededRng } from '@ward/shared/clock';

const NO_CONTEXT = new Uint8Array(0);

describe('the vote tally', () => {
  it("counts voters only: a learner's grant never decides an election", () => {
    const trk = new ProgressTracker(16, 0);
    trk.restore({ ...votersConfState([1n, 2n, 3n]), learners: [4n, 5n] }, 1);
    trk.recordVote(1n, true);
    trk.recordVote(4n, true);
    trk.recordVote(5n, true);
    expect(trk.tallyVotes().result).toBe('pending');
    trk.recordVote(2n, false);
    trk.recordVote(3n, false);
    expect(trk.tallyVotes().result).toBe('lost');
  });

  it('in a joint configuration needs both halves', () => {
    const trk = new ProgressTracker(16, 0);
    trk.restore({ ...votersConfState([1n, 4n, 5n]), votersOutgoing: [1n, 2n, 3n] }, 1);
    for (const id of [1n, 4n, 5n]) trk.recordVote(id, true);
    expect(trk.tallyVotes().result).toBe('pending');
    trk.recordVote(2n, false);
    trk.recordVote(3n, false);
    expect(trk.tallyVotes().result).toBe('lost');
  });
});

describe('demotion in a joint configuration', () => {
  it('a voter being demoted stays a voter until the joint configuration is left, then is a learner', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.raw(1n).proposeConfChange({ transition: ConfChangeTransition.JointExplicit, changes: [{ type: ConfChangeType.AddLearnerNode, nodeId: 3n }], context: NO_CONTEXT });
    cluster.stabilize();
    expect(cluster.raw(1n).confState()).toMatchObject({ voters: [1n, 2n], votersOutgoing: [1n, 2n, 3n], learnersNext: [3n] });
    expect(cluster.raw(1n).status().progress.get(3n)?.isLearner).toBe(false);
    // Still an (outgoing) voter: leadership can go to it.
    cluster.raw(1n).transferLeader(3n);
    cluster.stabilize();
    expect(cluster.leader()).toBe(3n);
    cluster.raw(3n).proposeConfChange({ transition: ConfChangeTransition.Auto, changes: [], context: NO_CONTEXT });
    cluster.stabilize();
    // Leaving the joint configuration demotes the leader itself: it steps down.
    expect(cluster.raw(3n).confState()).toMatchObject({ voters: [1n, 2n], votersOutgoing: [], learners: [3n] });
    expect(cluster.raw(3n).basicStatus().role).toBe('follower');
  });
});

describe('one membership change at a time', () => {
  it('a new leader turns a change into an empty entry until its whole log is applied', () => {
    const storage = storageWithVoters([1n, 2n, 3n]);
    storage.append([entry(1, 1), entry(2, 1)]);
    const r = newTestRaft(1n, 10, 1, storage);
    r.becomeCandidate();
    r.becomeLeader();
    readMessages(r);
    const cc = { type: EntryType.ConfChange, term: 0, index: 0, data: encodeConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: 4n, context: NO_CONTEXT }) };
    r.step(msg(MessageType.Prop, 1n, 1n, { entries: [cc] }));
    expect(r.log.lastIndex()).toBe(4);
    expect(r.log.slice(4, 5, 1e9)[0]!.type).toBe(EntryType.Normal);
    // Once everything up to the no-op is committed and applied, the same change is appended.
    for (const id of [2n, 3n]) r.step(msg(MessageType.AppResp, id, 1n, { term: r.term, index: 4 }));
    persistAndApply(r, storage);
    advanceMessagesAfterAppend(r);
    expect(r.log.applied).toBe(4);
    r.step(msg(MessageType.Prop, 1n, 1n, { entries: [cc] }));
    expect(r.log.slice(5, 6, 1e9)[0]!.type).toBe(EntryType.ConfChange);
    expect(r.pendingConfIndex).toBe(5);
  });
});

describe('one membership change per batch', () => {
  it('of two changes proposed together, the second becomes an empty entry', () => {
    const storage = storageWithVoters([1n, 2n, 3n]);
    const r = newTestRaft(1n, 10, 1, storage);
    r.becomeCandidate();
    r.becomeLeader();
    for (const id of [2n, 3n]) r.step(msg(MessageType.AppResp, id, 1n, { term: r.term, index: 1 }));
    persistAndApply(r, storage);
    const learner = (id: bigint): Entry => ({ type: EntryType.ConfChange, term: 0, index: 0, data: encodeConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: id, context: NO_CONTEXT }) });
    r.step(msg(MessageType.Prop, 1n, 1n, { entries: [learner(4n), learner(5n)] }));
    expect(r.log.slice(2, 4, 1e9).map((e) => e.type)).toEqual([EntryType.ConfChange, EntryType.Normal]);
    expect(r.pendingConfIndex).toBe(2);
  });
});

describe('RawNode.applyConfChange', () => {
  it('returns the new configuration, and refuses (changing nothing) one that cannot apply', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    const node = cluster.raw(2n);
    expect(() => node.applyConfChange({ transition: ConfChangeTransition.Auto, changes: [], context: NO_CONTEXT })).toThrow(ConfChangeError);
    expect(node.confState()).toEqual(votersConfState([1n, 2n, 3n]));
    const cs = node.applyConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: 7n, context: NO_CONTEXT });
    expect(cs).toEqual({ ...votersConfState([1n, 2n, 3n]), learners: [7n] });
    expect(node.confState()).toEqual(cs);
  });

  it('a proposal forwarded by a follower is checked and appended by the leader, with its context', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.addNode(4n);
    cluster.raw(3n).proposeConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: 4n, context: Uint8Array.of(9) });
    cluster.stabilize();
    const applied = cluster.get(2n).confChanges;
    expect(applied.map((c) => c.confState.learners)).toEqual([[4n]]);
    const e = cluster.get(4n).storage.entries(applied[0]!.index, applied[0]!.index + 1, 1e9)[0]!;
    expect(decodeConfChangeEntry(e).context).toEqual(Uint8Array.of(9));
  });

  it('a change that cannot apply is refused at the leader and nothing is appended', () => {
    const cluster = new Cluster(1);
    cluster.elect(1n);
    const before = cluster.raw(1n).basicStatus().lastIndex;
    expect(() => cluster.raw(1n).proposeConfChange({ type: ConfChangeType.RemoveNode, nodeId: 1n, context: NO_CONTEXT })).toThrow(/invalid-conf-change/);
    expect(cluster.raw(1n).basicStatus().lastIndex).toBe(before);
  });
});

describe('a snapshot while a membership change is being applied', () => {
  it('is not restored until the application has applied the change handed out to it', () => {
    const storage = new MemoryStorage(votersConfState([1n, 2n, 3n]));
    const node = new RawNode({ id: 2n, storage, rng: new SeededRng(5) });
    const addLearner: Entry = { type: EntryType.ConfChange, term: 1, index: 2, data: encodeConfChange({ type: ConfChangeType.AddLearnerNode, nodeId: 4n, context: NO_CONTEXT }) };
    node.step(msg(MessageType.App, 1n, 2n, { term: 1, index: 0, logTerm: 0, entries: [entry(1, 1), addLearner], commit: 2 }));
    const rd = node.ready();
    expect(rd.committedEntries.map((e) => e.index)).toEqual([1, 2]);
    storage.append(rd.entries);
    if (rd.hardState !== undefined) storage.setHardState(rd.hardState);
    // The leader's snapshot (its configuration already holds learner 4) arrives while entry 2 is
    // still being applied here: it is not restored, so the change is not applied on top of it.
    const snapshot = { metadata: { index: 10, term: 1, confState: { ...votersConfState([1n, 2n, 3n]), learners: [4n] } }, data: new Uint8Array(0) };
    node.step(msg(MessageType.Snap, 1n, 2n, { term: 1, snapshot }));
    expect(node.confState().learners).toEqual([]);
    expect(node.applyConfChange(decodeConfChangeEntry(addLearner)).learners).toEqual([4n]);
    node.advance();
    const refused = node.ready();
    expect(refused.snapshot).toBeUndefined();
    expect(refused.messages.filter((m) => m.type === MessageType.AppResp).map((m) => m.index)).toContain(2);
    node.advance();
    // Once it is applied, the same snapshot is restored, with its configuration as it is.
    node.step(msg(MessageType.Snap, 1n, 2n, { term: 1, snapshot }));
    const restored = node.ready();
    expect(restored.snapshot?.metadata.index).toBe(10);
    expect(node.confState().learners).toEqual([4n]);
    expect(node.confState().votersOutgoing).toEqual([]);
  });
});
