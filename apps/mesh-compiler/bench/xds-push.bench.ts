// Benchmark (not a test): push latency of `ward-mesh serve --xds` from a policy file change to the
// new listener reaching every subscribed node, at 10, 100 and 1,000 nodes, and the server's CPU
// per push. The server is the real executable (a child process); the nodes are raw ADS streams in
// this process that ACK every response like grpc-js-xds does (real XdsServers would measure the
// same delivery plus their own listener switch, a few ms; see the end-to-end test). Each node is
// its own workload (distinct labels), so every push builds one listener per node: the worst case.
// Run: `npx nx run mesh-compiler:bench` (short: about a minute).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { findMessageType } from '@ward/mesh/envoy-api';

const SIZES = [10, 100, 1_000];
const ROUNDS = 15;
const LDS = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const SAS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
function messageType(name: string): NonNullable<ReturnType<typeof findMessageType>> {
  const type = findMessageType(name);
  if (type === undefined) throw new Error(`${name} missing from @ward/mesh/envoy-api`);
  return type;
}
const requestType = messageType('envoy.service.discovery.v3.DiscoveryRequest');
const responseType = messageType('envoy.service.discovery.v3.DiscoveryResponse');

const policy = (round: number) => `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny, namespace: bench}
spec:
  action: DENY
  rules:
  - to:
    - operation:
        paths: ["/svc.Bench/Round${round}"]
  - from:
    - source:
        principals: ["cluster.local/ns/bench/sa/blocked"]
    when:
    - key: request.headers[x-tenant]
      values: ["t${round}"]
`;

function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ 100)
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ward-mesh-xds-bench-'));
  writeFileSync(join(dir, 'policy.yaml'), policy(0));
  const server = spawn(process.execPath, [resolve(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'ward-mesh.mjs'), 'serve', '--xds', '127.0.0.1:0', '--policies', dir], {
    env: { ...process.env, MESH_COMPILER_HTTP_PORT: '0', MESH_COMPILER_LOG_LEVEL: 'info', MESH_COMPILER_PROCESS_METRICS: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const xdsPort = await new Promise<number>((resolvePort) => {
    let buffered = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /"xdsPort":(\d+)/u.exec(buffered);
      if (match) resolvePort(Number(match[1]));
      if (process.env['BENCH_DEBUG']) process.stderr.write(chunk);
      if (buffered.length > 1_000_000) buffered = buffered.slice(-10_000);
    });
  });
  const client = new grpc.Client(`127.0.0.1:${xdsPort}`, grpc.credentials.createInsecure(), { 'grpc.max_concurrent_streams': 10_000 });
  console.log('| nodes | p50 ms | p99 ms | max ms | server CPU ms per push |');
  console.log('|---:|---:|---:|---:|---:|');
  let round = 0;
  for (const size of SIZES) {
    const latest: string[] = new Array(size).fill('');
    const waiters: Array<() => void> = [];
    const streams = Array.from({ length: size }, (_, i) => {
      const call = client.makeBidiStreamRequest(SAS, (b: Buffer) => b, (b: Buffer) => b);
      call.on('error', () => undefined);
      call.on('data', (bytes: Buffer) => {
        const response = responseType.toObject(responseType.decode(bytes)) as { version_info: string; nonce: string };
        latest[i] = response.version_info;
        call.write(Buffer.from(requestType.encode(requestType.fromObject({ type_url: LDS, resource_names: [`xds.istio.io/grpc/lds/inbound/10.0.0.1:${8000 + (i % 1000)}`], version_info: response.version_info, response_nonce: response.nonce })).finish()));
        for (const w of waiters.splice(0)) w();
      });
      const node = { id: `sidecar~10.0.0.1~b${size}-${i}.bench~bench.svc.cluster.local`, metadata: { fields: { NAMESPACE: { stringValue: 'bench' }, LABELS: { structValue: { fields: { app: { stringValue: `a${i}` } } } } } } };
      call.write(Buffer.from(requestType.encode(requestType.fromObject({ node, type_url: LDS, resource_names: [`xds.istio.io/grpc/lds/inbound/10.0.0.1:${8000 + (i % 1000)}`] })).finish()));
      return call;
    });
    const everyoneAt = async (predicate: (v: string) => boolean) => {
      while (!latest.every(predicate)) await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 200); });
    };
    await everyoneAt((v) => v !== '');
    const latencies: number[] = [];
    const cpu: number[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      round += 1;
      const before = latest[0] ?? '';
      const cpuBefore = cpuMsOf(server.pid ?? 0);
      const started = performance.now();
      writeFileSync(join(dir, 'policy.yaml'), policy(round));
      await everyoneAt((v) => v !== before);
      latencies.push(performance.now() - started);
      await new Promise((r2) => setTimeout(r2, 100));
      cpu.push(cpuMsOf(server.pid ?? 0) - cpuBefore);
    }
    console.log(`| ${size} | ${percentile(latencies, 50).toFixed(0)} | ${percentile(latencies, 99).toFixed(0)} | ${Math.max(...latencies).toFixed(0)} | ${percentile(cpu, 50).toFixed(0)} |`);
    for (const s of streams) s.end();
    await new Promise((r) => setTimeout(r, 500));
  }
  client.close();
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
