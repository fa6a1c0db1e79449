import { afterEach, describe, expect, it } from 'vitest';
import { crc32c } from '@ward/shared/checksum';
import { hasCode } from '@ward/shared/errors';
import { startMember, waitFor, type TestMember } from './helpers';

const members: TestMember[] = [];
afterEach(async () => {
  await Promise.all(members.splice(0).map((m) => m.close()));
});

const MiB = 1024 * 1024;

function snapshotBytes(sizeBytes: number): Uint8Array {
  const data = new Uint8Array(sizeBytes);
  let x = 0x9e3779b9;
  for (let i = 0; i < sizeBytes; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x & 0xff;
    data[i + 1] = (x >>> 8) & 0xff;
    data[i + 2] = (x >>> 16) & 0xff;
    data[i + 3] = (x >>> 24) & 0xff;
  }
  return data;
}

async function* pieces(data: Uint8Array, pieceBytes: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.length; i += pieceBytes) yield data.subarray(i, i + pieceBytes);
}

interface Received {
  from: bigint;
  metadata: Uint8Array;
  data: Uint8Array;
}

async function receiverMember(id: bigint, limits = {}): Promise<{ member: TestMember; snapshots: Received[] }> {
  const snapshots: Received[] = [];
  const member = await startMember(id, {
    limits,
    receiver: {
      onMessages: () => undefined,
      onSnapshot: async (from, metadata, data) => {
        snapshots.push({ from, metadata: metadata.slice(), data });
      },
    },
  });
  members.push(member);
  return { member, snapshots };
}

describe('snapshot streaming over loopback gRPC', () => {
  it('a 50 MiB snapshot arrives intact in 1 MiB chunks', async () => {
    const { member: b, snapshots } = await receiverMember(2n);
    const a = await startMember(1n);
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const data = snapshotBytes(50 * MiB);
    const metadata = new TextEncoder().encode('snapshot index=1000 term=3');
    // The data is handed over in 3 MiB pieces and re-chunked to 1 MiB frames.
    const startedMs = performance.now();
    await a.transport.sendSnapshot(2n, metadata, pieces(data, 3 * MiB), data.length);
    const elapsedMs = performance.now() - startedMs;
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]!.from).toBe(1n);
    expect(snapshots[0]!.metadata).toEqual(metadata);
    expect(snapshots[0]!.data.length).toBe(data.length);
    expect(crc32c(snapshots[0]!.data)).toBe(crc32c(data));
    expect(Buffer.compare(Buffer.from(snapshots[0]!.data), Buffer.from(data))).toBe(0);
    expect(b.transport.stats().received.snapshotsReceived).toBe(1);
    expect(a.transport.stats().peers[0]!.snapshotsSent).toBe(1);
    expect(b.transport.stats().received.snapshotChunksReceived).toBe(50);
    expect(elapsedMs).toBeLessThan(60_000);
  });

  it('messages keep flowing while a snapshot is being sent to the same peer', async () => {
    const received: number[] = [];
    let snapshotDone = false;
    let messagesDuringSnapshot = 0;
    const b = await startMember(2n, {
      receiver: {
        onMessages: (_from, messages) => {
          received.push(messages.length);
          if (!snapshotDone) messagesDuringSnapshot += messages.length;
        },
        onSnapshot: async () => undefined,
      },
    });
    members.push(b);
    const a = await startMember(1n);
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    // The message link is up before the snapshot starts: on a loaded machine a snapshot could
    // otherwise be over before the first message's connection is.
    a.transport.send(2n, new Uint8Array(64));
    await waitFor(() => received.length > 0, 10_000, 'the first message');
    messagesDuringSnapshot = 0;
    const sending = a.transport.sendSnapshot(2n, new Uint8Array(0), snapshotBytes(20 * MiB), 20 * MiB).then(() => (snapshotDone = true));
    const ticker = setInterval(() => a.transport.send(2n, new Uint8Array(64)), 1);
    await sending;
    clearInterval(ticker);
    expect(messagesDuringSnapshot).toBeGreaterThan(0);
  });

  it('refuses a snapshot over the limit: at the sender, and at a receiver with a smaller limit', async () => {
    const { member: b, snapshots } = await receiverMember(2n, { maxSnapshotBytes: 4 * MiB });
    const a = await startMember(1n, { limits: { maxSnapshotBytes: 16 * MiB } });
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const local = await a.transport.sendSnapshot(2n, new Uint8Array(0), new Uint8Array(0), 17 * MiB).catch((e: unknown) => e);
    expect(hasCode(local, 'ERR_TRANSPORT_SNAPSHOT_TOO_LARGE')).toBe(true);
    const remote = await a.transport.sendSnapshot(2n, new Uint8Array(0), snapshotBytes(8 * MiB), 8 * MiB).catch((e: unknown) => e);
    expect(hasCode(remote, 'ERR_TRANSPORT_SNAPSHOT_FAILED')).toBe(true);
    expect(String((remote as Error).cause)).toContain('exceeds');
    expect(snapshots).toHaveLength(0);
    // The receiver is still fine: a snapshot within its limit goes through.
    await a.transport.sendSnapshot(2n, new Uint8Array(0), snapshotBytes(2 * MiB), 2 * MiB);
    expect(snapshots).toHaveLength(1);
  });

  it('a data stream shorter than announced fails the transfer; the receiver delivers nothing', async () => {
    const { member: b, snapshots } = await receiverMember(2n);
    const a = await startMember(1n);
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const error = await a.transport.sendSnapshot(2n, new Uint8Array(0), snapshotBytes(MiB), 2 * MiB).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_TRANSPORT_SNAPSHOT_FAILED')).toBe(true);
    expect(snapshots).toHaveLength(0);
  });

  it('a receiver with a sink takes the data chunk by chunk, finishes once it verified, and aborts a failed transfer', async () => {
    const events: string[] = [];
    const chunks: Uint8Array[] = [];
    let failWrites = false;
    const b = await startMember(2n, {
      receiver: {
        onMessages: () => undefined,
        onSnapshot: async () => {
          events.push('whole');
        },
        receiveSnapshot: async (from, metadata, totalBytes) => {
          events.push(`open ${from} ${new TextDecoder().decode(metadata)} ${totalBytes}`);
          chunks.length = 0;
          return {
            write: async (chunk) => {
              if (failWrites) throw new Error('disk full');
              chunks.push(chunk.slice());
            },
            finish: async () => {
              events.push(`finish ${chunks.length}`);
            },
            abort: async () => {
              events.push('abort');
            },
          };
        },
      },
    });
    members.push(b);
    const a = await startMember(1n);
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const data = snapshotBytes(5 * MiB + 3);
    await a.transport.sendSnapshot(2n, new TextEncoder().encode('m'), pieces(data, 2 * MiB), data.length);
    expect(events).toEqual([`open 1 m ${data.length}`, 'finish 6']);
    expect(Buffer.compare(Buffer.concat(chunks), Buffer.from(data))).toBe(0);
    // Shorter than announced: the sink is aborted, never finished.
    events.length = 0;
    const short = await a.transport.sendSnapshot(2n, new TextEncoder().encode('m'), snapshotBytes(MiB), 2 * MiB).catch((e: unknown) => e);
    expect(hasCode(short, 'ERR_TRANSPORT_SNAPSHOT_FAILED')).toBe(true);
    await waitFor(() => events.includes('abort'), 10_000, 'the sink aborted');
    expect(events).toEqual([`open 1 m ${2 * MiB}`, 'abort']);
    // The sink failing: the transfer fails at the sender with the sink's reason.
    events.length = 0;
    failWrites = true;
    const failed = await a.transport.sendSnapshot(2n, new TextEncoder().encode('m'), snapshotBytes(MiB), MiB).catch((e: unknown) => e);
    expect(hasCode(failed, 'ERR_TRANSPORT_SNAPSHOT_FAILED')).toBe(true);
    expect(String((failed as Error).cause)).toContain('disk full');
    await waitFor(() => events.includes('abort'), 10_000, 'the sink aborted');
    expect(events).toEqual([`open 1 m ${MiB}`, 'abort']);
    expect(b.transport.stats().received.snapshotsReceived).toBe(1);
  });

  it('one snapshot at a time per peer; a refusal by the receiver reaches the sender', async () => {
    let release: (() => void) | undefined;
    const b = await startMember(2n, {
      receiver: {
        onMessages: () => undefined,
        onSnapshot: () =>
          new Promise<void>((resolve, reject) => {
            release = () => reject(new Error('state machine refused it'));
            void resolve;
          }),
      },
    });
    members.push(b);
    const a = await startMember(1n);
    members.push(a);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    const first = a.transport.sendSnapshot(2n, new Uint8Array(0), snapshotBytes(1024), 1024).catch((e: unknown) => e);
    const busy = await a.transport.sendSnapshot(2n, new Uint8Array(0), snapshotBytes(1024), 1024).catch((e: unknown) => e);
    expect(hasCode(busy, 'ERR_TRANSPORT_SNAPSHOT_BUSY')).toBe(true);
    await waitFor(() => release !== undefined, 10_000, 'the first snapshot at the receiver');
    release!();
    expect(hasCode(await first, 'ERR_TRANSPORT_SNAPSHOT_FAILED')).toBe(true);
  });
});
