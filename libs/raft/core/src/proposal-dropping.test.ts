// Proposals are refused, with a reason, when no log would take them.
import { utf8 } from '@ward/shared/bytes';
import { describe, expect, it } from 'vitest';
import { ProposalDroppedError } from './errors';
import type { RawNode } from './raw-node';
import { Cluster } from './test/cluster';

function dropReason(node: RawNode, data: string): string | undefined {
  try {
    node.propose(utf8(data));
    return undefined;
  } catch (error) {
    if (error instanceof ProposalDroppedError) return error.reason;
    throw error;
  }
}

describe('proposal dropping', () => {
  it('a leader without a quorum accepts proposals up to maxUncommittedEntriesBytes, then drops them', () => {
    const cluster = new Cluster(3, () => ({ maxUncommittedEntriesBytes: 1000, checkQuorum: false }));
    cluster.elect(1n);
    cluster.isolate(1n);
    const leader = cluster.raw(1n);
    const value = 'x'.repeat(100);
    const outcomes: (string | undefined)[] = [];
    for (let i = 0; i < 15; i++) {
      outcomes.push(dropReason(leader, value));
      cluster.stabilize();
    }
    // 10 proposals of 100 bytes fill the budget exactly; the 11th and later are dropped.
    expect(outcomes.filter((o) => o === undefined).length).toBe(10);
    expect(outcomes.slice(10)).toEqual(Array(5).fill('uncommitted-size-limit'));
    cluster.heal();
    cluster.tickAll(3);
    // Once committed, the budget is free again.
    expect(dropReason(leader, value)).toBeUndefined();
    cluster.stabilize();
    expect(cluster.appliedData(2n).length).toBe(11);
  });

  it('proposals above maxProposalBytes are refused on the proposing node and on the leader', () => {
    const cluster = new Cluster(3, () => ({ maxProposalBytes: 100 }));
    cluster.elect(1n);
    expect(dropReason(cluster.raw(1n), 'x'.repeat(101))).toBe('entry-too-large');
    expect(dropReason(cluster.raw(1n), 'x'.repeat(100))).toBeUndefined();
    cluster.stabilize();
    expect(cluster.appliedData(3n)).toEqual(['x'.repeat(100)]);
  });

  it('a follower without a leader, a candidate, and a follower told not to forward all drop proposals', () => {
    const cluster = new Cluster(3, (id) => ({ disableProposalForwarding: id === 3n }));
    expect(dropReason(cluster.raw(2n), 'no leader yet')).toBe('no-leader');
    cluster.raw(1n).campaign();
    cluster.processAll();
    expect(dropReason(cluster.raw(1n), 'pre-candidate')).toBe('no-leader');
    cluster.stabilize();
    expect(dropReason(cluster.raw(3n), 'not forwarded')).toBe('forwarding-disabled');
    expect(dropReason(cluster.raw(2n), 'forwarded')).toBeUndefined();
    cluster.stabilize();
    expect(cluster.appliedData(1n)).toEqual(['forwarded']);
  });
});
