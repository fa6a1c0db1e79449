// Leader transfer (thesis §3.10): catch the target up, send it TimeoutNow, it campaigns at once.
import { utf8 } from '@ward/shared/bytes';
import { describe, expect, it } from 'vitest';
import { ProposalDroppedError } from './errors';
import { MessageType } from './message';
import { Cluster } from './test/cluster';
import { Role } from './types';

describe('leader transfer', () => {
  it('to an up-to-date follower: it becomes leader in the next term', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.propose(1n, 'a');
    cluster.raw(1n).transferLeader(3n);
    cluster.stabilize();
    expect(cluster.leader()).toBe(3n);
    expect(cluster.raw(3n).basicStatus().term).toBe(2);
    expect(cluster.raw(1n).basicStatus()).toMatchObject({ role: Role.Follower, lead: 3n, leadTransferee: 0n });
  });

  it('requested on a follower: forwarded to the leader', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.raw(2n).transferLeader(2n);
    cluster.stabilize();
    expect(cluster.leader()).toBe(2n);
  });

  it('to a slow follower: the leader first catches it up, then sends TimeoutNow', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.isolate(3n);
    for (const v of ['a', 'b', 'c']) cluster.propose(1n, v);
    cluster.heal();
    const before = cluster.delivered.length;
    cluster.raw(1n).transferLeader(3n);
    cluster.stabilize();
    const after = cluster.delivered.slice(before).filter((m) => m.to === 3n);
    const firstTimeoutNow = after.findIndex((m) => m.type === MessageType.TimeoutNow);
    expect(firstTimeoutNow).toBeGreaterThan(0);
    expect(after.slice(0, firstTimeoutNow).some((m) => m.type === MessageType.App && m.entries.length > 0)).toBe(true);
    expect(cluster.leader()).toBe(3n);
    expect(cluster.appliedData(3n)).toEqual(['a', 'b', 'c']);
  });

  it('drops proposals while the transfer is in progress, and aborts after an election timeout', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.isolate(3n);
    cluster.raw(1n).transferLeader(3n);
    cluster.stabilize();
    expect(cluster.raw(1n).basicStatus().leadTransferee).toBe(3n);
    let dropped: unknown;
    try {
      cluster.raw(1n).propose(utf8('during'));
    } catch (error) {
      dropped = error;
    }
    expect(dropped).toBeInstanceOf(ProposalDroppedError);
    expect((dropped as ProposalDroppedError).reason).toBe('leader-transfer-in-progress');
    cluster.tickAll(10);
    expect(cluster.raw(1n).basicStatus()).toMatchObject({ role: Role.Leader, leadTransferee: 0n });
    cluster.propose(1n, 'after-abort');
    expect(cluster.appliedData(2n)).toEqual(['after-abort']);
  });

  it('to itself or to a non-member: ignored', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.raw(1n).transferLeader(1n);
    cluster.raw(1n).transferLeader(9n);
    cluster.stabilize();
    expect(cluster.leader()).toBe(1n);
    expect(cluster.raw(1n).basicStatus()).toMatchObject({ term: 1, leadTransferee: 0n });
  });
});
