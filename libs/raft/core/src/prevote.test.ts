// PreVote (thesis §9.6): a node asks "would you vote for me?" before bumping its term.
import { describe, expect, it } from 'vitest';
import { MessageType, message } from './message';
import { Cluster } from './test/cluster';
import { Role } from './types';

function terms(cluster: Cluster): number[] {
  return cluster.ids.map((id) => cluster.raw(id).basicStatus().term);
}

describe('PreVote', () => {
  it('a partitioned follower does not raise its term, and rejoins without disturbing the leader', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false }));
    cluster.elect(1n);
    const termBefore = cluster.raw(1n).basicStatus().term;
    cluster.isolate(3n);
    cluster.tickAll(100);
    // It keeps trying pre-elections, none of which can change its term.
    expect(cluster.raw(3n).basicStatus().term).toBe(termBefore);
    expect(cluster.raw(3n).basicStatus().role).toBe(Role.PreCandidate);
    cluster.heal();
    cluster.tickAll(20);
    expect(cluster.leader()).toBe(1n);
    expect(terms(cluster)).toEqual([termBefore, termBefore, termBefore]);
  });

  it('without PreVote the same partition forces an election when the node rejoins (the disruption PreVote prevents)', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false, preVote: false }));
    cluster.elect(1n);
    const termBefore = cluster.raw(1n).basicStatus().term;
    cluster.isolate(3n);
    cluster.tickAll(100);
    expect(cluster.raw(3n).basicStatus().term).toBeGreaterThan(termBefore);
    cluster.heal();
    // Its next campaign, at a term above the leader's, deposes the leader.
    cluster.tickAll(30);
    expect(Math.min(...terms(cluster))).toBeGreaterThan(termBefore + 1);
  });

  it('a node whose log is behind is refused in the pre-vote; the up-to-date node wins', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false }));
    cluster.elect(1n);
    cluster.isolate(3n);
    cluster.propose(1n, 'only-on-1-and-2');
    cluster.heal();
    cluster.isolate(1n);
    // Node 3 campaigns first: node 2 has a longer log and refuses the pre-vote.
    cluster.raw(3n).campaign();
    cluster.stabilize();
    expect(cluster.raw(3n).basicStatus().role).not.toBe(Role.Leader);
    expect(cluster.raw(2n).basicStatus().term).toBe(1);
    cluster.elect(2n);
    expect(cluster.leader()).toBe(2n);
    expect(cluster.appliedData(2n)).toEqual(['only-on-1-and-2']);
  });

  it('answering a pre-vote changes neither the voter term nor its vote', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false }));
    cluster.elect(1n);
    const voter = cluster.raw(2n);
    const before = voter.basicStatus();
    cluster.isolate(1n);
    voter.forgetLeader();
    voter.step(message(MessageType.PreVote, { from: 3n, to: 2n, term: before.term + 1, index: before.lastIndex, logTerm: before.term }));
    cluster.processAll();
    const granted = cluster.inFlight.find((m) => m.type === MessageType.PreVoteResp);
    expect(granted?.reject).toBe(false);
    expect(granted?.term).toBe(before.term + 1);
    expect(voter.basicStatus()).toMatchObject({ term: before.term, vote: before.vote });
  });
});
