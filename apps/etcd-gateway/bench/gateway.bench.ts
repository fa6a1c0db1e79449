// Indicative throughput and latency through one in-process gateway in front of three real
// raft-node processes on 127.0.0.1, auth on, as a user with a prefix permission: Put, Range
// (linearizable and serializable) at 1, 16 and 64 concurrent callers, and Authenticate/s at bcrypt
// cost 10. Prints a table. On a shared machine the figures are indicative only.
import { createLogger } from '@ward/platform/logging';
import { LocalCluster, buildRaftNodeBundle } from '@ward/testing/cluster';
import { createGateway, gatewayConfig } from '../src/index';
import { etcdTestClient, type EtcdTestClient } from '../src/testing/etcd-client';

const DURATION_MS = Number(process.env['BENCH_DURATION_MS'] ?? 3000);
const CONCURRENCY = [1, 16, 64];

interface Row {
  readonly operation: string;
  readonly concurrency: number;
  readonly opsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

async function closedLoop(operation: string, concurrency: number, clients: EtcdTestClient[], call: (client: EtcdTestClient, n: number) => Promise<boolean>): Promise<Row> {
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const endAt = performance.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      const client = clients[worker % clients.length]!;
      while (performance.now() < endAt) {
        const started = performance.now();
        const ok = await call(client, counter++);
        latencies.push(performance.now() - started);
        if (!ok) errors += 1;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { operation, concurrency, opsPerSecond: Math.round((latencies.length / DURATION_MS) * 1000), p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), errors };
}

async function main(): Promise<void> {
  const cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), env: { RAFT_NODE_LOG_LEVEL: 'warn' } });
  await cluster.waitForLeader(20_000);
  const gateway = await createGateway(gatewayConfig({ grpcPort: 0, httpPort: 0, nodeEndpoints: cluster.members.map((m) => m.apiAddress), logLevel: 'warn' }), {
    logger: createLogger({ name: 'bench', level: 'warn' }),
  });
  const clients = Array.from({ length: 8 }, () => etcdTestClient(gateway.grpcAddress));
  const admin = clients[0]!;
  const must = async (method: string, request: object, token?: string): Promise<Record<string, unknown>> => {
    const result = await admin.call('Auth', method, request, token);
    if (!result.ok) throw new Error(`${method}: ${result.details}`);
    return result.value;
  };
  await must('UserAdd', { name: 'root', password: 'root-pw' });
  await must('UserGrantRole', { user: 'root', role: 'root' });
  await must('RoleAdd', { name: 'bench' });
  await must('RoleGrantPermission', { name: 'bench', perm: { permType: 'Readwrite', key: Buffer.from('bench/'), range_end: Buffer.from('bench0') } });
  await must('UserAdd', { name: 'bencher', password: 'bench-pw' });
  await must('UserGrantRole', { user: 'bencher', role: 'bench' });
  await must('AuthEnable', {});
  const token = (await must('Authenticate', { name: 'bencher', password: 'bench-pw' }))['token'] as string;
  const value = Buffer.alloc(256, 0x76);
  const rows: Row[] = [];
  for (const concurrency of CONCURRENCY) {
    rows.push(await closedLoop('put', concurrency, clients, async (c, n) => (await c.call('KV', 'Put', { key: Buffer.from(`bench/${n % 1000}`), value }, token)).ok));
    rows.push(await closedLoop('range (linearizable)', concurrency, clients, async (c, n) => (await c.call('KV', 'Range', { key: Buffer.from(`bench/${n % 1000}`) }, token)).ok));
    rows.push(await closedLoop('range (serializable)', concurrency, clients, async (c, n) => (await c.call('KV', 'Range', { key: Buffer.from(`bench/${n % 1000}`), serializable: true }, token)).ok));
  }
  for (const concurrency of [1, 4]) {
    rows.push(await closedLoop('authenticate (bcrypt 10)', concurrency, clients, async (c) => (await c.call('Auth', 'Authenticate', { name: 'bencher', password: 'bench-pw' })).ok));
  }
  console.log(`\netcd-gateway, 3 raft-nodes on 127.0.0.1, auth on, ${DURATION_MS} ms per row (indicative: shared machine)\n`);
  console.log('| operation | clients | ops/s | p50 ms | p99 ms | errors |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(`| ${row.operation} | ${row.concurrency} | ${row.opsPerSecond} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} | ${row.errors} |`);
  for (const client of clients) client.close();
  await gateway.stop();
  await cluster.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
