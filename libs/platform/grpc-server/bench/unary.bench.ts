// What serving a unary call costs the server, by serving path: grpc-js's call machinery, or the
// direct path off the HTTP/2 stream (src/unary-streams.ts). The server runs in a child process
// answering a small fixed response (as the gateway answers a read from its replica); a grpc-js
// client here keeps `BENCH_CONCURRENCY` calls in flight over 4 connections. Rounds alternate the
// two paths so machine drift hits both; each row is one round.
//
//   npx tsx libs/platform/grpc-server/bench/unary.bench.ts    (BENCH_DURATION_MS, BENCH_ROUNDS)
import { fork, type ChildProcess } from 'node:child_process';
import { Metadata, credentials, makeGenericClientConstructor, type Client, type ServiceDefinition } from '@grpc/grpc-js';
import { createLogger } from '@ward/platform/logging';
import { createGrpcServer } from '../src/index';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const CONNECTIONS = 4;
const RESPONSE = Buffer.alloc(120, 7);
type StoreClient = Client & { Get(request: Buffer, metadata: Metadata, callback: (error: Error | null) => void): void };
const raw = (value: Buffer): Buffer => value;
const definition: ServiceDefinition = {
  Get: { path: '/bench.Store/Get', requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
};

/** The child: serves Get and reports its CPU time when asked. */
async function child(direct: boolean): Promise<void> {
  const server = createGrpcServer({
    host: '127.0.0.1',
    port: 0,
    maxReceiveMessageBytes: 1 << 20,
    maxSendMessageBytes: 1 << 20,
    keepaliveTimeMs: 30_000,
    keepaliveTimeoutMs: 10_000,
    maxConcurrentStreams: 1000,
    logger: createLogger({ name: 'bench', level: 'warn' }),
    serveUnaryDirectly: direct,
  });
  server.addService(definition, { Get: async (_request: Buffer, context: { metadata: { get(key: string): unknown[] } }) => (context.metadata.get('token'), RESPONSE) });
  const port = await server.start();
  process.on('message', (message) => {
    if (message === 'cpu') {
      const usage = process.cpuUsage();
      process.send!({ cpuUs: usage.user + usage.system, counts: server.callCounts() });
    }
    if (message === 'stop') void server.stop(100).then(() => process.exit(0));
  });
  process.send!({ port });
}

/** A token in the metadata of every call, as etcd clients send one. */
function withToken(): Metadata {
  const metadata = new Metadata();
  metadata.set('token', 'abcdefghijklmnop.42');
  return metadata;
}

function ask<T>(proc: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    proc.once('message', (answer) => resolve(answer as T));
    proc.send(message);
  });
}

async function round(direct: boolean): Promise<{ direct: boolean; callsPerSecond: number; serverCpuUsPerCall: number }> {
  const proc = fork(new URL(import.meta.url).pathname, ['child', String(direct)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise<{ port: number }>((resolve) => proc.once('message', (m) => resolve(m as { port: number })));
  const Store = makeGenericClientConstructor(definition, 'Store');
  const clients = Array.from({ length: CONNECTIONS }, (_, i) => new Store(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.channel_id': i } as never) as StoreClient);
  const call = (client: StoreClient): Promise<void> =>
    new Promise((resolve, reject) => client.Get(Buffer.from('bench/key-1'), withToken(), (error: Error | null) => (error ? reject(error) : resolve())));
  const loop = async (until: number, worker: number): Promise<number> => {
    let n = 0;
    while (performance.now() < until) {
      await call(clients[worker % CONNECTIONS]!);
      n++;
    }
    return n;
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => loop(performance.now() + 500, w)));
  const before = await ask<{ cpuUs: number }>(proc, 'cpu');
  const started = performance.now();
  const calls = (await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => loop(started + DURATION_MS, w)))).reduce((a, b) => a + b, 0);
  const elapsed = performance.now() - started;
  const after = await ask<{ cpuUs: number; counts: { direct: number; grpcJs: number } }>(proc, 'cpu');
  if ((after.counts.direct > 0) !== direct) throw new Error(`round ${direct ? 'direct' : 'grpc-js'} served ${JSON.stringify(after.counts)}`);
  for (const client of clients) client.close();
  proc.send('stop');
  await new Promise((resolve) => proc.once('exit', resolve));
  return { direct, callsPerSecond: Math.round((calls / elapsed) * 1000), serverCpuUsPerCall: Math.round((after.cpuUs - before.cpuUs) / calls) };
}

async function main(): Promise<void> {
  console.log(`unary call server cost, ${CONCURRENCY} in flight over ${CONNECTIONS} connections, ${DURATION_MS} ms per round, load ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
  console.log('| path | calls/s | server CPU µs/call |\n| --- | ---: | ---: |');
  for (let i = 0; i < ROUNDS; i++) {
    for (const direct of [false, true]) {
      const row = await round(direct);
      console.log(`| ${row.direct ? 'direct' : 'grpc-js'} | ${row.callsPerSecond} | ${row.serverCpuUsPerCall} |`);
    }
  }
}

if (process.argv[2] === 'child') void child(process.argv[3] === 'true');
else void main();
