/**
 * Peer transport over loopback, messages on the frame stream and on gRPC's Send stream: messages/s
 * and MB/s from one member to another for several message sizes (the sender keeps its queue topped
 * up: send returns false when full, then it yields a turn); CPU per message when two members pass
 * one 300-byte message back and forth (what a Raft round of one put looks like: a message per
 * event-loop turn, no batching to hide the per-message cost); and the rate of a chunked snapshot
 * transfer (always gRPC).
 *
 *   npx nx run raft-transport:bench          (TRANSPORT_BENCH_SECONDS=5 for longer runs)
 */
import { createLogger } from '@ward/platform/logging';
import { PeerTransport, startPeerServer } from '../src/index';

const SECONDS = Number(process.env['TRANSPORT_BENCH_SECONDS'] ?? '3');
const logger = createLogger({ name: 'transport-bench', level: 'silent' });
const MiB = 1024 * 1024;

async function pair(onMessages: (count: number, bytes: number) => void, frameStream = true): Promise<{ a: PeerTransport; b: PeerTransport; close: () => Promise<void> }> {
  const b = new PeerTransport({
    localId: 2n,
    frameStream,
    receiver: {
      onMessages: (_from, messages) => onMessages(messages.length, messages.reduce((n, m) => n + m.length, 0)),
      onSnapshot: async () => undefined,
    },
  });
  const server = await startPeerServer(b, { host: '127.0.0.1', port: 0, logger });
  const a = new PeerTransport({ localId: 1n, frameStream, receiver: { onMessages: () => undefined }, peers: [[2n, `127.0.0.1:${server.port}`]] });
  return { a, b, close: async () => (await a.close(), await b.close(), await server.server.stop(100)) };
}

const linkName = (frameStream: boolean): string => (frameStream ? 'frame stream' : 'gRPC');

async function messages(sizeBytes: number, frameStream: boolean): Promise<string> {
  let received = 0;
  let receivedBytes = 0;
  const { a, close } = await pair((count, bytes) => {
    received += count;
    receivedBytes += bytes;
  }, frameStream);
  const message = new Uint8Array(sizeBytes).fill(1);
  // Warm up the connection.
  a.send(2n, message);
  while (received === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  received = 0;
  receivedBytes = 0;
  const startedMs = performance.now();
  const deadline = startedMs + SECONDS * 1000;
  while (performance.now() < deadline) {
    for (let i = 0; i < 256; i++) if (!a.send(2n, message)) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const seconds = (performance.now() - startedMs) / 1000;
  const stats = a.stats().peers[0]!;
  await close();
  const perBatch = stats.sentMessages / Math.max(1, stats.sentBatches);
  return `| ${linkName(frameStream)} | ${sizeBytes} B | ${(received / seconds).toFixed(0)} | ${(receivedBytes / MiB / seconds).toFixed(1)} | ${perBatch.toFixed(0)} | ${stats.droppedQueueFull} |`;
}

/** Two members bounce one message, each answering in the next turn: CPU (both ends) per message. */
async function pingPong(frameStream: boolean): Promise<string> {
  const message = new Uint8Array(300).fill(5);
  let count = 0;
  let stopAt = Number.POSITIVE_INFINITY;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const bounce = (from: () => PeerTransport, to: bigint) => () => {
    count++;
    if (count >= stopAt) return done();
    setImmediate(() => from().send(to, message));
  };
  const b: PeerTransport = new PeerTransport({ localId: 2n, frameStream, receiver: { onMessages: bounce(() => b, 1n) } });
  const a: PeerTransport = new PeerTransport({ localId: 1n, frameStream, receiver: { onMessages: bounce(() => a, 2n) } });
  const serverB = await startPeerServer(b, { host: '127.0.0.1', port: 0, logger });
  const serverA = await startPeerServer(a, { host: '127.0.0.1', port: 0, logger });
  a.setPeer(2n, `127.0.0.1:${serverB.port}`);
  b.setPeer(1n, `127.0.0.1:${serverA.port}`);
  a.send(2n, message);
  // Warm up: the first thousands of bounces run colder (JIT, first-touched memory).
  while (count < 3000) await new Promise((resolve) => setTimeout(resolve, 5));
  const startCount = count;
  const cpu = process.cpuUsage();
  const startedMs = performance.now();
  stopAt = count + Math.max(2000, SECONDS * 2000);
  await finished;
  const used = process.cpuUsage(cpu);
  const sent = count - startCount;
  const seconds = (performance.now() - startedMs) / 1000;
  await Promise.all([a.close(), b.close()]);
  await Promise.all([serverA.server.stop(100), serverB.server.stop(100)]);
  return `| ${linkName(frameStream)} | ${((used.user + used.system) / sent).toFixed(1)} | ${((seconds * 1e6) / sent).toFixed(1)} |`;
}

async function snapshot(sizeBytes: number): Promise<string> {
  const { a, close } = await pair(() => undefined);
  const data = new Uint8Array(sizeBytes).fill(3);
  const startedMs = performance.now();
  await a.sendSnapshot(2n, new Uint8Array(16), data, sizeBytes);
  const seconds = (performance.now() - startedMs) / 1000;
  await close();
  return `| ${sizeBytes / MiB} MiB snapshot, 1 MiB chunks | ${(sizeBytes / MiB / seconds).toFixed(1)} MB/s | ${(seconds * 1000).toFixed(0)} ms |`;
}

console.log(`\nPeer messages over loopback, ${SECONDS} s per size (one sender, one receiver)\n`);
console.log('| link | message size | messages/s | MiB/s | messages per frame | dropped (queue full) |');
console.log('| --- | --- | ---: | ---: | ---: | ---: |');
for (const size of [64, 1024, 16 * 1024]) for (const frameStream of [true, false]) console.log(await messages(size, frameStream));
console.log('\nOne 300-byte message bounced between two members, one per event-loop turn (both ends in this process)\n');
console.log('| link | CPU µs per message (sent and received) | µs per hop |');
console.log('| --- | ---: | ---: |');
for (const round of [1, 2]) for (const frameStream of round === 1 ? [true, false] : [false, true]) console.log(await pingPong(frameStream));
console.log('\nSnapshot transfer\n');
console.log('| transfer | rate | time |');
console.log('| --- | ---: | ---: |');
console.log(await snapshot(100 * MiB));
