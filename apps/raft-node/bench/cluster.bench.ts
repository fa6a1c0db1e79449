// Benchmark (not a test): a 3-member cluster of real processes on this machine, driven through
// the internal API (wardnode.Node) from this process.
//   npx nx run raft-node:bench            (or: npx tsx apps/raft-node/bench/cluster.bench.ts)
//   WARD_BENCH_SECONDS=10 sets each phase's length (default 8).
// Prints puts/s with p50/p99 latency at 1, 16 and 64 concurrent clients, linearizable and
// serializable reads/s, and fdatasyncs/s per member (puts per fdatasync shows group commit).
import { LocalCluster, buildRaftNodeBundle, getRequest, putRequest, type NodeAnswer, type NodeApiClient } from '@ward/testing/cluster';
import type { ApplyRequest } from '@ward/etcd/apply';

const PHASE_SECONDS = Number(process.env.WARD_BENCH_SECONDS ?? 8);
const VALUE = new Uint8Array(256).fill(0x61);
const KEYS = 10_000;

interface PhaseResult {
  readonly name: string;
  readonly clients: number;
  readonly ops: number;
  readonly errors: number;
  readonly opsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly fsyncsPerSecond: number;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Sum of every member's wal_fdatasync_total. */
async function fsyncs(cluster: LocalCluster): Promise<number> {
  let total = 0;
  for (const member of cluster.members) {
    const text = await (await fetch(`http://127.0.0.1:${member.httpPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('ward_raft_node_wal_fdatasync_total'));
    total += line === undefined ? 0 : Number(line.split(' ').at(-1));
  }
  return total;
}

async function phase(cluster: LocalCluster, name: string, clients: number, op: (client: NodeApiClient, i: number) => Promise<NodeAnswer>, pick: (i: number) => NodeApiClient): Promise<PhaseResult> {
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const fsyncsBefore = await fsyncs(cluster);
  const started = performance.now();
  const deadline = started + PHASE_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < deadline) {
        const i = counter++;
        const t0 = performance.now();
        try {
          const answer = await op(pick(c), i);
          if (answer.kind === 'ok') latencies.push(performance.now() - t0);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const fsyncsAfter = await fsyncs(cluster);
  latencies.sort((a, b) => a - b);
  return {
    name,
    clients,
    ops: latencies.length,
    errors,
    opsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    fsyncsPerSecond: (fsyncsAfter - fsyncsBefore) / seconds,
  };
}

const key = (i: number): string => `bench-${(i * 7919) % KEYS}`;
const put = (i: number): ApplyRequest => putRequest(key(i), VALUE);

const cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), env: { RAFT_NODE_LOG_LEVEL: 'warn' } });
try {
  const leader = await cluster.waitForLeader(30_000);
  const followers = cluster.members.filter((m) => m.id !== leader).map((m) => m.id);
  // A few channels, so one HTTP/2 connection is not the bottleneck of the client side.
  const leaderClients = Array.from({ length: 4 }, () => cluster.client(leader));
  const pickLeader = (c: number): NodeApiClient => leaderClients[c % leaderClients.length]!;
  const pickAny = (c: number): NodeApiClient => cluster.client(cluster.members[c % cluster.members.length]!.id);
  await phase(cluster, 'warm-up', 8, (client, i) => client.propose(put(i), 5000), pickLeader);
  const results: PhaseResult[] = [];
  for (const clients of [1, 16, 64]) results.push(await phase(cluster, 'put', clients, (client, i) => client.propose(put(i), 5000), pickLeader));
  for (const clients of [16, 64]) {
    results.push(await phase(cluster, 'get (linearizable, all members)', clients, (client, i) => client.read(getRequest(key(i)), false, 5000), pickAny));
    results.push(await phase(cluster, 'get (serializable, all members)', clients, (client, i) => client.read(getRequest(key(i)), true, 5000), pickAny));
  }
  results.push(await phase(cluster, 'get (linearizable, leader only)', 64, (client, i) => client.read(getRequest(key(i)), false, 5000), pickLeader));
  results.push(await phase(cluster, 'get (linearizable, followers only)', 64, (client, i) => client.read(getRequest(key(i)), false, 5000), (c) => cluster.client(followers[c % followers.length]!)));

  console.log(`3 members on 127.0.0.1, ${PHASE_SECONDS} s per phase, 256-byte values, ${KEYS} keys; fdatasyncs summed over the 3 members\n`);
  console.log('| operation | clients | ops/s | p50 ms | p99 ms | errors | fdatasyncs/s (3 members) | ops per fdatasync per member |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    const perSync = r.name === 'put' && r.fsyncsPerSecond > 0 ? ((r.opsPerSecond * 3) / r.fsyncsPerSecond).toFixed(1) : '-';
    console.log(`| ${r.name} | ${r.clients} | ${r.opsPerSecond.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.errors} | ${r.fsyncsPerSecond.toFixed(0)} | ${perSync} |`);
  }
} finally {
  await cluster.stop();
}
