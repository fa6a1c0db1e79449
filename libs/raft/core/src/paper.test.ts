// The scenarios of the Raft paper ("In Search of an Understandable Consensus Algorithm", Ongaro &
// Ousterhout), section by section, in the shape of etcd-io/raft's raft_paper_test.go: build a
// node in a known state, step crafted messages, check what it sends and what state it is in.
import { describe, expect, it } from 'vitest';
import { NO_NODE } from './ids';
import { MessageType } from './message';
import type { Raft } from './raft';
import {
  TestNetwork,
  acceptAndReply,
  advanceMessagesAfterAppend,
  allEntries,
  commitNoopEntry,
  entriesWithTerms,
  entry,
  ids,
  idsBySize,
  msg,
  newTestRaft,
  readMessages,
  sortedMessages,
  storageWithVoters,
  view,
} from './test/raft-harness';
import type { Entry } from './types';
import { Role } from './types';

const n1 = 1n;
const n2 = 2n;
const n3 = 3n;

function threeNodeRaft(): Raft {
  return newTestRaft(n1, 10, 1, storageWithVoters([n1, n2, n3]));
}

function propose(r: Raft, data = 'some data'): void {
  r.step(msg(MessageType.Prop, n1, n1, { entries: [entry(0, 0, data)] }));
}

function intoRole(r: Raft, role: Role): void {
  if (role === Role.Follower) r.becomeFollower(1, n2);
  if (role === Role.Candidate) r.becomeCandidate();
  if (role === Role.Leader) {
    r.becomeCandidate();
    r.becomeLeader();
  }
}

describe('§5.1 terms', () => {
  // "If one server's current term is smaller than the other's, then it updates its current term
  // to the larger value. If a candidate or leader discovers that its term is out of date, it
  // immediately reverts to follower state."
  for (const [name, role] of [
    ['TestFollowerUpdateTermFromMessage', Role.Follower],
    ['TestCandidateUpdateTermFromMessage', Role.Candidate],
    ['TestLeaderUpdateTermFromMessage', Role.Leader],
  ] as const) {
    it(`${name} (§5.1): a ${role} adopts a higher term and becomes follower`, () => {
      const r = threeNodeRaft();
      intoRole(r, role);
      r.step(msg(MessageType.App, n2, n1, { term: 2 }));
      expect(r.term).toBe(2);
      expect(r.role).toBe(Role.Follower);
    });
  }

  it('TestRejectStaleTermMessage (§5.1): a request with a stale term is not acted on', () => {
    const r = threeNodeRaft();
    r.loadState({ term: 2, vote: NO_NODE, commit: 0 });
    r.becomeFollower(2, n3);
    r.step(msg(MessageType.App, n2, n1, { term: 1, entries: [entry(1, 1, 'stale')] }));
    expect(r.log.lastIndex()).toBe(0);
    expect(r.lead).toBe(n3);
    expect(r.term).toBe(2);
    expect(readMessages(r)).toEqual([]);
  });
});

describe('§5.2 leader election', () => {
  it('TestStartAsFollower (§5.2): servers begin as followers', () => {
    expect(threeNodeRaft().role).toBe(Role.Follower);
  });

  it('TestLeaderBcastBeat (§5.2): after the heartbeat interval the leader sends empty heartbeats to all', () => {
    const heartbeatInterval = 1;
    const r = newTestRaft(n1, 10, heartbeatInterval, storageWithVoters([n1, n2, n3]));
    r.becomeCandidate();
    r.becomeLeader();
    for (let i = 0; i < 10; i++) r.appendEntry([entry(i + 1, 0)]);
    readMessages(r);
    for (let i = 0; i < heartbeatInterval; i++) r.tick();
    expect(sortedMessages(readMessages(r)).map(view)).toEqual(
      [n2, n3].map((to) => view(msg(MessageType.Heartbeat, n1, to, { term: 1, commit: 0 }))),
    );
  });

  for (const [name, role] of [
    ['TestFollowerStartElection', Role.Follower],
    ['TestCandidateStartNewElection', Role.Candidate],
  ] as const) {
    it(`${name} (§5.2): on election timeout a ${role} increments its term, votes for itself and requests votes`, () => {
      const electionTimeout = 10;
      const r = newTestRaft(n1, electionTimeout, 1, storageWithVoters([n1, n2, n3]));
      intoRole(r, role);
      for (let i = 1; i < 2 * electionTimeout; i++) r.tick();
      advanceMessagesAfterAppend(r);
      expect(r.term).toBe(2);
      expect(r.role).toBe(Role.Candidate);
      expect(r.trk.tallyVotes().granted).toBe(1);
      expect(r.vote).toBe(n1);
      expect(sortedMessages(readMessages(r)).map(view)).toEqual(
        [n2, n3].map((to) => view(msg(MessageType.Vote, n1, to, { term: 2, index: 0, logTerm: 0 }))),
      );
    });
  }

  it('TestLeaderElectionInOneRoundRPC (§5.2): win with a majority, lose to a majority of denials, else wait', () => {
    const cases: { size: number; votes: [bigint, boolean][]; role: Role }[] = [
      { size: 1, votes: [], role: Role.Leader },
      { size: 3, votes: [[2n, true], [3n, true]], role: Role.Leader },
      { size: 3, votes: [[2n, true]], role: Role.Leader },
      { size: 5, votes: [[2n, true], [3n, true], [4n, true], [5n, true]], role: Role.Leader },
      { size: 5, votes: [[2n, true], [3n, true], [4n, true]], role: Role.Leader },
      { size: 5, votes: [[2n, true], [3n, true]], role: Role.Leader },
      { size: 3, votes: [[2n, false], [3n, false]], role: Role.Follower },
      { size: 5, votes: [[2n, false], [3n, false], [4n, false], [5n, false]], role: Role.Follower },
      { size: 5, votes: [[2n, true], [3n, false], [4n, false], [5n, false]], role: Role.Follower },
      { size: 3, votes: [], role: Role.Candidate },
      { size: 5, votes: [[2n, true]], role: Role.Candidate },
      { size: 5, votes: [[2n, false], [3n, false]], role: Role.Candidate },
      { size: 5, votes: [], role: Role.Candidate },
    ];
    for (const c of cases) {
      const r = newTestRaft(n1, 10, 1, storageWithVoters(idsBySize(c.size)));
      r.step(msg(MessageType.Hup, n1, n1));
      advanceMessagesAfterAppend(r);
      for (const [from, granted] of c.votes) r.step(msg(MessageType.VoteResp, from, n1, { term: r.term, reject: !granted }));
      expect({ size: c.size, votes: c.votes.length, role: r.role, term: r.term }).toEqual({ size: c.size, votes: c.votes.length, role: c.role, term: 1 });
    }
  });

  it('TestFollowerVote (§5.2): at most one vote per term, first come first served', () => {
    const cases: [bigint, bigint, boolean][] = [
      [NO_NODE, n2, false],
      [NO_NODE, n3, false],
      [n2, n2, false],
      [n3, n3, false],
      [n2, n3, true],
      [n3, n2, true],
    ];
    for (const [vote, candidate, rejected] of cases) {
      const r = threeNodeRaft();
      r.loadState({ term: 1, vote, commit: 0 });
      r.step(msg(MessageType.Vote, candidate, n1, { term: 1 }));
      expect(r.msgsAfterAppend.map(view)).toEqual([view(msg(MessageType.VoteResp, n1, candidate, { term: 1, reject: rejected }))]);
    }
  });

  it('TestCandidateFallback (§5.2): AppendEntries from a leader whose term is at least ours ends the candidacy', () => {
    for (const term of [1, 2]) {
      const r = threeNodeRaft();
      r.step(msg(MessageType.Hup, n1, n1));
      expect(r.role).toBe(Role.Candidate);
      r.step(msg(MessageType.App, n2, n1, { term }));
      expect(r.role).toBe(Role.Follower);
      expect(r.term).toBe(term);
    }
  });

  for (const [name, role] of [
    ['TestFollowerElectionTimeoutRandomized', Role.Follower],
    ['TestCandidateElectionTimeoutRandomized', Role.Candidate],
  ] as const) {
    it(`${name} (§5.2): election timeouts of a ${role} are chosen randomly from [et, 2et)`, () => {
      const et = 10;
      const r = newTestRaft(n1, et, 1, storageWithVoters([n1, n2, n3]));
      const seen = new Set<number>();
      for (let round = 0; round < 50 * et; round++) {
        if (role === Role.Follower) r.becomeFollower(r.term + 1, n2);
        else r.becomeCandidate();
        let ticks = 0;
        while (readMessages(r).length === 0) {
          r.tick();
          ticks++;
        }
        seen.add(ticks);
      }
      expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: et }, (_, i) => et + i));
    });
  }

  for (const [name, role] of [
    ['TestFollowersElectionTimeoutNonconflict', Role.Follower],
    ['TestCandidatesElectionTimeoutNonconflict', Role.Candidate],
  ] as const) {
    it(`${name} (§5.2): randomized timeouts make simultaneous ${role} timeouts rare`, () => {
      const et = 10;
      const peers = idsBySize(5);
      const rafts = peers.map((id) => newTestRaft(id, et, 1, storageWithVoters(peers)));
      let conflicts = 0;
      for (let round = 0; round < 1000; round++) {
        for (const r of rafts) {
          if (role === Role.Follower) r.becomeFollower(r.term + 1, NO_NODE);
          else r.becomeCandidate();
        }
        let timedOut = 0;
        while (timedOut === 0) {
          for (const r of rafts) {
            r.tick();
            if (readMessages(r).length > 0) timedOut++;
          }
        }
        if (timedOut > 1) conflicts++;
      }
      expect(conflicts / 1000).toBeLessThanOrEqual(0.3);
    });
  }
});

describe('§5.3 log replication', () => {
  function leaderWithCommittedNoop(size = 3): { r: Raft; li: number } {
    const storage = storageWithVoters(idsBySize(size));
    const r = newTestRaft(n1, 10, 1, storage);
    r.becomeCandidate();
    r.becomeLeader();
    commitNoopEntry(r, storage);
    return { r, li: r.log.lastIndex() };
  }

  it('TestLeaderStartReplication (§5.3): the leader appends a proposal and sends AppendEntries to all', () => {
    const { r, li } = leaderWithCommittedNoop();
    propose(r);
    expect(r.log.lastIndex()).toBe(li + 1);
    expect(r.log.committed).toBe(li);
    const appended = [entry(li + 1, 1, 'some data')];
    expect(sortedMessages(readMessages(r)).map(view)).toEqual(
      [n2, n3].map((to) => view(msg(MessageType.App, n1, to, { term: 1, index: li, logTerm: 1, entries: appended, commit: li }))),
    );
    expect(ids(r.log.nextUnstableEntries())).toEqual([[li + 1, 1]]);
  });

  it('TestLeaderCommitEntry (§5.3): once replicated on a majority the entry commits, is applied, and the commit index travels', () => {
    const { r, li } = leaderWithCommittedNoop();
    propose(r);
    for (const m of readMessages(r)) r.step(acceptAndReply(m));
    expect(r.log.committed).toBe(li + 1);
    expect(ids(r.log.nextCommittedEntries())).toEqual([[li + 1, 1]]);
    const sent = sortedMessages(readMessages(r));
    expect(sent.map((m) => [m.to, m.type, m.commit])).toEqual([
      [n2, MessageType.App, li + 1],
      [n3, MessageType.App, li + 1],
    ]);
  });

  it('TestLeaderAcknowledgeCommit (§5.3): an entry commits exactly when a majority, the leader included, holds it', () => {
    const cases: [number, bigint[], boolean][] = [
      [1, [], true],
      [3, [], false],
      [3, [2n], true],
      [3, [2n, 3n], true],
      [5, [], false],
      [5, [2n], false],
      [5, [2n, 3n], true],
      [5, [2n, 3n, 4n], true],
      [5, [2n, 3n, 4n, 5n], true],
    ];
    for (const [size, acceptors, committed] of cases) {
      const { r, li } = leaderWithCommittedNoop(size);
      propose(r);
      advanceMessagesAfterAppend(r);
      for (const m of r.msgs) if (acceptors.includes(m.to)) r.step(acceptAndReply(m));
      expect({ size, acceptors, committed: r.log.committed > li }).toEqual({ size, acceptors, committed });
    }
  });

  it("TestLeaderCommitPrecedingEntries (§5.3): committing an entry commits all preceding ones, earlier terms' too", () => {
    const logs: Entry[][] = [[], [entry(1, 2)], [entry(1, 1), entry(2, 2)], [entry(1, 1)]];
    for (const log of logs) {
      const storage = storageWithVoters([n1, n2, n3]);
      storage.append(log);
      const r = newTestRaft(n1, 10, 1, storage);
      r.loadState({ term: 2, vote: NO_NODE, commit: 0 });
      r.becomeCandidate();
      r.becomeLeader();
      propose(r);
      for (const m of readMessages(r)) r.step(acceptAndReply(m));
      const li = log.length;
      expect(ids(r.log.nextCommittedEntries())).toEqual([...ids(log), [li + 1, 3], [li + 2, 3]]);
    }
  });

  it("TestFollowerCommitEntry (§5.3): a follower applies up to the leader's commit index, in log order", () => {
    const cases: [Entry[], number][] = [
      [[entry(1, 1, 'some data')], 1],
      [[entry(1, 1, 'some data'), entry(2, 1, 'some data2')], 2],
      [[entry(1, 1, 'some data2'), entry(2, 1, 'some data')], 2],
      [[entry(1, 1, 'some data'), entry(2, 1, 'some data2')], 1],
    ];
    for (const [entries, commit] of cases) {
      const r = threeNodeRaft();
      r.becomeFollower(1, n2);
      r.step(msg(MessageType.App, n2, n1, { term: 1, entries, commit }));
      expect(r.log.committed).toBe(commit);
      expect(r.log.nextCommittedEntries()).toEqual(entries.slice(0, commit));
    }
  });

  it('TestFollowerCheckMsgApp (§5.3): a follower refuses entries when it lacks the preceding (index, term), with a hint', () => {
    const cases: { term: number; index: number; answer: number; reject: boolean; hint: number; hintTerm: number }[] = [
      { term: 0, index: 0, answer: 1, reject: false, hint: 0, hintTerm: 0 }, // matches committed entries
      { term: 1, index: 1, answer: 1, reject: false, hint: 0, hintTerm: 0 },
      { term: 2, index: 2, answer: 2, reject: false, hint: 0, hintTerm: 0 }, // matches uncommitted entries
      { term: 1, index: 2, answer: 2, reject: true, hint: 1, hintTerm: 1 }, // term mismatch
      { term: 3, index: 3, answer: 3, reject: true, hint: 2, hintTerm: 2 }, // entry missing
    ];
    for (const c of cases) {
      const storage = storageWithVoters([n1, n2, n3]);
      storage.append([entry(1, 1), entry(2, 2)]);
      const r = newTestRaft(n1, 10, 1, storage);
      r.loadState({ term: 0, vote: NO_NODE, commit: 1 });
      r.becomeFollower(2, n2);
      r.step(msg(MessageType.App, n2, n1, { term: 2, logTerm: c.term, index: c.index }));
      const expected = msg(MessageType.AppResp, n1, n2, { term: 2, index: c.answer, reject: c.reject, rejectHint: c.hint, logTerm: c.hintTerm });
      expect(readMessages(r).map(view)).toEqual([view(expected)]);
    }
  });

  it('TestFollowerAppendEntries (§5.3): a follower deletes a conflicting suffix, appends, and marks it for persisting', () => {
    const cases: { index: number; term: number; entries: Entry[]; all: number[][]; unstable: number[][] }[] = [
      { index: 2, term: 2, entries: [entry(3, 3)], all: [[1, 1], [2, 2], [3, 3]], unstable: [[3, 3]] },
      { index: 1, term: 1, entries: [entry(2, 3), entry(3, 4)], all: [[1, 1], [2, 3], [3, 4]], unstable: [[2, 3], [3, 4]] },
      { index: 0, term: 0, entries: [entry(1, 1)], all: [[1, 1], [2, 2]], unstable: [] },
      { index: 0, term: 0, entries: [entry(1, 3)], all: [[1, 3]], unstable: [[1, 3]] },
    ];
    for (const c of cases) {
      const storage = storageWithVoters([n1, n2, n3]);
      storage.append([entry(1, 1), entry(2, 2)]);
      const r = newTestRaft(n1, 10, 1, storage);
      r.becomeFollower(2, n2);
      r.step(msg(MessageType.App, n2, n1, { term: 2, logTerm: c.term, index: c.index, entries: c.entries }));
      expect(ids(allEntries(r))).toEqual(c.all);
      expect(ids(r.log.nextUnstableEntries())).toEqual(c.unstable);
    }
  });

  it("TestLeaderSyncFollowerLog (§5.3, Figure 7): a new leader brings every divergent follower log in line with its own", () => {
    const leaderTerms = [1, 1, 1, 4, 4, 5, 5, 6, 6, 6];
    const term = 8;
    const followers: Record<string, number[]> = {
      a: [1, 1, 1, 4, 4, 5, 5, 6, 6],
      b: [1, 1, 1, 4, 4],
      c: [1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6],
      d: [1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7],
      e: [1, 1, 1, 4, 4, 4, 4],
      f: [1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3],
    };
    for (const [name, followerTerms] of Object.entries(followers)) {
      const leadStorage = storageWithVoters([n1, n2, n3]);
      leadStorage.append(entriesWithTerms(leaderTerms));
      const lead = newTestRaft(n1, 10, 1, leadStorage);
      lead.loadState({ term, vote: NO_NODE, commit: lead.log.lastIndex() });
      const followerStorage = storageWithVoters([n1, n2, n3]);
      followerStorage.append(entriesWithTerms(followerTerms));
      const follower = newTestRaft(n2, 10, 1, followerStorage);
      follower.loadState({ term: term - 1, vote: NO_NODE, commit: 0 });
      // Node 3 is a black hole whose vote we forge: the follower's log may be more up to date.
      const net = new TestNetwork([lead, follower, undefined]);
      net.campaign(n1);
      net.send(msg(MessageType.VoteResp, n3, n1, { term: term + 1 }));
      net.propose(n1, '');
      expect({ name, role: lead.role }).toEqual({ name, role: Role.Leader });
      expect({ name, log: ids(allEntries(follower)), commit: follower.log.committed }).toEqual({
        name,
        log: ids(allEntries(lead)),
        commit: lead.log.committed,
      });
    }
  });
});

describe('§5.4 safety', () => {
  it('TestVoteRequest (§5.4.1): RequestVote carries the last log index and term, to every peer', () => {
    const cases: [Entry[], number][] = [
      [[entry(1, 1)], 2],
      [[entry(1, 1), entry(2, 2)], 3],
    ];
    for (const [entries, expectedTerm] of cases) {
      const r = threeNodeRaft();
      r.step(msg(MessageType.App, n2, n1, { term: expectedTerm - 1, logTerm: 0, index: 0, entries }));
      readMessages(r);
      for (let i = 1; i < r.electionTimeout * 2; i++) r.tick();
      const sent = sortedMessages(readMessages(r));
      const last = entries[entries.length - 1]!;
      expect(sent.map((m) => [m.type, m.to, m.term, m.index, m.logTerm])).toEqual([
        [MessageType.Vote, n2, expectedTerm, last.index, last.term],
        [MessageType.Vote, n3, expectedTerm, last.index, last.term],
      ]);
    }
  });

  it('TestVoter (§5.4.1): a voter denies its vote when its own log is more up to date', () => {
    const cases: [Entry[], number, number, boolean][] = [
      // same last term: the longer log wins
      [[entry(1, 1)], 1, 1, false],
      [[entry(1, 1)], 1, 2, false],
      [[entry(1, 1), entry(2, 1)], 1, 1, true],
      // candidate has the higher last term
      [[entry(1, 1)], 2, 1, false],
      [[entry(1, 1)], 2, 2, false],
      [[entry(1, 1), entry(2, 1)], 2, 1, false],
      // voter has the higher last term
      [[entry(1, 2)], 1, 1, true],
      [[entry(1, 2)], 1, 2, true],
      [[entry(1, 2), entry(2, 2)], 1, 1, true],
      [[entry(1, 1), entry(2, 1)], 1, 1, true],
    ];
    for (const [log, logTerm, index, rejected] of cases) {
      const storage = storageWithVoters([n1, n2]);
      storage.append(log);
      const r = newTestRaft(n1, 10, 1, storage);
      r.step(msg(MessageType.Vote, n2, n1, { term: 3, logTerm, index }));
      const sent = readMessages(r);
      expect(sent.map((m) => [m.type, m.reject])).toEqual([[MessageType.VoteResp, rejected]]);
    }
  });

  it('TestLeaderOnlyCommitsLogFromCurrentTerm (§5.4.2, Figure 8): replicas of an older term are never counted to commit', () => {
    const cases: [number, number][] = [
      [1, 0], // earlier-term entries on a majority: not committed
      [2, 0],
      [3, 3], // an entry of the current term on a majority: commits it and everything before
    ];
    for (const [acked, expectedCommit] of cases) {
      const storage = storageWithVoters([n1, n2]);
      storage.append([entry(1, 1), entry(2, 2)]);
      const r = newTestRaft(n1, 10, 1, storage);
      r.loadState({ term: 2, vote: NO_NODE, commit: 0 });
      r.becomeCandidate();
      r.becomeLeader();
      readMessages(r);
      propose(r, '');
      r.step(msg(MessageType.AppResp, n2, n1, { term: r.term, index: acked }));
      advanceMessagesAfterAppend(r);
      expect({ acked, commit: r.log.committed }).toEqual({ acked, commit: expectedCommit });
    }
  });
});
