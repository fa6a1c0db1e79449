/**
 * Peer transport throughput over loopback gRPC: messages/s and MB/s from one member to another
 * for several message sizes, and the rate of a chunked snapshot transfer. The sender keeps its
 * queue topped up (send returns false when full, then it yields a turn).
 *
 *   npx nx run raft-transport:bench          (TRANSPORT_BENCH_SECONDS=5 for longer runs)
 */
import { createLogger } from '@ward/platform/logging';
import { PeerTransport, startPeerServer } from '../src/index';

const SECONDS = Number(process.env['TRANSPORT_BENCH_SECONDS'] ?? '3');
const logger = createLogger({ name: 'transport-bench', level: 'silent' });
const MiB = 1024 * 1024;

async function pair(onMessages: (count: number, bytes: number) => void): Promise<{ a: PeerTransport; b: PeerTransport; close: () => Promise<void> }> {
  const b = new PeerTransport({
    localId: 2n,
    receiver: {
      onMessages: (_from, messages) => onMessages(messages.length, messages.reduce((n, m) => n + m.length, 0)),
      onSnapshot: async () => undefined,
    },
  });
  const server = await startPeerServer(b, { host: '127.0.0.1', port: 0, logger });
  const a = new PeerTransport({ localId: 1n, receiver: { onMessages: () => undefined }, peers: [[2n, `127.0.0.1:${server.port}`]] });
  return { a, b, close: async () => (await a.close(), await b.close(), await server.server.stop(100)) };
}

async function messages(sizeBytes: number): Promise<string> {
  let received = 0;
  let receivedBytes = 0;
  const { a, close } = await pair((count, bytes) => {
    received += count;
    receivedBytes += bytes;
  });
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
  return `| ${sizeBytes} B | ${(received / seconds).toFixed(0)} | ${(receivedBytes / MiB / seconds).toFixed(1)} | ${perBatch.toFixed(0)} | ${stats.droppedQueueFull} |`;
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

console.log(`\nPeer messages over loopback gRPC, ${SECONDS} s per size (one sender, one receiver)\n`);
console.log('| message size | messages/s | MiB/s | messages per frame | dropped (queue full) |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const size of [64, 1024, 16 * 1024]) console.log(await messages(size));
console.log('\nSnapshot transfer\n');
console.log('| transfer | rate | time |');
console.log('| --- | ---: | ---: |');
console.log(await snapshot(100 * MiB));
