import { describe, expect, it } from 'vitest';
import type { KeyValue, ResponseOp, TxnResponse } from '@ward/etcd/kv-store';
import { SeededRng } from '@ward/shared/clock';
import { encodeDeleteRangeResponseWire, encodePutResponseWire, encodeRangeResponseWire, encodeTxnResponseWire } from './kv-response-wire';
import { deleteRangeResponseToProto, putResponseToProto, rangeResponseToProto, txnResponseToProto } from './kv-response';
import { decodeEtcdMessage, encodeEtcdMessage } from './proto-codec';
import type { ResponseContext } from './header';

function randomBytes(rng: SeededRng, max: number): Uint8Array {
  const out = new Uint8Array(rng.nextInt(max + 1));
  for (let i = 0; i < out.length; i++) out[i] = rng.nextInt(256);
  return out;
}

/** Values around the varint size steps, 0 and the int64 edges. */
function randomInt(rng: SeededRng): number {
  const picks = [0, 1, 127, 128, 16_383, 16_384, 2 ** 31 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER];
  return rng.nextInt(2) === 0 ? picks[rng.nextInt(picks.length)]! : rng.nextInt(1_000_000);
}

function randomKv(rng: SeededRng): KeyValue {
  const leases = [0n, 1n, 0x7fff_ffff_ffff_ffffn, 694_201_337n];
  return {
    key: randomBytes(rng, 40).length === 0 ? Uint8Array.of(1) : randomBytes(rng, 40),
    createRevision: randomInt(rng),
    modRevision: randomInt(rng),
    version: randomInt(rng),
    value: randomBytes(rng, rng.nextInt(4) === 0 ? 300 : 8),
    lease: leases[rng.nextInt(leases.length)]!,
  };
}

function randomContext(rng: SeededRng): ResponseContext {
  const ids = [0n, 1n, 0xcdf818194e3a8c32n, 0xffff_ffff_ffff_ffffn, 0x8e9e05c52164694dn];
  return { clusterId: ids[rng.nextInt(ids.length)]!, memberId: ids[rng.nextInt(ids.length)]!, raftTerm: randomInt(rng) };
}

/** A txn's responses: every kind of op, nested txns down to `depth`. */
function randomTxn(rng: SeededRng, depth: number): TxnResponse {
  const responses: ResponseOp[] = [];
  for (let i = rng.nextInt(5); i > 0; i--) {
    const revision = randomInt(rng);
    const kind = rng.nextInt(depth > 0 ? 4 : 3);
    if (kind === 0) responses.push({ type: 'range', response: { revision, kvs: Array.from({ length: rng.nextInt(3) }, () => randomKv(rng)), more: rng.nextInt(2) === 0, count: randomInt(rng) } });
    else if (kind === 1) responses.push({ type: 'put', response: rng.nextInt(2) === 0 ? { revision } : { revision, prevKv: randomKv(rng) } });
    else if (kind === 2) responses.push({ type: 'deleteRange', response: { revision, deleted: randomInt(rng), prevKvs: Array.from({ length: rng.nextInt(3) }, () => randomKv(rng)) } });
    else responses.push({ type: 'txn', response: randomTxn(rng, depth - 1) });
  }
  return { revision: randomInt(rng), succeeded: rng.nextInt(2) === 0, responses };
}

describe('KV responses wire encoding', () => {
  it('decodes (protobufjs) to what the generic encoding of the proto object decodes to', () => {
    const rng = new SeededRng(20261201);
    for (let run = 0; run < 500; run++) {
      const context = randomContext(rng);
      const revision = randomInt(rng);
      const range = { revision, kvs: Array.from({ length: rng.nextInt(6) }, () => randomKv(rng)), more: rng.nextInt(2) === 0, count: randomInt(rng) };
      const fast = encodeRangeResponseWire(range, revision, context);
      const generic = encodeEtcdMessage('etcdserverpb.RangeResponse', rangeResponseToProto(range, context));
      expect(decodeEtcdMessage('etcdserverpb.RangeResponse', fast)).toEqual(decodeEtcdMessage('etcdserverpb.RangeResponse', generic));

      const put = rng.nextInt(2) === 0 ? { revision } : { revision, prevKv: randomKv(rng) };
      const fastPut = encodePutResponseWire(put, revision, context);
      const genericPut = encodeEtcdMessage('etcdserverpb.PutResponse', putResponseToProto(put, context));
      expect(decodeEtcdMessage('etcdserverpb.PutResponse', fastPut)).toEqual(decodeEtcdMessage('etcdserverpb.PutResponse', genericPut));

      const del = { revision, deleted: randomInt(rng), prevKvs: Array.from({ length: rng.nextInt(4) }, () => randomKv(rng)) };
      const fastDel = encodeDeleteRangeResponseWire(del, revision, context);
      const genericDel = encodeEtcdMessage('etcdserverpb.DeleteRangeResponse', deleteRangeResponseToProto(del, context));
      expect(decodeEtcdMessage('etcdserverpb.DeleteRangeResponse', fastDel)).toEqual(decodeEtcdMessage('etcdserverpb.DeleteRangeResponse', genericDel));

      const txn = { ...randomTxn(rng, 3), revision };
      const fastTxn = encodeTxnResponseWire(txn, revision, context);
      const genericTxn = encodeEtcdMessage('etcdserverpb.TxnResponse', txnResponseToProto(txn, context));
      expect(decodeEtcdMessage('etcdserverpb.TxnResponse', fastTxn)).toEqual(decodeEtcdMessage('etcdserverpb.TxnResponse', genericTxn));
    }
  });

  it('gives a nested response a header with its revision only, and a top-level one the context', () => {
    const nested: TxnResponse = { revision: 9, succeeded: true, responses: [{ type: 'put', response: { revision: 9 } }] };
    const bytes = encodeTxnResponseWire(nested, 9, { clusterId: 3n, memberId: 4n, raftTerm: 5 });
    // header {cluster_id 3, member_id 4, revision 9, raft_term 5}, succeeded, responses [{response_put {header {revision 9}}}]
    expect(Buffer.from(bytes).toString('hex')).toBe('0a080803100418092005' + '1001' + '1a06' + '1204' + '0a021809');
  });

  it('leaves zero fields out as Go does, and writes the uint64 ids in full', () => {
    const bytes = encodeRangeResponseWire({ revision: 0, kvs: [], more: false, count: 0 }, 0, { clusterId: 0n, memberId: 0n, raftTerm: 0 });
    expect([...bytes]).toEqual([0x0a, 0x00]);
    const ids = encodeRangeResponseWire({ revision: 5, kvs: [], more: true, count: 1 }, 5, { clusterId: 0xffff_ffff_ffff_ffffn, memberId: 1n, raftTerm: 2 });
    expect(Buffer.from(ids).toString('hex')).toBe('0a1108ffffffffffffffffff0110011805200218012001');
  });
});
