import { utf8 } from '@ward/shared/bytes';
import { SeededRng } from '@ward/shared/clock';
import { AssertionFailure } from '@ward/shared/errors';
import { describe, expect, it } from 'vitest';
import { MessageInvalidError, StepLocalMessageError, StepPeerNotFoundError } from './errors';
import { MemoryStorage } from './memory-storage';
import { MessageType, message } from './message';
import type { Ready } from './ready';
import { RawNode } from './raw-node';
import { Cluster } from './test/cluster';
import { entry } from './test/raft-harness';
import { Role, votersConfState } from './types';

function singleNode(): { node: RawNode; storage: MemoryStorage } {
  const storage = new MemoryStorage(votersConfState([1n]));
  return { node: new RawNode({ id: 1n, storage, rng: new SeededRng(1) }), storage };
}

/** Handles Readies like a driver would, returning them for inspection. */
function drain(node: RawNode, storage: MemoryStorage): Ready[] {
  const seen: Ready[] = [];
  while (node.hasReady()) {
    const rd = node.ready();
    storage.append(rd.entries);
    if (rd.hardState !== undefined) storage.setHardState(rd.hardState);
    seen.push(rd);
    node.advance();
  }
  return seen;
}

describe('RawNode: a single-node cluster', () => {
  it('elects itself and commits a proposal only after its own append was persisted', () => {
    const { node, storage } = singleNode();
    node.campaign();
    drain(node, storage);
    expect(node.basicStatus().role).toBe(Role.Leader);
    node.propose(utf8('x'));
    const rd = node.ready();
    expect(rd.entries.map((e) => e.index)).toEqual([2]);
    expect(rd.committedEntries).toEqual([]);
    expect(rd.mustSync).toBe(true);
    storage.append(rd.entries);
    node.advance();
    const next = node.ready();
    expect(next.committedEntries.map((e) => e.index)).toEqual([2]);
    expect(next.hardState?.commit).toBe(2);
    // A commit-only HardState change needs no fsync.
    expect(next.mustSync).toBe(false);
    node.advance();
    expect(node.hasReady()).toBe(false);
  });

  it('refuses a second ready() before advance()', () => {
    const { node } = singleNode();
    node.campaign();
    node.ready();
    expect(() => node.ready()).toThrow(AssertionFailure);
  });

  it('accepts input between ready() and advance(); it lands in the next Ready', () => {
    const { node, storage } = singleNode();
    node.campaign();
    drain(node, storage);
    node.propose(utf8('a'));
    const first = node.ready();
    node.propose(utf8('b'));
    storage.append(first.entries);
    node.advance();
    const second = node.ready();
    expect(first.entries.map((e) => e.index)).toEqual([2]);
    expect(second.entries.map((e) => e.index)).toEqual([3]);
    expect(second.committedEntries.map((e) => e.index)).toEqual([2]);
  });

  it('keeps the term and vote in a HardState that must be synced', () => {
    const { node, storage } = singleNode();
    node.campaign();
    const readies = drain(node, storage);
    const withVote = readies.find((rd) => rd.hardState !== undefined && rd.hardState.vote === 1n);
    expect(withVote?.hardState?.term).toBe(1);
    expect(withVote?.mustSync).toBe(true);
  });
});

describe('RawNode.step: untrusted input', () => {
  const { node } = singleNode();
  const before = node.basicStatus();

  it('rejects oversized read contexts and non-byte input from callers', () => {
    expect(() => node.readIndex(new Uint8Array(64 * 1024 + 1))).toThrow(TypeError);
    expect(() => node.propose('text' as unknown as Uint8Array)).toThrow(TypeError);
  });

  it('rejects local message kinds from the network', () => {
    expect(() => node.step(message(MessageType.Hup, { from: 2n, to: 1n }))).toThrow(StepLocalMessageError);
    expect(() => node.step(message(MessageType.Beat, { from: 2n, to: 1n }))).toThrow(StepLocalMessageError);
  });

  it('rejects responses from nodes it does not track', () => {
    expect(() => node.step(message(MessageType.AppResp, { from: 9n, to: 1n, term: 5 }))).toThrow(StepPeerNotFoundError);
  });

  it('rejects malformed fields with the field named, and changes nothing', () => {
    const bad = [
      { ...message(MessageType.App, { from: 2n, to: 1n }), term: -1 },
      { ...message(MessageType.App, { from: 2n, to: 1n }), term: 1.5 },
      { ...message(MessageType.App, { from: 2n, to: 1n }), from: 2 as unknown as bigint },
      { ...message(MessageType.App, { from: 2n, to: 1n }), type: 99 as MessageType },
      message(MessageType.App, { from: 2n, to: 3n, term: 4 }),
      message(MessageType.App, { from: 2n, to: 1n, term: 4, index: 0, entries: [entry(2, 4)] }),
      message(MessageType.App, { from: 2n, to: 1n, term: 4, index: 0, entries: [entry(1, 5)] }),
      message(MessageType.Snap, { from: 2n, to: 1n, term: 4 }),
    ];
    for (const m of bad) expect(() => node.step(m)).toThrow(MessageInvalidError);
    expect(node.basicStatus()).toEqual(before);
  });
});

describe('RawNode: restart', () => {
  it('rebuilds from storage; with `applied` set it does not hand out applied entries again', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    for (const data of ['a', 'b', 'c']) cluster.propose(1n, data);
    const n2 = cluster.get(2n);
    const appliedIndex = n2.appliedIndex;
    const again = new RawNode({ id: 2n, storage: n2.storage, rng: new SeededRng(2), applied: appliedIndex });
    expect(again.basicStatus().commit).toBe(appliedIndex);
    expect(again.hasReady() ? again.ready().committedEntries : []).toEqual([]);
    const fromZero = new RawNode({ id: 2n, storage: n2.storage, rng: new SeededRng(2) });
    const replayed = fromZero.ready().committedEntries.filter((e) => e.data.length > 0);
    expect(replayed.map((e) => new TextDecoder().decode(e.data))).toEqual(['a', 'b', 'c']);
  });

  it('does not release a log tail that a newer leader overwrote before advance()', () => {
    const storage = new MemoryStorage(votersConfState([1n, 2n, 3n]));
    const node = new RawNode({ id: 1n, storage, rng: new SeededRng(3), preVote: false });
    node.step(message(MessageType.App, { from: 2n, to: 1n, term: 1, entries: [entry(1, 1, 'old')] }));
    const first = node.ready();
    node.step(message(MessageType.App, { from: 3n, to: 1n, term: 2, entries: [entry(1, 2, 'new')] }));
    storage.append(first.entries);
    node.advance();
    const second = node.ready();
    expect(second.entries.map((e) => [e.index, e.term])).toEqual([[1, 2]]);
  });
});

describe('RawNode: a three-node cluster', () => {
  it('replicates proposals made on any member (followers forward to the leader)', () => {
    const cluster = new Cluster(3);
    cluster.elect(1n);
    cluster.propose(1n, 'from-leader');
    cluster.propose(3n, 'from-follower');
    for (const id of cluster.ids) expect(cluster.appliedData(id)).toEqual(['from-leader', 'from-follower']);
  });

  it('reports the leader and every follower progress in status()', () => {
    const cluster = new Cluster(3);
    cluster.elect(2n);
    const status = cluster.raw(2n).status();
    expect(status.role).toBe(Role.Leader);
    expect([...status.progress.keys()]).toEqual([1n, 2n, 3n]);
    expect(status.progress.get(1n)?.match).toBe(status.lastIndex);
    expect(cluster.raw(3n).status().progress.size).toBe(0);
    expect(cluster.raw(3n).basicStatus().lead).toBe(2n);
  });
});
