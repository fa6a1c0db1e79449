import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Client, Server, ServerCredentials, credentials, type ServerWritableStream } from '@grpc/grpc-js';
import { decodeEtcdMessage, encodeEtcdMessage, responseHeaderToProto } from '@ward/etcd/api-mapping';
import { wardNodeServiceDefinition } from '@ward/etcd/proto';
import { SnapshotAnswers, withEncodedSnapshotAnswers, type EncodedSnapshotAnswer } from './snapshot-answer';
import { responseAnswer } from './answers';

/** What the stream sent before: protobufjs encoding the SnapshotResponse, then its NodeResponse. */
function protobufjsAnswer(header: object, remainingBytes: number, blob: Uint8Array): Uint8Array {
  const snapshot = encodeEtcdMessage('etcdserverpb.SnapshotResponse', { header, remaining_bytes: remainingBytes, blob });
  return new Uint8Array(encodeEtcdMessage('wardnode.NodeResponse', responseAnswer(snapshot)));
}

const HEADER = responseHeaderToProto({ clusterId: 0xdead_beef_cafen, memberId: 2n ** 63n + 5n, raftTerm: 7 }, 4_000_123);
const BLOB_LIMIT = 32 * 1024;

/** Byte equality, quick for large arrays; the element-by-element diff only when they differ. */
function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  const same = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected);
  if (!same) expect(new Uint8Array(actual)).toEqual(new Uint8Array(expected));
  expect(same).toBe(true);
}

/** The bytes the Snapshot method sends for `answer`. */
function sent(answer: EncodedSnapshotAnswer): Uint8Array {
  return new Uint8Array(withEncodedSnapshotAnswers(wardNodeServiceDefinition())['Snapshot']!.responseSerialize(answer));
}

describe('SnapshotAnswers', () => {
  it('writes the bytes protobufjs writes for the same answer', () => {
    const answers = new SnapshotAnswers(encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER), BLOB_LIMIT);
    for (const [remaining, size] of [
      [0, 1],
      [0, 32 * 1024],
      [127, 5],
      [128, 127],
      [2 ** 33 + 17, 32 * 1024],
      [Number.MAX_SAFE_INTEGER, 200],
    ] as const) {
      const blob = Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff);
      expectBytes(sent(answers.encode(remaining, blob)), protobufjsAnswer(HEADER, remaining, blob));
    }
  });

  it('decodes back to its header, remaining bytes and blob, for any of them', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.maxSafeNat(), fc.maxSafeNat(), fc.uint8Array({ maxLength: 300 }), (cluster, revision, remaining, blob) => {
        const headerObject = { cluster_id: cluster.toString(), member_id: '1', revision: String(revision), raft_term: '3' };
        const header = encodeEtcdMessage('etcdserverpb.ResponseHeader', headerObject);
        const bytes = sent(new SnapshotAnswers(header, 300).encode(remaining, blob));
        expectBytes(bytes, protobufjsAnswer(headerObject, remaining, blob));
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

describe('SnapshotAnswers, reusing buffers', () => {
  it('takes a buffer again only once its answer was serialized, and copies each blob', () => {
    const answers = new SnapshotAnswers(encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER), BLOB_LIMIT);
    const blob = new Uint8Array(BLOB_LIMIT).fill(1);
    // Written but not serialized yet (grpc-js may hold them while the stream is busy): their bytes stay theirs.
    const held = [1, 2, 3].map((n) => answers.encode(n, blob.fill(n)));
    blob.fill(9);
    held.forEach((answer, i) => expectBytes(sent(answer), protobufjsAnswer(HEADER, i + 1, new Uint8Array(BLOB_LIMIT).fill(i + 1))));
    // Serialized: the next answers reuse those buffers, and say what they carry, not what was there.
    const next = answers.encode(0, Uint8Array.of(7));
    expect(sent(next)).toEqual(protobufjsAnswer(HEADER, 0, Uint8Array.of(7)));
  });

  it('refuses a blob over its limit', () => {
    const answers = new SnapshotAnswers(encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER), 16);
    expect(() => answers.encode(0, new Uint8Array(17))).toThrow(RangeError);
    expect(sent(answers.encode(0, new Uint8Array(16)))).toHaveLength(protobufjsAnswer(HEADER, 0, new Uint8Array(16)).length);
  });
});

describe('withEncodedSnapshotAnswers', () => {
  const plain = wardNodeServiceDefinition();
  const definition = withEncodedSnapshotAnswers(plain);

  it('sends an encoded answer as it is and serializes any other as before', () => {
    const encoded = new SnapshotAnswers(encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER), BLOB_LIMIT).encode(10, Uint8Array.of(1, 2, 3));
    expect(new Uint8Array(definition['Snapshot']!.responseSerialize(encoded))).toEqual(protobufjsAnswer(HEADER, 10, Uint8Array.of(1, 2, 3)));
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

describe('SnapshotAnswers over grpc-js', () => {
  it('arrives intact when the stream holds many answers unsent and buffers are taken again', async () => {
    const server = new Server();
    const answers = new SnapshotAnswers(encodeEtcdMessage('etcdserverpb.ResponseHeader', HEADER), BLOB_LIMIT);
    const count = 400;
    const blob = new Uint8Array(BLOB_LIMIT);
    server.addService(withEncodedSnapshotAnswers(wardNodeServiceDefinition()), {
      Snapshot: (call: ServerWritableStream<unknown, EncodedSnapshotAnswer>) => {
        // No waiting for 'drain': as many answers as possible wait in the stream, and the pool
        // can only hand out a buffer again once grpc-js has serialized (copied) its answer.
        const writeSome = (from: number): void => {
          for (let n = from; n < Math.min(count, from + 50); n++) call.write(answers.encode(n, blob.fill(n & 0xff)));
          if (from + 50 < count) setImmediate(() => writeSome(from + 50));
          else call.end();
        };
        writeSome(0);
      },
    });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    try {
      const received: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        const stream = client.makeServerStreamRequest('/wardnode.Node/Snapshot', (value: Buffer) => value, (bytes: Buffer) => bytes, Buffer.alloc(0));
        stream.on('data', (bytes: Buffer) => {
          received.push(bytes);
          // A slow reader: the server's HTTP/2 window fills and its writes queue.
          if (received.length % 20 === 0) {
            stream.pause();
            setTimeout(() => stream.resume(), 5);
          }
        });
        stream.on('error', reject);
        stream.on('end', resolve);
      });
      expect(received).toHaveLength(count);
      received.forEach((bytes, n) => expectBytes(bytes, protobufjsAnswer(HEADER, n, new Uint8Array(BLOB_LIMIT).fill(n & 0xff))));
    } finally {
      client.close();
      server.forceShutdown();
    }
  });
});
