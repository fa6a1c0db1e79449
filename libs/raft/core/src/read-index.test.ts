// ReadIndex (thesis §6.4): a leader answers a read with its commit index once a heartbeat round
// confirms it still leads; a new leader first commits an entry of its own term.
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { SeededRng } from '@ward/shared/clock';
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from './memory-storage';
import { MessageType } from './message';
import { RawNode } from './raw-node';
import { Cluster } from './test/cluster';
import { votersConfState } from './types';

function contexts(cluster: Cluster, id: bigint): string[] {
  return cluster.get(id).readStates.map((rs) => fromUtf8(rs.context));
}

describe('ReadIndex (safe)', () => {
  it('the leader answers with its commit index after a heartbeat round', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.propose(1n, 'x');
    cluster.raw(1n).readIndex(utf8('r1'));
    cluster.processAll();
    // Nothing is answered before the heartbeat round.
    expect(cluster.get(1n).readStates).toEqual([]);
    expect(cluster.inFlight.filter((m) => m.type === MessageType.Heartbeat).length).toBe(2);
    cluster.stabilize();
    expect(cluster.get(1n).readStates).toEqual([{ index: cluster.raw(1n).basicStatus().commit, context: utf8('r1') }]);
  });

  it('a new leader defers reads until the no-op of its term commits', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false }));
    cluster.elect(1n);
    cluster.propose(1n, 'x');
    // Node 2 wins a new term, but its MsgApps (carrying the no-op) are held back.
    cluster.filter = (m) => !(m.from === 2n && m.type === MessageType.App);
    cluster.elect(2n);
    expect(cluster.leader()).toBe(2n);
    const noopIndex = cluster.raw(2n).basicStatus().lastIndex;
    expect(cluster.raw(2n).basicStatus().commit).toBeLessThan(noopIndex);
    cluster.raw(2n).readIndex(utf8('early'));
    cluster.tickAll(3);
    expect(cluster.get(2n).readStates).toEqual([]);
    cluster.heal();
    cluster.tickAll(2);
    expect(cluster.get(2n).readStates).toEqual([{ index: noopIndex, context: utf8('early') }]);
  });

  it('a follower forwards the read and receives the leader commit index', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.propose(2n, 'y');
    cluster.raw(3n).readIndex(utf8('from-3'));
    cluster.stabilize();
    expect(cluster.get(3n).readStates).toEqual([{ index: cluster.raw(1n).basicStatus().commit, context: utf8('from-3') }]);
    expect(cluster.get(1n).readStates).toEqual([]);
  });

  it('answers every request, including several with the same context', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    for (const ctx of ['same', 'same', 'other']) cluster.raw(1n).readIndex(utf8(ctx));
    cluster.stabilize();
    expect(contexts(cluster, 1n)).toEqual(['same', 'same', 'other']);
  });

  it('an isolated old leader never answers; the new leader on the majority side does', () => {
    const cluster = new Cluster(3, () => ({ checkQuorum: false }));
    cluster.elect(1n);
    cluster.isolate(1n);
    cluster.elect(2n);
    cluster.propose(2n, 'newer');
    cluster.raw(1n).readIndex(utf8('stale?'));
    cluster.raw(2n).readIndex(utf8('fresh'));
    cluster.tickAll(30);
    expect(cluster.get(1n).readStates).toEqual([]);
    expect(contexts(cluster, 2n)).toEqual(['fresh']);
    expect(cluster.get(2n).readStates[0]!.index).toBe(cluster.raw(2n).basicStatus().commit);
  });

  it('a single-node cluster answers at once', () => {
    const storage = new MemoryStorage(votersConfState([1n]));
    const node = new RawNode({ id: 1n, storage, rng: new SeededRng(1) });
    node.campaign();
    while (node.hasReady()) {
      storage.append(node.ready().entries);
      node.advance();
    }
    node.readIndex(utf8('solo'));
    expect(node.ready().readStates).toEqual([{ index: 1, context: utf8('solo') }]);
  });
});

describe('ReadIndex (lease-based, opt-in)', () => {
  it('the leader answers without a heartbeat round', () => {
    const cluster = new Cluster(3, () => ({ readOnlyOption: 'lease-based', checkQuorum: true }));
    cluster.elect(1n);
    cluster.raw(1n).readIndex(utf8('lease'));
    cluster.process(1n);
    expect(cluster.get(1n).readStates).toEqual([{ index: cluster.raw(1n).basicStatus().commit, context: utf8('lease') }]);
    expect(cluster.inFlight.filter((m) => m.type === MessageType.Heartbeat)).toEqual([]);
  });
});
