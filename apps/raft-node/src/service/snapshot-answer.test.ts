import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeEtcdMessage, encodeEtcdMessage, responseHeaderToProto } from '@ward/etcd/api-mapping';
import { wardNodeServiceDefinition } from '@ward/etcd/proto';
import { snapshotAnswerBytes, withEncodedSnapshotAnswers } from './snapshot-answer';
import { responseAnswer } from './answers';

/** What the stream sent before: protobufjs encoding the SnapshotResponse, then its NodeResponse. */
function protobufjsAnswer(header: object, remainingBytes: number, blob: Uint8Array): Uint8Array {
  const snapshot = encodeEtcdMessage('etcdserverpb.SnapshotResponse', { header, remaining_bytes: remainingBytes, blob });
  return new Uint8Array(encodeEtcdMessage('wardnode.NodeResponse', responseAnswer(snapshot)));
}

const HEADER = responseHeaderToProto({ clusterId: 0xdead_beef_cafen, memberId: 2n ** 63n + 5n, raftTerm: 7 }, 4_000_123);

describe('snapshotAnswerBytes', () => {
  it('writes the bytes protobufjs writes for the same answer', () => {
    const header = encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER);
    for (const [remaining, size] of [
      [0, 1],
      [0, 32 * 1024],
      [127, 5],
      [128, 127],
      [2 ** 33 + 17, 32 * 1024],
      [Number.MAX_SAFE_INTEGER, 200],
    ] as const) {
      const blob = Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff);
      expect(new Uint8Array(snapshotAnswerBytes(header, remaining, blob))).toEqual(protobufjsAnswer(HEADER, remaining, blob));
    }
  });

  it('decodes back to its header, remaining bytes and blob, for any of them', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.maxSafeNat(), fc.maxSafeNat(), fc.uint8Array({ maxLength: 300 }), (cluster, revision, remaining, blob) => {
        const headerObject = { cluster_id: cluster.toString(), member_id: '1', revision: String(revision), raft_term: '3' };
        const header = encodeEtcdMessage('etcdserverpb.ResponseHeader', headerObject);
        const bytes = snapshotAnswerBytes(header, remaining, blob);
        expect(new Uint8Array(bytes)).toEqual(protobufjsAnswer(headerObject, remaining, blob));
        const answer = decodeEtcdMessage<{ response: Buffer }>('wardnode.NodeResponse', bytes);
        const snapshot = decodeEtcdMessage<{ header: object; remaining_bytes: string; blob: Buffer }>('etcdserverpb.SnapshotResponse', answer.response);
        expect(snapshot.header).toEqual(headerObject);
        expect(snapshot.remaining_bytes).toBe(String(remaining));
        expect(new Uint8Array(snapshot.blob)).toEqual(blob);
      }),
      { numRuns: 300 },
    );
  });
});

describe('withEncodedSnapshotAnswers', () => {
  const plain = wardNodeServiceDefinition();
  const definition = withEncodedSnapshotAnswers(plain);

  it('sends an encoded answer as it is and serializes any other as before', () => {
    const header = encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER);
    const encoded = snapshotAnswerBytes(header, 10, Uint8Array.of(1, 2, 3));
    expect(definition['Snapshot']!.responseSerialize(encoded)).toBe(encoded);
    const refusal = { error: { code: 9, message: 'etcdserver: too many requests' } };
    expect(definition['Snapshot']!.responseSerialize(refusal)).toEqual(plain['Snapshot']!.responseSerialize(refusal));
    expect(new Uint8Array(definition['Snapshot']!.responseSerialize(refusal))).not.toHaveLength(0);
  });

  it('leaves every other method as it was', () => {
    for (const name of Object.keys(plain)) {
      if (name === 'Snapshot') continue;
      expect(definition[name]).toBe(plain[name]);
    }
    expect(Object.keys(definition).sort()).toEqual(Object.keys(plain).sort());
  });
});
