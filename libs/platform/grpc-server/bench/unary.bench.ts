// What serving a unary call costs the server, by serving path: grpc-js's call machinery, the
// direct path off node:http2's stream (src/unary-streams.ts), a bare node:http2 handler with none
// of ward's server around it (what node:http2 itself costs), or HTTP/2 frames read and written by
// the server itself (bench/h2-frames.ts, a measurement of that lever, not a served path). The server
// runs in a child process answering a small fixed response (as the gateway answers a read from its
// replica); a grpc-js client here keeps `BENCH_CONCURRENCY` calls in flight over `BENCH_CONNECTIONS`
// connections, each call with a token and a deadline.
// Rounds alternate the paths so machine drift hits each alike; each row is one round. The child
// runs this file bundled as the apps are built (tools/build-app.mjs: esbuild, no kept function
// names), not under tsx, whose kept names add a property definition to every closure a call makes.
//
//   npx tsx libs/platform/grpc-server/bench/unary.bench.ts    (BENCH_DURATION_MS, BENCH_ROUNDS)
// BENCH_CONNECTIONS (default 4) sets the client's connections: at 16 with 16 in flight each call
// has a connection of its own, as the page's 16 clients do. BENCH_PATHS=direct,node:http2
// measures only those paths; BENCH_CHILD_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes Node.js
// options to the serving child (a profile per round).
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { createServer as createHttp2Server } from 'node:http2';
import { Metadata, credentials, makeGenericClientConstructor, type Client, type ServiceDefinition } from '@grpc/grpc-js';
import { createLogger } from '@ward/platform/logging';
import { createGrpcServer } from '../src/index';
import { listenFrames } from './h2-frames';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 16);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 4);
if (!Number.isSafeInteger(CONNECTIONS) || CONNECTIONS < 1) throw new Error(`BENCH_CONNECTIONS must be a positive integer, got ${process.env['BENCH_CONNECTIONS']}`);
/** Each call's deadline, sent as grpc-timeout (the page's load generator sends one too). */
const DEADLINE_MS = 5000;
const PATHS = ['grpc-js', 'direct', 'node:http2', 'frames'] as const;
type ServingPath = (typeof PATHS)[number];
const ASKED = process.env['BENCH_PATHS']?.split(',') ?? PATHS;
for (const path of ASKED) if (!(PATHS as readonly string[]).includes(path)) throw new Error(`BENCH_PATHS: unknown path ${path} (paths: ${PATHS.join(', ')})`);
/** The paths measured, in PATHS's order. */
const MEASURED = PATHS.filter((path) => ASKED.includes(path));
const CHILD_ARGS = process.env['BENCH_CHILD_ARGS']?.split(' ').filter((arg) => arg !== '') ?? [];
const WORKSPACE = join(fileURLToPath(import.meta.url), '../../../../..');
/** The child's bundle, inside the workspace so that its npm packages resolve. */
const CHILD_BUNDLE = join(WORKSPACE, 'dist/bench/unary-child.mjs');
const TOKEN = 'abcdefghijklmnop.42';
const RESPONSE = Buffer.alloc(120, 7);
const REQUEST = Buffer.from('bench/key-1');
/** A request's body on the wire: the gRPC length prefix and REQUEST. */
const REQUEST_BODY_BYTES = 5 + REQUEST.length;
const GET_PATH = '/bench.Store/Get';
type StoreClient = Client & { Get(request: Buffer, metadata: Metadata, options: { deadline: number }, callback: (error: Error | null) => void): void };
const raw = (value: Buffer): Buffer => value;
const definition: ServiceDefinition = {
  Get: { path: GET_PATH, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
};

/** Answers the parent's 'cpu' with the child's CPU time and its calls by path, and stops on 'stop'. */
function reportWhenAsked(counts: () => Partial<Record<ServingPath, number>>, stop: () => void): void {
  process.on('message', (message) => {
    if (message === 'cpu') {
      const usage = process.cpuUsage();
      process.send!({ cpuUs: usage.user + usage.system, counts: counts() });
    }
    if (message === 'stop') stop();
  });
}

/** The child: serves Get and reports its CPU time when asked. */
async function child(path: ServingPath): Promise<void> {
  if (path === 'node:http2') {
    let served = 0;
    const server = createHttp2Server();
    server.on('stream', (stream, headers) => {
      const pieces: Buffer[] = [];
      stream.on('data', (piece: Buffer) => pieces.push(piece));
      stream.on('end', () => {
        if (headers['token'] !== TOKEN || Buffer.concat(pieces).length !== REQUEST_BODY_BYTES) throw new Error(`node:http2: unexpected call ${JSON.stringify(headers)}`);
        served++;
        stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': 'identity,deflate,gzip', 'grpc-encoding': 'identity' }, { waitForTrailers: true });
        stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'OK' }));
        const framed = Buffer.allocUnsafe(5 + RESPONSE.length);
        framed[0] = 0;
        framed.writeUInt32BE(RESPONSE.length, 1);
        RESPONSE.copy(framed, 5);
        stream.end(framed);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    reportWhenAsked(() => ({ 'node:http2': served }), () => server.close(() => process.exit(0)));
    process.send!({ port: (server.address() as { port: number }).port });
    return;
  }
  if (path === 'frames') {
    let served = 0;
    const { server, port } = await listenFrames((headers, body) => {
      // What the other paths' handler reads, checked: the decoded headers must be the client's.
      if (headers[':path'] !== GET_PATH || headers['token'] !== TOKEN || body.length !== REQUEST_BODY_BYTES) throw new Error(`h2-frames: unexpected call ${JSON.stringify(headers)}`);
      served++;
      return RESPONSE;
    });
    reportWhenAsked(() => ({ frames: served }), () => server.close(() => process.exit(0)));
    process.send!({ port });
    return;
  }
  const direct = path === 'direct';
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
  // The token read as the gateway reads it (CallContext.metadataValue: off the request headers on the direct path).
  server.addService(definition, { Get: async (_request: Buffer, context: { metadataValue(key: string): unknown }) => (context.metadataValue('token'), RESPONSE) });
  const port = await server.start();
  reportWhenAsked(
    () => {
      const counts = server.callCounts();
      return { 'grpc-js': counts.grpcJs, direct: counts.direct };
    },
    () => void server.stop(100).then(() => process.exit(0)),
  );
  process.send!({ port });
}

/** A token in the metadata of every call, as etcd clients send one. */
function withToken(): Metadata {
  const metadata = new Metadata();
  metadata.set('token', TOKEN);
  return metadata;
}

function ask<T>(proc: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    proc.once('message', (answer) => resolve(answer as T));
    proc.send(message);
  });
}

async function round(path: ServingPath): Promise<{ path: ServingPath; callsPerSecond: number; serverCpuUsPerCall: number }> {
  const proc = fork(CHILD_BUNDLE, ['child', path], { execArgv: CHILD_ARGS, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise<{ port: number }>((resolve) => proc.once('message', (m) => resolve(m as { port: number })));
  const Store = makeGenericClientConstructor(definition, 'Store');
  const clients = Array.from({ length: CONNECTIONS }, (_, i) => new Store(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.channel_id': i } as never) as unknown as StoreClient);
  const call = (client: StoreClient): Promise<void> =>
    new Promise((resolve, reject) => client.Get(REQUEST, withToken(), { deadline: Date.now() + DEADLINE_MS }, (error: Error | null) => (error ? reject(error) : resolve())));
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
  const after = await ask<{ cpuUs: number; counts: Partial<Record<ServingPath, number>> }>(proc, 'cpu');
  if ((after.counts[path] ?? 0) < calls || PATHS.some((other) => other !== path && (after.counts[other] ?? 0) > 0)) throw new Error(`round ${path} served ${JSON.stringify(after.counts)}`);
  for (const client of clients) client.close();
  proc.send('stop');
  await new Promise((resolve) => proc.once('exit', resolve));
  return { path, callsPerSecond: Math.round((calls / elapsed) * 1000), serverCpuUsPerCall: Math.round((after.cpuUs - before.cpuUs) / calls) };
}

async function main(): Promise<void> {
  await build({ absWorkingDir: WORKSPACE, entryPoints: [fileURLToPath(import.meta.url)], outfile: CHILD_BUNDLE, bundle: true, platform: 'node', target: 'node20', format: 'esm', packages: 'external', tsconfig: join(WORKSPACE, 'tsconfig.json'), logLevel: 'warning' });
  console.log(`unary call server cost, ${CONCURRENCY} in flight over ${CONNECTIONS} connections, ${DURATION_MS} ms per round, load ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
  console.log('| path | calls/s | server CPU µs/call |\n| --- | ---: | ---: |');
  for (let i = 0; i < ROUNDS; i++) {
    for (const path of MEASURED) {
      const row = await round(path);
      console.log(`| ${row.path} | ${row.callsPerSecond} | ${row.serverCpuUsPerCall} |`);
    }
  }
}

if (process.argv[2] === 'child') void child(process.argv[3] as ServingPath);
else void main();
