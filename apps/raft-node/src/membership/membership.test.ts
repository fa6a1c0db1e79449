import { describe, expect, it } from 'vitest';
import { Applier } from '@ward/etcd/apply';
import { ConfChangeError, ConfChangeTransition, ConfChangeType, EntryType, encodeConfChangeV2, votersConfState, type ConfChangeV2, type ConfState } from '@ward/raft/core';
import { StateMachine, type AppliedMembershipChange } from '../state-machine';
import { NodeSnapshotDecoder, decodeChangeContext, decodeNodeSnapshot, encodeChangeContext, encodeNodeSnapshot, MembershipCodecError } from './codec';
import { MemberList, type MemberRecord } from './member-list';

const rec = (id: bigint, isLearner = false): MemberRecord => ({ id, name: `m${id}`, peerAddress: `10.0.0.${id}:2380`, apiAddress: `10.0.0.${id}:2379`, isLearner });
const INITIAL = [1n, 2n, 3n].map((id) => rec(id));
const one = (type: ConfChangeType, nodeId: bigint, context: Uint8Array = new Uint8Array(0)): ConfChangeV2 => ({ transition: ConfChangeTransition.Auto, changes: [{ type, nodeId }], context });

describe('MemberList', () => {
  it('adds a learner, promotes it, updates and removes members; removed ids are remembered', () => {
    let list = MemberList.initial(INITIAL);
    ({ list } = list.applied(one(ConfChangeType.AddLearnerNode, 4n), [rec(4n)]));
    expect(list.get(4n)).toEqual(rec(4n, true));
    ({ list } = list.applied(one(ConfChangeType.AddNode, 4n), []));
    expect(list.get(4n)).toEqual(rec(4n, false));
    const moved = { ...rec(2n), peerAddress: '10.9.9.9:2380' };
    const updated = list.applied(one(ConfChangeType.UpdateNode, 2n), [moved]);
    expect(updated.change.updated).toEqual([moved]);
    list = updated.list;
    const removed = list.applied(one(ConfChangeType.RemoveNode, 1n), []);
    expect(removed.change.removed).toEqual([1n]);
    list = removed.list;
    expect(list.members.map((m) => m.id)).toEqual([2n, 3n, 4n]);
    expect(list.isRemoved(1n)).toBe(true);
    expect(list.get(2n)?.peerAddress).toBe('10.9.9.9:2380');
  });

  it('draws random non-zero 64-bit ids that no present or removed member has', () => {
    const list = MemberList.of([rec(5n)], [6n]);
    const draws = [0n, 5n, 6n, 0xfedcba9876543210n].map((v) => {
      const b = Buffer.alloc(8);
      b.writeBigUInt64BE(v);
      return b;
    });
    expect(list.newMemberId(() => draws.shift()!)).toBe(0xfedcba9876543210n);
    const ids = new Set(Array.from({ length: 100 }, () => list.newMemberId()));
    expect(ids.size).toBe(100);
    expect([...ids].some((id) => id > 2n ** 53n)).toBe(true);
  });
});

describe('membership codecs', () => {
  it('round-trips a change context and refuses damaged ones', () => {
    const context = { requestId: 2n ** 63n + 5n, records: [rec(4n, true)] };
    const bytes = encodeChangeContext(context);
    expect(decodeChangeContext(bytes)).toEqual(context);
    expect(decodeChangeContext(new Uint8Array(0))).toEqual({ requestId: 0n, records: [] });
    expect(() => decodeChangeContext(bytes.subarray(0, bytes.length - 1))).toThrow(MembershipCodecError);
    expect(() => decodeChangeContext(Uint8Array.of(...bytes, 0))).toThrow(/trailing/);
    expect(() => decodeChangeContext(Uint8Array.of(9, ...bytes.subarray(1)))).toThrow(/version 9/);
  });

  it('round-trips a member snapshot; the applier snapshot alone (the older format) still decodes, without a list', () => {
    const applier = Applier.create().snapshot();
    const members = MemberList.of([rec(1n), rec(4n, true)], [2n]);
    const decoded = decodeNodeSnapshot(encodeNodeSnapshot({ clusterId: 9n, members, applier }));
    expect(decoded.clusterId).toBe(9n);
    expect(decoded.members?.members).toEqual(members.members);
    expect(decoded.members?.removed).toEqual([2n]);
    expect(decoded.applier).toEqual(applier);
    expect(decodeNodeSnapshot(applier)).toEqual({ clusterId: undefined, members: undefined, applier: new Uint8Array(applier) });
    expect(() => decodeNodeSnapshot(Buffer.from('garbage'))).toThrow(/not a member snapshot/);
    const bytes = encodeNodeSnapshot({ clusterId: 9n, members, applier });
    expect(() => decodeNodeSnapshot(Uint8Array.of(...bytes.subarray(0, 4), 2, ...bytes.subarray(5)))).toThrow(/version 2/);
  });

  it('decodes member snapshot data pushed in pieces of any size, the head held (copied) only until it is in', () => {
    const applier = Applier.create().snapshot();
    const members = MemberList.of([rec(1n), rec(4n, true)], [2n]);
    for (const bytes of [encodeNodeSnapshot({ clusterId: 9n, members, applier }), applier]) {
      const whole = decodeNodeSnapshot(bytes);
      for (const pieceBytes of [1, 7, 64, bytes.length]) {
        const received: Uint8Array[] = [];
        const decoder = new NodeSnapshotDecoder(bytes.length, { push: (piece) => received.push(piece.slice()) });
        // The pieces come in one buffer, overwritten after each push: what the decoder keeps is its own.
        const buffer = new Uint8Array(pieceBytes);
        for (let offset = 0; offset < bytes.length; offset += pieceBytes) {
          const piece = buffer.subarray(0, Math.min(pieceBytes, bytes.length - offset));
          piece.set(bytes.subarray(offset, offset + piece.length));
          decoder.push(piece);
          buffer.fill(0xee);
        }
        const head = decoder.finish();
        expect({ clusterId: head.clusterId, members: head.members }).toEqual({ clusterId: whole.clusterId, members: whole.members });
        expect(Buffer.concat(received)).toEqual(Buffer.from(whole.applier));
      }
    }
    const bytes = encodeNodeSnapshot({ clusterId: 9n, members, applier });
    const short = new NodeSnapshotDecoder(bytes.length + 1, { push: () => undefined });
    short.push(bytes);
    expect(() => short.finish()).toThrow(/of the .* bytes announced/);
    expect(() => new NodeSnapshotDecoder(bytes.length - 1, { push: () => undefined }).push(bytes)).toThrow(/more than the/);
    // A head announcing another state length than follows is refused as the whole decode refuses it.
    const longer = new NodeSnapshotDecoder(bytes.length + 3, { push: () => undefined });
    expect(() => longer.push(Uint8Array.of(...bytes, 1, 2, 3))).toThrow(/state length/);
  });
});

describe('StateMachine membership', () => {
  const options = { applier: {}, maxEntryBytes: 1 << 20, onUndecodable: () => undefined, initialMembers: INITIAL, initialConfState: votersConfState([1n, 2n, 3n]), clusterId: 9n };
  const entry = (index: number, cc: ConfChangeV2) => ({ index, term: 1, type: EntryType.ConfChangeV2, data: encodeConfChangeV2(cc) });

  it('applies a change through the core, reports it, keeps list and configuration for snapshots; a refused change changes nothing', () => {
    const sm = StateMachine.boot(options, undefined);
    const seen: AppliedMembershipChange[] = [];
    const next: ConfState = { ...votersConfState([1n, 2n, 3n]), learners: [4n] };
    const cc = one(ConfChangeType.AddLearnerNode, 4n, encodeChangeContext({ requestId: 7n, records: [rec(4n, true)] }));
    sm.apply([entry(1, cc)], () => next, (c) => seen.push(c));
    expect(seen).toEqual([{ index: 1, requestId: 7n, refused: undefined, change: { added: [rec(4n, true)], updated: [], removed: [] }, confState: next }]);
    expect(sm.confState).toEqual(next);
    expect(sm.members.get(4n)).toEqual(rec(4n, true));
    sm.apply([entry(2, one(ConfChangeType.RemoveNode, 1n))], () => {
      throw new ConfChangeError('removes every voter');
    }, (c) => seen.push(c));
    expect(seen[1]).toMatchObject({ index: 2, refused: expect.stringContaining('removes every voter'), change: { added: [], updated: [], removed: [] }, confState: next });
    expect(sm.members.has(1n)).toBe(true);
    expect(sm.appliedIndex).toBe(2);
    // anything but the core's refusal is a broken invariant and stops the apply
    expect(() => sm.apply([entry(3, one(ConfChangeType.RemoveNode, 1n))], () => { throw new TypeError('bug'); })).toThrow(TypeError);
    const restored = StateMachine.boot(options, { data: sm.snapshotData(), metadata: { index: 2, term: 1, confState: sm.confState } });
    expect(restored.members.members).toEqual(sm.members.members);
    expect(restored.confState).toEqual(next);
  });

  it('restores from snapshot data streamed in pieces as from the data whole', async () => {
    const sm = StateMachine.boot(options, undefined);
    const next: ConfState = { ...votersConfState([1n, 2n, 3n]), learners: [4n] };
    sm.apply([entry(1, one(ConfChangeType.AddLearnerNode, 4n, encodeChangeContext({ requestId: 7n, records: [rec(4n, true)] })))], () => next);
    const data = sm.snapshotData();
    const metadata = { index: 1, term: 1, confState: sm.confState };
    async function* pieces(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < data.length; offset += 5) yield data.subarray(offset, offset + 5);
    }
    const restored = StateMachine.fromRestored(options, await StateMachine.decodeStreamed(options.applier, metadata, { totalBytes: data.length, data: pieces() }));
    const whole = StateMachine.boot(options, { data, metadata });
    expect(restored.snapshotData()).toEqual(whole.snapshotData());
    expect(restored.members.get(4n)).toEqual(rec(4n, true));
    expect([restored.appliedIndex, restored.confState]).toEqual([1, next]);
    await expect(StateMachine.decodeStreamed(options.applier, metadata, { totalBytes: data.length, data: data.subarray(0, data.length - 1) })).rejects.toThrow(/bytes announced/);
  });

  it('takes the key space\'s CRC-32C only from a stream that did not check one of its own', async () => {
    const sm = StateMachine.boot(options, undefined);
    sm.apply([entry(1, one(ConfChangeType.AddLearnerNode, 4n, encodeChangeContext({ requestId: 7n, records: [rec(4n, true)] })))], () => ({ ...votersConfState([1n, 2n, 3n]), learners: [4n] }));
    const data = sm.snapshotData();
    const metadata = { index: 1, term: 1, confState: sm.confState };
    const probe = Applier.decoder();
    const node = new NodeSnapshotDecoder(data.length, probe);
    node.push(data);
    const { headBytes } = node.finish();
    const section = probe.keySpaceSection!;
    const wrongCrc = data.slice();
    wrongCrc[headBytes + section.offset + section.length - 8]! ^= 1;
    await expect(StateMachine.decodeStreamed(options.applier, metadata, { totalBytes: data.length, data: wrongCrc })).rejects.toThrow(/does not decode/);
    // A file's stream (checksummed) has checked the whole data's CRC-32C: the key space's is not taken again.
    const restored = await StateMachine.decodeStreamed(options.applier, metadata, { totalBytes: data.length, data: wrongCrc, checksummed: true });
    expect(restored.applier.stateHash()).toBe(sm.applier.stateHash());
  });

  it('boots from an older snapshot (applier bytes only) with the configured members', () => {
    const applier = Applier.create();
    const sm = StateMachine.boot(options, { data: applier.snapshot(), metadata: { index: 5, term: 1, confState: votersConfState([1n, 2n, 3n]) } });
    expect(sm.appliedIndex).toBe(5);
    expect(sm.members.members).toEqual(INITIAL);
    expect(decodeNodeSnapshot(sm.snapshotData()).members?.members).toEqual(INITIAL);
  });
});
