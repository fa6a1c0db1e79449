import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { credentials } from '@grpc/grpc-js';
import { createTestPki } from '@ward/testing/cluster';
import { encodeBatch } from '../src/frame-codec';
import type { TlsMaterial } from '@ward/platform/grpc-server';
import { PEER_FRAMES_ALPN, PEER_FRAMES_PREFACE } from '../src/index';
import { message, startMember, waitFor, type TestMember } from './helpers';

const members: TestMember[] = [];
const sockets: Socket[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) server.close();
  await Promise.all(members.splice(0).map((m) => m.close()));
});

async function member(...args: Parameters<typeof startMember>): Promise<TestMember> {
  const started = await startMember(...args);
  members.push(started);
  return started;
}

function lengthPrefixed(frame: Uint8Array): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(frame.length, 0);
  return Buffer.concat([prefix, frame]);
}

/** Opens a raw frame-stream connection, writes `bytes`, and resolves when the server closes it. */
async function rawFrameStream(port: number, bytes: Buffer): Promise<'closed'> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(Buffer.concat([PEER_FRAMES_PREFACE, bytes]));
  await new Promise((resolve) => socket.once('close', resolve));
  return 'closed';
}

const KiB = 1024;
const route = { clusterId: 0n, from: 1n, to: 2n };

describe('the peer frame stream', () => {
  it('refuses garbage, bad checksums, oversized and misrouted frames by closing the connection; the port keeps serving', async () => {
    const b = await member(2n, { limits: { maxBatchBytes: 64 * KiB, maxMessageBytes: 64 * KiB, snapshotChunkBytes: 64 * KiB, maxSnapshotMetadataBytes: 64 * KiB, maxBatchMessages: 100 } });
    const good = encodeBatch(route, [message(1)]);
    const flipped = good.slice();
    flipped[40]! ^= 0x01;
    const oversized = Buffer.alloc(4);
    oversized.writeUInt32LE(0xffff_fff0, 0);
    const cases: { name: string; bytes: Buffer }[] = [
      { name: 'random bytes as a frame', bytes: lengthPrefixed(Uint8Array.from({ length: 100 }, (_, i) => (i * 37) & 0xff)) },
      { name: 'flipped bit', bytes: lengthPrefixed(flipped) },
      { name: 'length over the bound', bytes: oversized },
      { name: 'too many messages', bytes: lengthPrefixed(encodeBatch(route, Array.from({ length: 101 }, (_, i) => message(i)))) },
      { name: 'another cluster', bytes: lengthPrefixed(encodeBatch({ ...route, clusterId: 7n }, [message(1)])) },
      { name: 'another member', bytes: lengthPrefixed(encodeBatch({ ...route, to: 3n }, [message(1)])) },
      { name: 'a good frame, then garbage', bytes: Buffer.concat([lengthPrefixed(good), lengthPrefixed(new Uint8Array([1, 1, 0, 0]))]) },
    ];
    for (const c of cases) expect(await rawFrameStream(b.port, c.bytes), c.name).toBe('closed');
    expect(b.transport.stats().received.rejectedFrames).toBe(cases.length);
    // Only the good frame ahead of the garbage was delivered; a regular peer still gets through.
    expect(b.received).toHaveLength(1);
    const a = await member(1n);
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    a.transport.send(2n, message(2));
    await waitFor(() => b.received.length === 2, 5000, 'a regular message after the hostile ones');
  });

  it('one peer port takes messages on the frame stream and on gRPC at once', async () => {
    const c = await member(3n);
    const onFrames = await member(1n, { frameStream: true, peers: [[3n, `127.0.0.1:${c.port}`]] });
    const onGrpc = await member(2n, { frameStream: false, peers: [[3n, `127.0.0.1:${c.port}`]] });
    for (let i = 0; i < 100; i++) {
      onFrames.transport.send(3n, message(i));
      onGrpc.transport.send(3n, message(i));
    }
    await waitFor(() => c.received.length === 200, 5000, '100 messages from each');
    expect(c.received.filter((r) => r.from === 1n)).toHaveLength(100);
    expect(c.received.filter((r) => r.from === 2n)).toHaveLength(100);
  });

  it('finds a connection whose peer went silent and reports the peer unreachable', async () => {
    // A "peer" that accepts and reads but never sends the keepalive byte, as a dead host would not.
    const silent = createServer((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    servers.push(silent);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const unreachable: number[] = [];
    const startedMs = performance.now();
    const a = await member(1n, { keepalive: { timeMs: 100, timeoutMs: 100 }, hooks: { onUnreachable: () => unreachable.push(performance.now() - startedMs) } });
    a.transport.setPeer(2n, `127.0.0.1:${(silent.address() as { port: number }).port}`);
    a.transport.send(2n, message(1));
    await waitFor(() => a.transport.stats().peers[0]!.connected, 5000, 'the connection');
    await waitFor(() => unreachable.length > 0, 5000, 'the silent peer to be noticed');
    // No sooner than the keepalive allows (the connection looked alive for 200 ms).
    expect(unreachable[0]).toBeGreaterThanOrEqual(200);
  });

  /**
   * Two members with a 50 ms keepalive (a peer silent for 100 ms is dropped), one message from 1
   * to 2 delivered; then `meanwhile`, then a second message, which must arrive on the same
   * connection with no peer reported unreachable.
   */
  async function staysConnectedThrough(meanwhile: () => Promise<void>): Promise<void> {
    const b = await member(2n, { keepalive: { timeMs: 50, timeoutMs: 50 } });
    const unreachable: bigint[] = [];
    const a = await member(1n, { keepalive: { timeMs: 50, timeoutMs: 50 }, hooks: { onUnreachable: (peer) => unreachable.push(peer) } });
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    a.transport.send(2n, message(1));
    await waitFor(() => b.received.length === 1, 5000, 'the first message');
    await meanwhile();
    a.transport.send(2n, message(2));
    await waitFor(() => b.received.length === 2, 5000, 'the second message');
    expect(unreachable).toEqual([]);
    expect(a.transport.stats().peers[0]!.reconnects).toBe(0);
  }

  it('a live connection stays up across several keepalive intervals', async () => {
    await staysConnectedThrough(() => new Promise((resolve) => setTimeout(resolve, 600)));
  });

  it("a stall of the sender's own event loop longer than the silence bound is not taken for the peer's silence", async () => {
    await staysConnectedThrough(async () => {
      // 400 ms without a turn (as under GC or a starved CPU): four times the 100 ms silence bound.
      const stallUntilMs = performance.now() + 400;
      while (performance.now() < stallUntilMs);
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
  });
});

describe('the peer frame stream over mutual TLS', () => {
  let tls: TlsMaterial;
  let ca: Buffer;
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'frame-stream-tls-'));
    const files = createTestPki(dir, []);
    tls = { cert: readFileSync(files.server.certFile), key: readFileSync(files.server.keyFile), ca: readFileSync(files.caFile) };
    ca = tls.ca!;
    rmSync(dir, { recursive: true, force: true });
  });

  it('carries messages between members with certificates from the cluster CA, and refuses a client without one', async () => {
    const grpcTls = credentials.createSsl(tls.ca, tls.key, tls.cert);
    const b = await member(2n, { serverTls: tls, credentials: grpcTls, frameStreamTls: tls });
    const a = await member(1n, { serverTls: tls, credentials: grpcTls, frameStreamTls: tls });
    a.transport.setPeer(2n, `127.0.0.1:${b.port}`);
    for (let i = 0; i < 50; i++) a.transport.send(2n, message(i));
    await waitFor(() => b.received.length === 50, 5000, '50 messages over TLS');
    // No client certificate: the handshake fails, nothing is delivered.
    const anonymous = tlsConnect({ host: '127.0.0.1', port: b.port, ca, servername: 'localhost', ALPNProtocols: [PEER_FRAMES_ALPN] });
    sockets.push(anonymous);
    anonymous.on('error', () => undefined);
    anonymous.on('secureConnect', () => anonymous.write(Buffer.concat([PEER_FRAMES_PREFACE, lengthPrefixed(encodeBatch(route, [message(99)]))])));
    anonymous.resume();
    await new Promise((resolve) => anonymous.once('close', resolve));
    expect(b.received).toHaveLength(50);
  });
});
