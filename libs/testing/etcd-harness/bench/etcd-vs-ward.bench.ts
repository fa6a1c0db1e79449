// ward vs real etcd 3.4.23, side by side on this machine (both clusters up, the cases interleaved),
// measured by the same client code
// (a closed-loop grpc-js load generator over etcd's own protos). Both run 3 members on 127.0.0.1
// with auth enabled; the load runs as a user holding READWRITE on the prefix `bench/`.
// Beside ops/s and latency it reports server CPU per operation (every server process's utime +
// stime from /proc over the measured window, summed: etcd's members; ward's raft-nodes + gateway)
// and the load generator's own CPU per operation. Prints a table and writes docs/benchmarks.md.
//   BENCH_DURATION_MS (default 3000) per measurement, BENCH_OUT (default docs/benchmarks.md).
//   BENCH_WARMUP_MS (default 5000): each system first runs every KV workload this long, unmeasured.
//   BENCH_TARGETS=ward (or etcd) measures one system only and writes nothing (profiling runs);
//   BENCH_WORKLOADS=put,range (serializable) runs only the named workloads (by name prefix);
//   `auth-flood` is the Authenticate-flood scenario (bench/auth-flood.ts), which writes its own
//   section of the page: run alone, it replaces only that section.
//   BENCH_CLIENTS=1 (or 16,64) runs only those client counts.
//   BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of every ward process there (node --cpu-prof).
//   BENCH_GATEWAY_ENV=NAME=value,... passes GATEWAY_* settings to ward's gateway (A/B runs, e.g.
//   GATEWAY_READ_REPLICA=false); BENCH_NODE_ENV=NAME=value,... RAFT_NODE_* settings to its members.
//   BENCH_BASELINE_ROOT=<dir>: another checkout of this workspace (e.g. `git worktree add` of an
//   older commit, node_modules linked) whose build runs as a further cluster, "ward (baseline)",
//   measured interleaved with the others: an A/B of two builds on one machine state. Writes nothing.
//   BENCH_ROUNDS (default 1, at most 9): every case is measured this many times, the rounds one
//   after the other (each interleaved as above); per case the tables show the round whose ratio of
//   the two systems' throughput is the median (both systems' figures from that same round) and
//   list every round's ratio, so one run shows its own spread.
import { WORKSPACE_ROOT } from '@ward/testing/cluster';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { join } from 'node:path';
import {
  EtcdGrpcClient,
  resetTarget,
  runLoad,
  setupAuth,
  startEtcdCluster,
  startWardCluster,
  type LoadOperation,
  type LoadResult,
  type ProcessActivity,
  type Target,
  waitUntilQuiet,
} from '../src/index';
import { authFloodSection, measureAuthFlood, type AuthFloodResult } from './auth-flood';
import { benchGatewayEnv, benchNodeArgs, benchNodeEnv } from './gateway-env';
import { medianRounds, type Paired, type Results } from './rounds';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3000);
/**
 * Unmeasured load per KV workload, per system, before the first case: ward's processes compile
 * their hot code while they run (V8 tiers a function up after many calls), etcd's was compiled
 * ahead of time. Without it the first cases measure ward's start-up, not its steady state.
 */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 5000);
const WARMUP_CLIENTS = 16;
const OUT = process.env.BENCH_OUT ?? join(WORKSPACE_ROOT, 'docs', 'benchmarks.md');
const CLIENT_FILTER = process.env.BENCH_CLIENTS?.split(',').map(Number);
const clients = (counts: readonly number[]): number[] => counts.filter((count) => CLIENT_FILTER === undefined || CLIENT_FILTER.includes(count));
const CONCURRENCIES = clients([1, 16, 64]);
const AUTH_CONCURRENCIES = clients([1, 16]);
const TARGETS = (process.env.BENCH_TARGETS ?? 'etcd,ward').split(',');
const WORKLOAD_FILTER = process.env.BENCH_WORKLOADS?.split(',');
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT || undefined;
const BASELINE_LABEL = 'ward (baseline)';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1 || ROUNDS > 9) throw new RangeError(`BENCH_ROUNDS must be an integer in 1..9, got ${process.env.BENCH_ROUNDS}`);
const USER = { name: 'bench', password: 'bench-pw-7' } as const;
/** A user whose role holds WIDE_PERMISSIONS grants (the bench/ prefix among them). */
const WIDE_USER = { name: 'bench-wide', password: 'bench-pw-8' } as const;
const WIDE_PERMISSIONS = 10_000;
const PREFILLED_KEYS = 1000;
const VALUE = Buffer.alloc(256, 'v');

const key = (text: string): Buffer => Buffer.from(`bench/${text}`);
const put: LoadOperation = (client, { clientIndex, sequence, token }) =>
  client.call('KV', 'Put', { key: key(`w/${clientIndex}/${sequence & 1023}`), value: VALUE }, { token });
const rangeLinearizable: LoadOperation = (client, { clientIndex, sequence, token }) =>
  client.call('KV', 'Range', { key: key(`r/${(clientIndex * 7919 + sequence) % PREFILLED_KEYS}`) }, { token });
const rangeSerializable: LoadOperation = (client, { clientIndex, sequence, token }) =>
  client.call('KV', 'Range', { key: key(`r/${(clientIndex * 7919 + sequence) % PREFILLED_KEYS}`), serializable: true }, { token });
const authenticate: LoadOperation = (client) => client.call('Auth', 'Authenticate', { name: USER.name, password: USER.password });

interface Workload {
  readonly name: string;
  readonly operation: LoadOperation;
  readonly concurrencies: readonly number[];
  readonly credentials: { readonly name: string; readonly password: string } | undefined;
  readonly warmup: number;
}

const WORKLOADS: Workload[] = [
  { name: 'put', operation: put, concurrencies: CONCURRENCIES, credentials: USER, warmup: 20 },
  { name: 'range (linearizable)', operation: rangeLinearizable, concurrencies: CONCURRENCIES, credentials: USER, warmup: 20 },
  { name: 'range (serializable)', operation: rangeSerializable, concurrencies: CONCURRENCIES, credentials: USER, warmup: 20 },
  { name: `put, ${WIDE_PERMISSIONS.toLocaleString('en-US')} permissions`, operation: put, concurrencies: clients([16]), credentials: WIDE_USER, warmup: 20 },
  { name: 'authenticate', operation: authenticate, concurrencies: AUTH_CONCURRENCIES, credentials: undefined, warmup: 2 },
].filter((workload) => WORKLOAD_FILTER === undefined || WORKLOAD_FILTER.some((name) => workload.name.startsWith(name)));

const AUTH_FLOOD = WORKLOAD_FILTER === undefined || WORKLOAD_FILTER.some((name) => 'auth-flood'.startsWith(name));
const AUTH_FLOOD_OPTIONS = { durationMs: DURATION_MS, attackerClients: 40, kvClients: 8 } as const;
const authFloodResults = new Map<string, AuthFloodResult>();

async function prepare(target: Target): Promise<void> {
  const client = new EtcdGrpcClient(target.clientEndpoint);
  try {
    await resetTarget(client);
    const wide = Array.from({ length: WIDE_PERMISSIONS - 1 }, (_, i) => ({ permType: 'READ' as const, key: `other/${String(i).padStart(5, '0')}/`, rangeEnd: `other/${String(i).padStart(5, '0')}0` }));
    await setupAuth(client, {
      roles: [
        { name: 'bench', permissions: [{ permType: 'READWRITE', key: 'bench/', rangeEnd: 'bench0' }] },
        { name: 'bench-wide', permissions: [{ permType: 'READWRITE', key: 'bench/', rangeEnd: 'bench0' }, ...wide] },
      ],
      users: [
        { ...USER, roles: ['bench'] },
        { ...WIDE_USER, roles: ['bench-wide'] },
      ],
    });
    const token = await client.authenticate(USER.name, USER.password);
    for (let i = 0; i < PREFILLED_KEYS; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => client.call('KV', 'Put', { key: key(`r/${i + j}`), value: VALUE }, { token })));
    }
  } finally {
    client.close();
  }
}

interface System {
  readonly label: string;
  readonly target: Target;
  /** One map per round (BENCH_ROUNDS), by case name. */
  readonly rounds: Results[];
}

async function measureCase(system: System, workload: Workload, concurrency: number, round: number): Promise<void> {
  const result = await runLoad({
    endpoint: system.target.clientEndpoint,
    concurrency,
    durationMs: DURATION_MS,
    warmupOperations: workload.warmup,
    credentials: workload.credentials,
    operation: workload.operation,
    serverProcesses: system.target.serverProcesses(),
  });
  (system.rounds[round] ??= new Map()).set(`${workload.name}@${concurrency}`, result);
  console.log(
    `${ROUNDS > 1 ? `round ${round + 1}  ` : ''}${system.label.padEnd(12)} ${workload.name.padEnd(28)} c=${String(concurrency).padStart(2)}  ${result.operationsPerSecond.toFixed(0).padStart(7)} ops/s  p50 ${result.p50Ms.toFixed(1).padStart(6)} ms  p99 ${result.p99Ms.toFixed(1).padStart(7)} ms  server CPU ${serverMicrosPerOp(result).toFixed(0).padStart(5)} µs/op (${perProcess(result)})  client CPU ${clientMicrosPerOp(result).toFixed(0)} µs/op  per op: reads ${activityPerOp(result, 'readCalls').toFixed(1)}, writes ${activityPerOp(result, 'writeCalls').toFixed(1)}, wake-ups ${activityPerOp(result, 'wakeups').toFixed(1)}  errors ${result.errors}${result.firstError ? ` (${result.firstError})` : ''}`,
  );
}

/**
 * Every case on every system, interleaved: case by case, each system in turn (the order swapped
 * from one case to the next), so a drift of the machine's speed during the run hits both alike.
 */
/** Every KV workload for WARMUP_MS at WARMUP_CLIENTS, nothing recorded. */
async function warmUp(system: System): Promise<void> {
  if (WARMUP_MS <= 0) return;
  for (const workload of WORKLOADS) {
    if (workload.credentials === undefined) continue; // Authenticate is bcrypt: nothing to warm
    await runLoad({ endpoint: system.target.clientEndpoint, concurrency: WARMUP_CLIENTS, durationMs: WARMUP_MS, credentials: workload.credentials, operation: workload.operation });
  }
}

/**
 * Between cases: every server process of every system together at most QUIET.maxCoreShare of one
 * core. A case could leave work behind (password checks still queued when its clients stop: tens
 * of ms of bcrypt each; a garbage collection), which would otherwise be counted against the next.
 */
const QUIET = { windowMs: 300, maxCoreShare: 0.3, timeoutMs: 20_000 } as const;

async function settle(systems: readonly System[]): Promise<void> {
  const pids = systems.flatMap((system) => system.target.serverProcesses().map((server) => server.pid));
  const outcome = await waitUntilQuiet(pids, QUIET);
  if (!outcome.quiet || outcome.waitedMs > 2 * QUIET.windowMs) {
    console.log(`  (servers ${outcome.quiet ? 'quiet' : 'still busy'} after ${(outcome.waitedMs / 1000).toFixed(1)} s: ${(outcome.lastCoreShare * 100).toFixed(0)}% of a core)`);
  }
}

async function measure(systems: readonly System[]): Promise<void> {
  for (const system of systems) await prepare(system.target);
  for (const system of systems) await warmUp(system);
  let index = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const workload of WORKLOADS) {
      for (const concurrency of workload.concurrencies) {
        const order = index++ % 2 === 0 ? systems : [...systems].reverse();
        for (const system of order) {
          await settle(systems);
          await measureCase(system, workload, concurrency, round);
        }
      }
    }
  }
  if (!AUTH_FLOOD) return;
  for (const system of systems) {
    const flood = await measureAuthFlood(system.target, { ...AUTH_FLOOD_OPTIONS, attacked: WIDE_USER.name, legitimate: USER, put });
    authFloodResults.set(system.label, flood);
    console.log(`${system.label.padEnd(12)} auth-flood ${JSON.stringify(flood)}`);
  }
}

function ratio(ward: number, etcd: number): string {
  return etcd > 0 && Number.isFinite(ward) ? `${(ward / etcd).toFixed(2)}×` : 'n/a';
}

/** Successful operations of a run (CPU is divided by these). */
function succeeded(result: LoadResult): number {
  return Math.max(1, result.operations - result.errors);
}

function serverMicrosPerOp(result: LoadResult): number {
  let total = 0;
  for (const micros of result.serverCpuMicros.values()) total += micros;
  return total / succeeded(result);
}

function clientMicrosPerOp(result: LoadResult): number {
  return result.clientCpuMicros / succeeded(result);
}

/** A count of LoadResult.serverActivity per successful operation, of one process or summed over all. */
function activityPerOp(result: LoadResult, count: keyof ProcessActivity, process?: string): number {
  let total = 0;
  for (const [name, activity] of result.serverActivity) if (process === undefined || name === process) total += activity[count];
  return total / succeeded(result);
}

function perProcess(result: LoadResult): string {
  return [...result.serverCpuMicros].map(([name, micros]) => `${name} ${(micros / succeeded(result)).toFixed(0)}`).join(', ');
}

const cells = (values: readonly string[]): string => `| ${values.join(' | ')} |`;

const roundRatios = (ratios: readonly number[] | undefined): string => (ratios ?? []).map((value) => `${value.toFixed(2)}×`).join(', ');

/** This build against the baseline's, case by case (BENCH_BASELINE_ROOT). */
function printAgainstBaseline({ reference: baseline, other: ward, ratios }: Paired): void {
  console.log(`this build / baseline: ops/s, p50, p99, server CPU per op${ROUNDS > 1 ? ' (the median round; ops/s of every round)' : ''}`);
  for (const [name, result] of ward) {
    const base = baseline.get(name);
    if (base === undefined) continue;
    const of = (mine: number, theirs: number): string => (theirs > 0 ? `${(mine / theirs).toFixed(2)}×` : 'n/a');
    console.log(
      `${name.padEnd(32)} ${of(result.operationsPerSecond, base.operationsPerSecond)}  p50 ${of(result.p50Ms, base.p50Ms)}  p99 ${of(result.p99Ms, base.p99Ms)}  CPU ${of(serverMicrosPerOp(result), serverMicrosPerOp(base))}${ROUNDS > 1 ? `  rounds ${roundRatios(ratios.get(name))}` : ''}`,
    );
  }
}

function table({ reference: etcd, other: ward, ratios }: Paired): string {
  const byRound = ROUNDS > 1 ? ['ward/etcd ops/s by round'] : [];
  const rows = [
    cells(['operation', 'clients', 'etcd ops/s', 'ward ops/s', 'ward/etcd', ...byRound, 'p50 ms etcd / ward', 'p99 ms etcd / ward', 'ward/etcd p99', 'server CPU µs/op etcd / ward', 'ward/etcd CPU', 'client CPU µs/op etcd / ward', 'errors etcd / ward']),
    cells(['---', '---:', '---:', '---:', '---:', ...byRound.map(() => '---:'), '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  rows.push(
    ...eachCase([etcd, ward], (name, e, w) => [
      e.operationsPerSecond.toFixed(0),
      w.operationsPerSecond.toFixed(0),
      ratio(w.operationsPerSecond, e.operationsPerSecond),
      ...(ROUNDS > 1 ? [roundRatios(ratios.get(name))] : []),
      `${e.p50Ms.toFixed(1)} / ${w.p50Ms.toFixed(1)}`,
      `${e.p99Ms.toFixed(1)} / ${w.p99Ms.toFixed(1)}`,
      ratio(w.p99Ms, e.p99Ms),
      `${serverMicrosPerOp(e).toFixed(0)} / ${serverMicrosPerOp(w).toFixed(0)}`,
      ratio(serverMicrosPerOp(w), serverMicrosPerOp(e)),
      `${clientMicrosPerOp(e).toFixed(0)} / ${clientMicrosPerOp(w).toFixed(0)}`,
      `${e.errors} / ${w.errors}`,
    ]),
  );
  return rows.join('\n');
}

/** One table row per measured case: its name and client count, then `values` of its result in each of `systems`. */
function eachCase(systems: readonly Results[], values: (name: string, ...results: LoadResult[]) => string[]): string[] {
  const rows: string[] = [];
  for (const workload of WORKLOADS) {
    for (const concurrency of workload.concurrencies) {
      const name = `${workload.name}@${concurrency}`;
      rows.push(cells([workload.name, String(concurrency), ...values(name, ...systems.map((results) => results.get(name)!))]));
    }
  }
  return rows;
}

/** The server processes' names, as the results of one system list them. */
function serverNames(results: Results): string[] {
  const first = results.values().next().value as LoadResult | undefined;
  return first === undefined ? [] : [...first.serverCpuMicros.keys()];
}

/** Read and write system calls and wake-ups per operation, both systems, with ward's per process. */
function activityTable(etcd: Results, ward: Results): string {
  const names = serverNames(ward);
  const both = (e: LoadResult, w: LoadResult, count: keyof ProcessActivity): string => `${activityPerOp(e, count).toFixed(1)} / ${activityPerOp(w, count).toFixed(1)}`;
  const rows = [
    cells(['operation', 'clients', 'reads/op etcd / ward', 'writes/op etcd / ward', 'wake-ups/op etcd / ward', ...names.map((name) => `ward ${name} writes / wake-ups`)]),
    cells(['---', '---:', '---:', '---:', '---:', ...names.map(() => '---:')]),
  ];
  rows.push(
    ...eachCase([etcd, ward], (_name, e, w) => [
      both(e, w, 'readCalls'),
      both(e, w, 'writeCalls'),
      both(e, w, 'wakeups'),
      ...names.map((name) => `${activityPerOp(w, 'writeCalls', name).toFixed(1)} / ${activityPerOp(w, 'wakeups', name).toFixed(1)}`),
    ]),
  );
  return rows.join('\n');
}

/** Server CPU µs/op of every process, one system. */
function processTable(label: string, results: Results): string {
  const names = serverNames(results);
  const rows = [cells(['operation', 'clients', ...names.map((name) => `${name} µs/op`), 'sum']), cells(['---', '---:', ...names.map(() => '---:'), '---:'])];
  rows.push(...eachCase([results], (_name, result) => [...names.map((name) => ((result.serverCpuMicros.get(name) ?? Number.NaN) / succeeded(result)).toFixed(0)), serverMicrosPerOp(result).toFixed(0)]));
  return `### ${label}\n\n${rows.join('\n')}`;
}

function machine(): string {
  const cpu = cpus();
  const etcdVersion = execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0];
  return [
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${osType()} ${release()}`,
    `- software: Node.js ${process.version}; ${etcdVersion} (Debian); ward at this commit`,
  ].join('\n');
}

const loadBefore = loadavg().map((value) => value.toFixed(1)).join(' / ');
console.log(`etcd 3.4.23 vs ward, ${DURATION_MS} ms per measurement, load average ${loadBefore}`);
const systems: System[] = [];
const stops: (() => Promise<void>)[] = [];
try {
  if (TARGETS.includes('etcd')) {
    const etcdCluster = await startEtcdCluster({ members: 3 });
    stops.push(() => etcdCluster.stop());
    systems.push({ label: 'etcd 3.4.23', target: etcdCluster, rounds: [] });
  }
  if (TARGETS.includes('ward')) {
    const wardCluster = await startWardCluster({ nodes: 3, gatewayEnv: benchGatewayEnv(), nodeEnv: benchNodeEnv(), nodeArgs: benchNodeArgs(), ...(process.env.BENCH_CPU_PROF_DIR ? { cpuProfileDir: process.env.BENCH_CPU_PROF_DIR } : {}) });
    stops.push(() => wardCluster.stop());
    systems.push({ label: 'ward', target: wardCluster, rounds: [] });
  }
  if (BASELINE_ROOT !== undefined) {
    const baseline = await startWardCluster({ nodes: 3, workspaceRoot: BASELINE_ROOT, gatewayEnv: benchGatewayEnv(), nodeEnv: benchNodeEnv(), nodeArgs: benchNodeArgs() });
    stops.push(() => baseline.stop());
    systems.push({ label: BASELINE_LABEL, target: baseline, rounds: [] });
  }
  await measure(systems);
} finally {
  for (const stop of stops.reverse()) await stop();
}
const etcd = systems.find((system) => system.target.kind === 'etcd')?.rounds;
const ward = systems.find((system) => system.label === 'ward')?.rounds;
const loadAfter = loadavg().map((value) => value.toFixed(1)).join(' / ');
if (BASELINE_ROOT !== undefined) {
  const baseline = systems.find((system) => system.label === BASELINE_LABEL)!.rounds;
  if (ward !== undefined) printAgainstBaseline(medianRounds(baseline, ward));
  console.log(`load average after ${loadAfter}; an A/B run: nothing written`);
  process.exit(0);
}
if (etcd === undefined || ward === undefined) {
  console.log('one system measured: nothing written');
  process.exit(0);
}
const floodSection = AUTH_FLOOD ? authFloodSection(authFloodResults, AUTH_FLOOD_OPTIONS) : undefined;
if (WORKLOADS.length === 0 && floodSection !== undefined) {
  // The flood alone: only its section of the page is replaced (or added).
  const page = existsSync(OUT) ? readFileSync(OUT, 'utf8') : '# Benchmarks: ward vs etcd 3.4.23\n';
  const [head, ...sections] = page.split(/\n(?=## )/);
  const others = sections.filter((section) => !section.startsWith('## Authenticate flood\n'));
  writeFileSync(OUT, `${[head, ...others].map((part) => part!.trimEnd()).join('\n\n')}\n\n${floodSection}`);
  console.log(`\n${floodSection}\nwrote the Authenticate flood section of ${OUT}`);
  process.exit(0);
}
const paired = medianRounds(etcd, ward);
const rendered = table(paired);
const OWN_SECTIONS = new Set(['Setup', 'Machine and load', 'Results', 'Server CPU per process', 'System calls and wake-ups per operation', ...(floodSection === undefined ? [] : ['Authenticate flood'])]);

/** The page's other sections (other benches' figures, written by hand), kept as they are. */
function keptSections(path: string): string {
  if (!existsSync(path)) return '';
  const sections = readFileSync(path, 'utf8').split(/\n(?=## )/).slice(1);
  return sections
    .filter((section) => !OWN_SECTIONS.has(section.slice(3, section.indexOf('\n')).trim()))
    .map((section) => `\n${section.trimEnd()}\n`)
    .join('');
}
const kept = keptSections(OUT);
console.log(`\n${rendered}\n`);
writeFileSync(
  OUT,
  `# Benchmarks: ward vs etcd 3.4.23

Produced by \`npm run bench\` (\`libs/testing/etcd-harness/bench/etcd-vs-ward.bench.ts\`); rerun it to
refresh this page.

## Setup

- Real etcd 3.4.23 (Debian's \`etcd\`), 3 members on 127.0.0.1, simple tokens, bcrypt cost 10.
- ward: 3 raft-node processes and one etcd-gateway process on 127.0.0.1, simple tokens, bcrypt
  cost 10, in-process password tier.
- Both clusters run at once on the same machine and disk; the cases are interleaved (each case
  measures one system then the other, the order swapped from case to case), so a drift of the
  machine's speed during the run affects both alike. The idle cluster's own background work
  (heartbeats, ticks) runs during the other's measurement.
- The same client code drives both: a closed-loop load generator on grpc-js with etcd's own
  protos; each client has its own connection, authenticates once as user \`bench\` (READWRITE on
  the prefix \`bench/\`, auth enabled) and sends the token with every request. Puts write 256-byte
  values to 1024 keys per client; ranges read single keys out of 1000 prefilled ones.
  Authenticate runs without a token, as etcdctl does on every invocation.
- Each system first runs every KV workload for ${WARMUP_MS / 1000} s at ${WARMUP_CLIENTS} clients, unmeasured (ward's
  processes compile their hot code as they run; etcd's was compiled ahead of time); then
  ${DURATION_MS / 1000} s per measurement after a short warm-up; throughput counts successful
  requests only; p99 is the nearest-rank 99th percentile of all request latencies.
- Before each measurement the bench waits until the server processes of both systems together
  use at most ${QUIET.maxCoreShare * 100}% of one core over ${QUIET.windowMs} ms (at most ${QUIET.timeoutMs / 1000} s): work a case could leave behind
  (password checks still queued when its clients stop) is not counted against the next.
- ${ROUNDS > 1 ? `Every case was measured in ${ROUNDS} rounds, one after the other. Per case, the tables show the round whose ward/etcd throughput ratio is the median (both systems' figures from that round) and the results table lists every round's ratio: the spread within this one run.` : 'Every case was measured once (`BENCH_ROUNDS=1`): on a shared or virtual machine one round can differ from the next by a third; `BENCH_ROUNDS=3` shows the spread.'}

## Machine and load

${machine()}
- load average (1/5/15 min) before: ${loadBefore}; after: ${loadAfter}

**Caveats.** The load generator, the three members and the gateway share the machine's cores with
each other (and, when this page was produced, with other work: see the load average). The client
is a single Node.js process, which itself saturates at high client counts, and its ceiling is the
same for both systems, so ratios near 1× at 64 clients can mean "client-bound". Figures are
indicative, not a capacity statement; compare ratios, and rerun on an idle machine before drawing
conclusions.

## Results

Server CPU is the utime + stime of every server process over the measured window (etcd: its
three members; ward: its three raft-nodes and the gateway), divided by the successful operations;
client CPU is the load generator's own. On a 2-core machine the load generator competes with the
servers for the cores, so CPU per operation says more about cost than ops/s does.

${rendered}

## Server CPU per process

${processTable('etcd 3.4.23', paired.reference)}

${processTable('ward', paired.other)}

## System calls and wake-ups per operation

Counted like the CPU, over the measured window and summed over the server processes: read-class
and write-class system calls (\`syscr\` and \`syscw\` of \`/proc/<pid>/io\`: reads, writes and
sends on sockets and files; an fdatasync is neither) and wake-ups (voluntary context switches of
every thread, from \`/proc/<pid>/task/*/status\`: an event loop or a worker going to sleep, each
followed by a wake-up). They drift less with the machine's speed than ops/s and CPU do (etcd's
the most: Go's runtime parks and wakes its threads as the load comes). On loopback each socket
write also runs the receiver's side of TCP and wakes it, in the writer's time.

${activityTable(paired.reference, paired.other)}
${floodSection === undefined ? '' : `\n${floodSection}`}${kept}`,
);
console.log(`wrote ${OUT}`);
