// CheckQuorum: a leader that has not heard from a quorum for an election timeout steps down, and
// followers that heard from a live leader recently ignore vote requests (leader lease).
import { describe, expect, it } from 'vitest';
import { CAMPAIGN_TRANSFER_CONTEXT } from './constants';
import { MessageType, message } from './message';
import { Cluster } from './test/cluster';
import { Role } from './types';

describe('CheckQuorum', () => {
  it('an isolated leader steps down within one election timeout (plus one check period)', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.isolate(1n);
    let ticks = 0;
    while (cluster.raw(1n).basicStatus().role === Role.Leader && ticks < 100) {
      cluster.tick(1n);
      cluster.stabilize();
      ticks++;
    }
    expect(cluster.raw(1n).basicStatus().role).toBe(Role.Follower);
    // The check runs every election timeout (10 ticks); the first run may still see old activity.
    expect(ticks).toBeLessThanOrEqual(2 * 10);
  });

  it('a leader that hears from a quorum keeps leading indefinitely', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.isolate(3n);
    cluster.tickAll(200);
    expect(cluster.leader()).toBe(1n);
    expect(cluster.raw(1n).basicStatus().term).toBe(1);
  });

  it('without CheckQuorum an isolated leader keeps believing it leads (the stale leader CheckQuorum removes)', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false }));
    cluster.elect(1n);
    cluster.isolate(1n);
    cluster.tickAll(100);
    expect(cluster.raw(1n).basicStatus().role).toBe(Role.Leader);
  });

  it('a follower in its leader lease ignores a vote request with a higher term', () => {
    const cluster = new Cluster(3, () => ({ preVote: false }));
    cluster.elect(1n);
    const follower = cluster.raw(2n);
    follower.step(message(MessageType.Vote, { from: 3n, to: 2n, term: 5, index: 100, logTerm: 4 }));
    cluster.processAll();
    expect(follower.basicStatus()).toMatchObject({ term: 1, lead: 1n });
    expect(cluster.inFlight.filter((m) => m.type === MessageType.VoteResp)).toEqual([]);
  });

  it('a vote request forced by a leader transfer bypasses the lease', () => {
    const cluster = new Cluster(3, () => ({ preVote: false }));
    cluster.elect(1n);
    const follower = cluster.raw(2n);
    const last = follower.basicStatus().lastIndex;
    follower.step(message(MessageType.Vote, { from: 3n, to: 2n, term: 5, index: last, logTerm: 1, context: CAMPAIGN_TRANSFER_CONTEXT }));
    cluster.processAll();
    expect(follower.basicStatus()).toMatchObject({ term: 5, vote: 3n });
  });
});
