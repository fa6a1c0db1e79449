import { afterEach, describe, expect, it } from 'vitest';
import { Client, Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import { crc32c } from '@ward/shared/checksum';
import { encodeBatch, encodeSnapshotChunk, encodeSnapshotHeader, encodeSnapshotTrailer } from '../src/frame-codec';
import { SEND_PATH, SEND_SNAPSHOT_PATH } from '../src/peer-service';
import { message, startMember, waitFor, type TestMember } from './helpers';

const members: TestMember[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(members.splice(0).map((m) => m.close()));
});

const KiB = 1024;
const SMALL_LIMITS = { maxBatchBytes: 64 * KiB, maxMessageBytes: 64 * KiB, snapshotChunkBytes: 64 * KiB, maxSnapshotMetadataBytes: 64 * KiB, maxBatchMessages: 100 };

/** Writes raw frames on one stream of `path` and returns the status the server ends it with. */
async function rawStream(port: number, path: string, frames: Uint8Array[]): Promise<number> {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.max_send_message_length': 16 * 1024 * 1024 });
  clients.push(client);
  return new Promise((resolve) => {
    const call = client.makeClientStreamRequest<Uint8Array, Buffer>(
      path,
      (b) => Buffer.from(b),
      (b) => b,
      new Metadata(),
      {},
      (error: ServiceError | null) => resolve(error === null ? status.OK : error.code),
    );
    for (const frame of frames) call.write(frame);
    call.end();
  });
}

const route = { clusterId: 0n, from: 1n, to: 2n };

describe('malformed and hostile frames are refused without harm', () => {
  it('refuses garbage, bad checksums, limit breaches and misrouted frames; the server keeps serving', async () => {
    const b = await startMember(2n, { limits: SMALL_LIMITS });
    members.push(b);
    const good = encodeBatch(route, [message(1)]);
    const flipped = good.slice();
    flipped[40]! ^= 0x01;
    const cases: { name: string; frames: Uint8Array[]; code: number }[] = [
      { name: 'random bytes', frames: [Uint8Array.from({ length: 100 }, (_, i) => (i * 37) & 0xff)], code: status.INVALID_ARGUMENT },
      { name: 'empty frame', frames: [new Uint8Array(0)], code: status.INVALID_ARGUMENT },
      { name: 'flipped bit', frames: [flipped], code: status.INVALID_ARGUMENT },
      { name: 'too many messages', frames: [encodeBatch(route, Array.from({ length: 101 }, (_, i) => message(i)))], code: status.INVALID_ARGUMENT },
      { name: 'message over the limit', frames: [encodeBatch(route, [new Uint8Array(65 * KiB)])], code: status.INVALID_ARGUMENT },
      { name: 'frame over the receive limit', frames: [encodeBatch(route, [new Uint8Array(300 * KiB)])], code: status.RESOURCE_EXHAUSTED },
      { name: 'another cluster', frames: [encodeBatch({ ...route, clusterId: 7n }, [message(1)])], code: status.FAILED_PRECONDITION },
      { name: 'another member', frames: [encodeBatch({ ...route, to: 3n }, [message(1)])], code: status.FAILED_PRECONDITION },
      { name: 'a good frame, then garbage', frames: [good, new Uint8Array([1, 1, 0, 0])], code: status.INVALID_ARGUMENT },
    ];
    for (const c of cases) expect(await rawStream(b.port, SEND_PATH, c.frames), c.name).toBe(c.code);
    // Every rejection was counted, except the oversized frame grpc-js refused before the handler saw it.
    expect(b.transport.stats().received.rejectedFrames).toBeGreaterThanOrEqual(cases.length - 1);
    // The one good frame that preceded garbage was delivered; a regular peer still gets through.
    expect(b.received).toHaveLength(1);
    const a = await startMember(1n);
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    for (let i = 0; i < 50; i++) a.transport.send(2n, message(i));
    await waitFor(() => b.received.length === 51, 5000, 'messages after the attacks');
  });

  it('refuses malformed snapshot streams at the first bad frame', async () => {
    const delivered: Uint8Array[] = [];
    const b = await startMember(2n, {
      limits: SMALL_LIMITS,
      receiver: { onMessages: () => undefined, onSnapshot: async (_f, _m, data) => void delivered.push(data) },
    });
    members.push(b);
    const data = new Uint8Array(100).fill(7);
    const header = encodeSnapshotHeader({ ...route, totalBytes: 100, metadata: new Uint8Array(3) });
    const trailer = encodeSnapshotTrailer(1, crc32c(data));
    const cases: { name: string; frames: Uint8Array[]; code: number }[] = [
      { name: 'chunk before header', frames: [encodeSnapshotChunk(0, data)], code: status.INVALID_ARGUMENT },
      { name: 'chunk out of order', frames: [header, encodeSnapshotChunk(1, data)], code: status.INVALID_ARGUMENT },
      { name: 'more data than announced', frames: [header, encodeSnapshotChunk(0, data), encodeSnapshotChunk(1, data)], code: status.INVALID_ARGUMENT },
      { name: 'wrong data checksum', frames: [header, encodeSnapshotChunk(0, data), encodeSnapshotTrailer(1, 12345)], code: status.INVALID_ARGUMENT },
      { name: 'no trailer', frames: [header, encodeSnapshotChunk(0, data)], code: status.INVALID_ARGUMENT },
      { name: 'announced size over the limit', frames: [encodeSnapshotHeader({ ...route, totalBytes: 2 ** 40, metadata: new Uint8Array(0) })], code: status.RESOURCE_EXHAUSTED },
      { name: 'batch frame on the snapshot stream', frames: [encodeBatch(route, [message(1)])], code: status.INVALID_ARGUMENT },
    ];
    for (const c of cases) expect(await rawStream(b.port, SEND_SNAPSHOT_PATH, c.frames), c.name).toBe(c.code);
    expect(delivered).toHaveLength(0);
    expect(await rawStream(b.port, SEND_SNAPSHOT_PATH, [header, encodeSnapshotChunk(0, data), trailer])).toBe(status.OK);
    expect(delivered).toEqual([data]);
  });
});
