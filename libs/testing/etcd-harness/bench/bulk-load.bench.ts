// ward vs real etcd 3.4.23, 3 members each, one system after the other: a bulk load of
// BENCH_BULK_KEYS keys (default 300,000; 256-byte values, txns of 128 puts from 8 clients, as the
// scale bench loads them) and what it cost: keys/s, and the CPU every server process spent per key
// over the load (utime + stime from /proc: etcd's members; ward's members and gateway) beside the
// load generator's own. On this 2-core machine the processes share the cores, so CPU per key says
// whether one system is cheaper even when the client or the disk sets the rate; runs a minute
// apart can differ by 30% in rate, so compare the two systems of one run, or alternate commits
// (BENCH_TARGETS=ward) and compare server CPU per key divided by the client's (the client does
// the same work in every run, so the quotient stays when the whole machine speeds up or slows).
// Prints a table; writes nothing.
//   BENCH_TARGETS (default etcd,ward); BENCH_BULK_ROUNDS (default 1): loads per system, each on a
//   fresh cluster. BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of every ward process there.
import { cpus, loadavg } from 'node:os';
import { processCpuMicros, startEtcdCluster, startWardCluster, type ServerProcess } from '../src/index';
import { benchGatewayEnv, benchNodeArgs } from './gateway-env';
import { LOAD_CLIENTS as CLIENTS, PUTS_PER_TXN, writeKeys } from './load-writes';

const KEYS = Number((process.env.BENCH_BULK_KEYS ?? '300000').replaceAll('_', ''));
const ROUNDS = Number(process.env.BENCH_BULK_ROUNDS ?? 1);
const TARGETS = (process.env.BENCH_TARGETS ?? 'etcd,ward').split(',');
const VALUE = Buffer.alloc(256, 'v');
/** As in the scale bench: etcd's quota raised, ward's members given the same and a heap to hold it. */
const QUOTA_BYTES = 8 * 1024 ** 3;
const WARD_NODE_ENV = { RAFT_NODE_QUOTA_BACKEND_BYTES: String(QUOTA_BYTES), NODE_OPTIONS: '--max-old-space-size=12288' };

if (!Number.isSafeInteger(KEYS) || KEYS < PUTS_PER_TXN || KEYS > 10_000_000) throw new Error(`BENCH_BULK_KEYS: ${KEYS} is not a key count in [${PUTS_PER_TXN}, 10000000]`);
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 20) throw new Error(`BENCH_BULK_ROUNDS: ${ROUNDS} is not a whole number in [1, 20]`);

interface Load {
  readonly system: string;
  readonly keysPerSecond: number;
  /** Server CPU per key, µs, per process and summed. */
  readonly perProcess: readonly { readonly name: string; readonly micros: number }[];
  readonly serverMicros: number;
  readonly clientMicros: number;
}

async function load(system: string, endpoint: string, servers: readonly ServerProcess[]): Promise<Load> {
  const before = servers.map((server) => processCpuMicros(server.pid));
  const clientBefore = process.cpuUsage();
  const seconds = await writeKeys(endpoint, 0, KEYS, VALUE);
  const client = process.cpuUsage(clientBefore);
  const perProcess = servers.map((server, i) => ({ name: server.name, micros: (processCpuMicros(server.pid) - before[i]!) / KEYS }));
  return {
    system,
    keysPerSecond: KEYS / seconds,
    perProcess,
    serverMicros: perProcess.reduce((sum, p) => sum + p.micros, 0),
    clientMicros: (client.user + client.system) / KEYS,
  };
}

async function run(target: string): Promise<Load> {
  if (target === 'etcd') {
    const cluster = await startEtcdCluster({ members: 3, extraArgs: ['--quota-backend-bytes', String(QUOTA_BYTES)] });
    try {
      return await load('etcd 3.4.23', cluster.clientEndpoint, cluster.serverProcesses());
    } finally {
      await cluster.stop();
    }
  }
  const cluster = await startWardCluster({ nodes: 3, nodeEnv: WARD_NODE_ENV, gatewayEnv: benchGatewayEnv(), nodeArgs: benchNodeArgs(), cpuProfileDir: process.env.BENCH_CPU_PROF_DIR });
  try {
    return await load('ward', cluster.clientEndpoint, cluster.serverProcesses());
  } finally {
    await cluster.stop();
  }
}

const loadBefore = loadavg().map((value) => value.toFixed(1)).join(' / ');
const loads: Load[] = [];
for (let round = 0; round < ROUNDS; round++) for (const target of TARGETS) loads.push(await run(target));
const loadAfter = loadavg().map((value) => value.toFixed(1)).join(' / ');

const us = (micros: number): string => micros.toFixed(1);
console.log(`bulk load of ${KEYS.toLocaleString('en-US')} keys (256-byte values, txns of ${PUTS_PER_TXN} from ${CLIENTS} clients), ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}; load average before ${loadBefore}, after ${loadAfter}`);
console.log('| system | keys/s | server CPU µs/key | per process (µs/key) | client CPU µs/key | server / client CPU |');
console.log('| --- | ---: | ---: | --- | ---: | ---: |');
for (const l of loads) {
  console.log(`| ${l.system} | ${l.keysPerSecond.toFixed(0)} | ${us(l.serverMicros)} | ${l.perProcess.map((p) => `${p.name} ${us(p.micros)}`).join(', ')} | ${us(l.clientMicros)} | ${(l.serverMicros / l.clientMicros).toFixed(2)} |`);
}
const etcd = loads.filter((l) => l.system.startsWith('etcd'));
const ward = loads.filter((l) => l.system === 'ward');
if (etcd.length > 0 && ward.length > 0) {
  const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  console.log(
    `ward/etcd: keys/s ${(mean(ward.map((l) => l.keysPerSecond)) / mean(etcd.map((l) => l.keysPerSecond))).toFixed(2)}×, ` +
      `server CPU per key ${(mean(ward.map((l) => l.serverMicros)) / mean(etcd.map((l) => l.serverMicros))).toFixed(2)}×`,
  );
}
