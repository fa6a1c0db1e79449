import { describe, expect, it } from 'vitest';
import type { KeyValue } from '@ward/etcd/kv-store';
import { SeededRng } from '@ward/shared/clock';
import { encodePutResponseWire, encodeRangeResponseWire } from './kv-response-wire';
import { putResponseToProto, rangeResponseToProto } from './kv-response';
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

describe('RangeResponse and PutResponse wire encoding', () => {
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
    }
  });

  it('leaves zero fields out as Go does, and writes the uint64 ids in full', () => {
    const bytes = encodeRangeResponseWire({ revision: 0, kvs: [], more: false, count: 0 }, 0, { clusterId: 0n, memberId: 0n, raftTerm: 0 });
    expect([...bytes]).toEqual([0x0a, 0x00]);
    const ids = encodeRangeResponseWire({ revision: 5, kvs: [], more: true, count: 1 }, 5, { clusterId: 0xffff_ffff_ffff_ffffn, memberId: 1n, raftTerm: 2 });
    expect(Buffer.from(ids).toString('hex')).toBe('0a1108ffffffffffffffffff0110011805200218012001');
  });
});
