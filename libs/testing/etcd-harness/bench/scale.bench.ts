// ward vs real etcd 3.4.23 with many keys, 3 members each, one system after the other: bulk load
// (txns of 128 puts of 256-byte values from 8 clients), memory (RSS) and disk per member, a range
// over all keys in pages of 1000, `etcdctl snapshot save` (time, file size, the serving member's
// RSS growth meanwhile), a full restart until the cluster serves again, a follower that
// was down during a run of writes catching up, and the longest event-loop stall of every ward
// member (its `event_loop_longest_stall_seconds` gauge, read before each of its stops and at the end)
// with its longest garbage-collection pause (`gc_longest_pause_seconds`). Last, a soak: every key
// overwritten again and again (txns of 128 puts from 8 clients, cycling through the key space) with
// a compaction every 30 s to the revision of the compaction before, each member's RSS read every
// 10 s: memory must stay flat once compaction releases history as fast as it is written (from the
// soak's midpoint to its end). A txn that fails is tried again (at most 5 times), in the soak as in the load.
// Writes the "## Scale" section of docs/benchmarks.md (the other sections are kept).
//   BENCH_SCALE_KEYS (default 1000000): key counts, comma-separated (e.g. 1000000,10000000).
//   BENCH_SCALE_FOLLOWER_WRITES (default 100000, at most the key count): writes while a follower is down.
//   BENCH_SCALE_SOAK_SECONDS (default 300; the issue's hour is 3600): length of the overwrite soak.
//   BENCH_SCALE_RANGE_SECONDS (default 900): the range over all keys stops after this long and the
//     table shows how far it got (etcd 3.4 reads every key of the range for each page, so its paged
//     range grows with the square of the key count: 74 s at 1M keys, hours at 10M).
//   BENCH_TARGETS=ward (or etcd) measures one system only and writes nothing; BENCH_OUT: the page.
//   BENCH_GATEWAY_ENV / BENCH_NODE_ENV (`NAME=value,...`): settings for ward's gateway / members.
//   BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of every ward process there (node --cpu-prof).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { WORKSPACE_ROOT } from '@ward/testing/cluster';
import { benchGatewayEnv, benchNodeArgs, benchNodeEnv } from './gateway-env';
import { LOAD_CLIENTS as CLIENTS, PUTS_PER_TXN, loadKey as key, txnWithRetries, writeKeys } from './load-writes';
import { EtcdGrpcClient, buildWardBundles, httpOk, runEtcdctl, startEtcdCluster, startWardCluster, type EtcdCluster, type WardCluster } from '../src/index';

const KEY_COUNTS = (process.env.BENCH_SCALE_KEYS ?? '1000000').split(',').map((text) => Number(text.replaceAll('_', '')));
const FOLLOWER_WRITES = Number(process.env.BENCH_SCALE_FOLLOWER_WRITES ?? 100_000);
const SOAK_SECONDS = Number(process.env.BENCH_SCALE_SOAK_SECONDS ?? 300);
const RANGE_LIMIT_SECONDS = Number(process.env.BENCH_SCALE_RANGE_SECONDS ?? 900);
const SOAK_COMPACT_MS = 30_000;
const SOAK_SAMPLE_MS = 10_000;
/** The soak logs every sixth sample (a minute). */
const SOAK_LOG_EVERY_SAMPLES = 6;
const TARGETS = (process.env.BENCH_TARGETS ?? 'etcd,ward').split(',');
const OUT = process.env.BENCH_OUT ?? join(WORKSPACE_ROOT, 'docs', 'benchmarks.md');
const PAGE_KEYS = 1000;
const VALUE = Buffer.alloc(256, 'v');
const OTHER_VALUE = Buffer.alloc(256, 'w');
/** etcd's backend quota, raised so 10M keys of 256-byte values (and their history) fit. */
const ETCD_QUOTA_BYTES = 8 * 1024 ** 3;
/**
 * ward's members get the same quota, and a V8 heap large enough to hold it (the store lives in
 * the heap; by default the quota is a quarter of Node's ~4 GiB heap limit, which the soak's
 * history outgrows at a million keys).
 */
const WARD_NODE_ENV = { RAFT_NODE_QUOTA_BACKEND_BYTES: String(ETCD_QUOTA_BYTES), NODE_OPTIONS: '--max-old-space-size=12288' };
/** Longest a phase may wait for a cluster to serve or a follower to catch up. */
const WAIT_LIMIT_MS = 30 * 60_000;
const POLL_MS = 20;
const SAVE_SAMPLE_MS = 100;
const PREFIX = 'scale/';
const PREFIX_END = 'scale0';

if (!Number.isSafeInteger(RANGE_LIMIT_SECONDS) || RANGE_LIMIT_SECONDS <= 0) throw new Error(`BENCH_SCALE_RANGE_SECONDS: ${RANGE_LIMIT_SECONDS} is not a positive whole number of seconds`);
if (!Number.isSafeInteger(SOAK_SECONDS) || SOAK_SECONDS < 2 * SOAK_COMPACT_MS / 1000) throw new Error(`BENCH_SCALE_SOAK_SECONDS: ${SOAK_SECONDS} is not a whole number of seconds of at least ${(2 * SOAK_COMPACT_MS) / 1000}`);
for (const count of KEY_COUNTS) if (!Number.isSafeInteger(count) || count < PUTS_PER_TXN || count > 100_000_000) throw new Error(`BENCH_SCALE_KEYS: ${count} is not a key count in [${PUTS_PER_TXN}, 100000000]`);


interface Measured {
  /** The saved file restored into one new member's data directory (etcdctl / raft-node snapshot-restore), the cluster stopped. */
  readonly restore: { readonly seconds: number; readonly peakRssBytes: number };
  readonly keysPerSecond: number;
  readonly loadSeconds: number;
  readonly rssBytes: readonly number[];
  readonly diskBytes: readonly number[];
  readonly rangeSeconds: number;
  /** Keys the range read before it ended: the key count, or fewer when it hit RANGE_LIMIT_SECONDS. */
  readonly rangeKeys: number;
  readonly save: SnapshotSave;
  readonly restartSeconds: number;
  readonly membersReadySeconds: number;
  /** Each member's peak RSS from its start in the full restart until the cluster served (VmHWM). */
  readonly restartPeakRssBytes: readonly number[];
  readonly followerWrites: number;
  readonly catchUpSeconds: number;
  /** The follower's peak RSS from its start until it caught up (VmHWM). */
  readonly catchUpPeakRssBytes: number;
  /** Longest event-loop stall per member (ward only), seconds. */
  readonly stallSeconds: readonly number[] | undefined;
  /** Longest garbage-collection pause per member (ward only), seconds. */
  readonly gcPauseSeconds: readonly number[] | undefined;
  /** Longest event-loop stalls and GC pauses during a phase (ward only). */
  readonly phaseStalls: { readonly load: PhaseStalls; readonly range: PhaseStalls; readonly soak: PhaseStalls } | undefined;
  readonly soak: Soak;
  /** Wall time of the whole run of this system at this key count. */
  readonly wallSeconds: number;
}

/** Longest event-loop stall and longest garbage-collection pause of each member, then of the gateway, over a phase, seconds. */
interface PhaseStalls {
  readonly stalls: readonly number[];
  readonly gcPauses: readonly number[];
}

/** `etcdctl snapshot save` through the client endpoint. */
interface SnapshotSave {
  readonly seconds: number;
  readonly fileBytes: number;
  /** The member serving it (0-based: etcd's first member; ward's leader). */
  readonly server: number;
  /** Highest RSS of the member serving it (sampled every SAVE_SAMPLE_MS) above its RSS before. */
  readonly rssGrowthBytes: number;
  /** Longest event-loop stalls and GC pauses during the save (ward only). */
  readonly stalls: PhaseStalls | undefined;
}

/** Memory over the overwrite soak. */
interface Soak {
  /** Keys written during the soak. */
  readonly keysWritten: number;
  /** Txns tried again after an error. */
  readonly retried: number;
  readonly compactions: number;
  /** Per member: RSS at the soak's midpoint (several compactions in), at the end, and the highest from the midpoint on. */
  readonly atMidpoint: readonly number[];
  readonly atEnd: readonly number[];
  readonly peak: readonly number[];
}

/** The system-specific parts the measurement needs. */
interface System {
  readonly label: string;
  readonly clientEndpoint: string;
  readonly members: number;
  pid(index: number): number | undefined;
  dataDir(index: number): string;
  stopMember(index: number): Promise<void>;
  startMember(index: number): void;
  /** Every member answers its own health check as ready (a leader known, everything committed applied). */
  membersReady(): Promise<boolean>;
  /** Index of the member leading now. */
  leader(): Promise<number>;
  /** Index of the member that serves `etcdctl snapshot save` through the client endpoint. */
  snapshotServer(): Promise<number>;
  /** The command that restores a saved backup into a new one-member cluster's data directory. */
  restoreCommand(file: string, dataDir: string): { readonly command: string; readonly args: readonly string[]; readonly env?: NodeJS.ProcessEnv };
  /** Applied raft index of member `index` (undefined while it does not answer). */
  appliedIndex(index: number): Promise<number | undefined>;
  /** Longest event-loop stall and GC pause of member `index` so far, seconds (undefined: not measured). */
  stall(index: number): Promise<{ readonly stall: number; readonly gcPause: number } | undefined>;
  /**
   * Longest event-loop stall and GC pause of each member, then of the gateway, since the previous
   * call (a scrape resets them); undefined when not measured. Called at a phase's start and end.
   */
  recentStalls(): Promise<PhaseStalls | undefined>;
  stop(): Promise<void>;
}

const elapsedSeconds = (since: bigint): number => Number(process.hrtime.bigint() - since) / 1e9;

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function pollUntil(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}

/**
 * Reads every key of the prefix, PAGE_KEYS per Range (linearizable), for at most
 * RANGE_LIMIT_SECONDS; returns seconds and the keys seen.
 */
async function rangeAll(endpoint: string): Promise<{ seconds: number; keys: number }> {
  const client = new EtcdGrpcClient(endpoint);
  const started = process.hrtime.bigint();
  let keys = 0;
  let start = Buffer.from(PREFIX);
  try {
    for (;;) {
      const outcome = await client.call<{ kvs: { key: Buffer }[]; more: boolean }>('KV', 'Range', { key: start, range_end: Buffer.from(PREFIX_END), limit: PAGE_KEYS }, { deadlineMs: 60_000 });
      if (!outcome.ok) throw new Error(`range from ${start.toString()} failed: ${outcome.code} ${outcome.details}`);
      keys += outcome.response.kvs.length;
      if (!outcome.response.more || outcome.response.kvs.length === 0 || elapsedSeconds(started) >= RANGE_LIMIT_SECONDS) break;
      start = Buffer.concat([outcome.response.kvs.at(-1)!.key, Buffer.from([0])]);
    }
  } finally {
    client.close();
  }
  return { seconds: elapsedSeconds(started), keys };
}

/**
 * Overwrites every key, cycling, from CLIENTS clients in txns of PUTS_PER_TXN for SOAK_SECONDS,
 * compacting every SOAK_COMPACT_MS to the revision the previous compaction saw as current (one
 * interval of history kept), and reads each member's RSS every SOAK_SAMPLE_MS.
 */
async function overwriteSoak(system: System, count: number): Promise<Soak> {
  const clients = Array.from({ length: CLIENTS }, () => new EtcdGrpcClient(system.clientEndpoint));
  const admin = new EtcdGrpcClient(system.clientEndpoint);
  const startedAt = Date.now();
  const endsAt = startedAt + SOAK_SECONDS * 1000;
  let cursor = 0;
  let keysWritten = 0;
  let retried = 0;
  let compactions = 0;
  const samples: { at: number; rss: number[] }[] = [];
  const midpoint = Date.now() + (SOAK_SECONDS * 1000) / 2;
  const revisionNow = async (): Promise<number> => {
    const outcome = await admin.call<{ header: { revision: string } }>('KV', 'Range', { key: key(0) }, { deadlineMs: 10_000 });
    if (!outcome.ok) throw new Error(`range for the revision failed: ${outcome.code} ${outcome.details}`);
    return Number(outcome.response.header.revision);
  };
  const writers = clients.map(async (client) => {
    while (Date.now() < endsAt) {
      const first = cursor;
      cursor = (cursor + PUTS_PER_TXN) % count;
      const success = [];
      for (let i = 0; i < PUTS_PER_TXN; i++) success.push({ request_put: { key: key((first + i) % count), value: (first / PUTS_PER_TXN) % 2 === 0 ? VALUE : OTHER_VALUE } });
      // A txn that fails (etcd's "request timed out" under this load) is tried again, as in the load.
      retried += await txnWithRetries(client, success, `soak txn at key ${first}`);
      keysWritten += PUTS_PER_TXN;
    }
  });
  const compactor = (async (): Promise<void> => {
    let previous = await revisionNow();
    for (;;) {
      await sleep(Math.min(SOAK_COMPACT_MS, endsAt - Date.now()));
      if (Date.now() >= endsAt) return;
      const current = await revisionNow();
      const outcome = await admin.call('KV', 'Compact', { revision: previous }, { deadlineMs: 60_000 });
      if (!outcome.ok) throw new Error(`compaction to ${previous} failed: ${outcome.code} ${outcome.details}`);
      compactions += 1;
      previous = current;
    }
  })();
  const sampler = (async (): Promise<void> => {
    while (Date.now() < endsAt) {
      await sleep(Math.min(SOAK_SAMPLE_MS, endsAt - Date.now()));
      samples.push({ at: Date.now(), rss: Array.from({ length: system.members }, (_, i) => rssBytes(system.pid(i))) });
      // A line a minute: the course of a long soak, not only its midpoint and end.
      if (samples.length % SOAK_LOG_EVERY_SAMPLES === 0) {
        const { at, rss } = samples.at(-1)!;
        console.log(`${system.label.padEnd(12)} soak ${((at - startedAt) / 1000).toFixed(0)} s: ${keysWritten} keys overwritten, ${compactions} compactions, RSS ${rss.map((b) => (b / 1e6).toFixed(0)).join(' / ')} MB`);
      }
    }
  })();
  try {
    await Promise.all([...writers, compactor, sampler]);
  } finally {
    for (const client of clients) client.close();
    admin.close();
  }
  const settled = samples.filter((sample) => sample.at >= midpoint);
  if (settled.length === 0) throw new Error('no RSS sample in the second half of the soak');
  const members = Array.from({ length: system.members }, (_, i) => i);
  return {
    keysWritten,
    retried,
    compactions,
    atMidpoint: members.map((i) => settled[0]!.rss[i]!),
    atEnd: members.map((i) => settled.at(-1)!.rss[i]!),
    peak: members.map((i) => Math.max(...settled.map((sample) => sample.rss[i]!))),
  };
}

async function serves(endpoint: string): Promise<boolean> {
  const client = new EtcdGrpcClient(endpoint);
  try {
    const outcome = await client.call('KV', 'Range', { key: key(0) }, { deadlineMs: 1000 });
    return outcome.ok;
  } finally {
    client.close();
  }
}

function rssBytes(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  if (pid === undefined) return Number.NaN;
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) * 1024;
}

function diskBytes(dir: string): number {
  return Number(execFileSync('du', ['-s', '--block-size=1', dir], { encoding: 'utf8' }).split('\t')[0]);
}

/** `etcdctl snapshot save` into `file`, the serving member's RSS sampled meanwhile. */
async function snapshotSave(system: System, file: string): Promise<SnapshotSave> {
  const server = await system.snapshotServer();
  await system.recentStalls();
  const before = rssBytes(system.pid(server));
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(system.pid(server)))), SAVE_SAMPLE_MS);
  const started = process.hrtime.bigint();
  const result = await runEtcdctl({ endpoints: [system.clientEndpoint], args: ['snapshot', 'save', file, `--command-timeout=${WAIT_LIMIT_MS / 1000}s`], timeoutMs: WAIT_LIMIT_MS }).finally(() => clearInterval(sampler));
  const seconds = elapsedSeconds(started);
  if (result.exitCode !== 0) throw new Error(`${system.label}: etcdctl snapshot save failed (${result.exitCode}): ${result.stderr.slice(-1500)}`);
  const stalls = await system.recentStalls();
  return { seconds, fileBytes: statSync(file).size, server, rssGrowthBytes: Math.max(0, peak - before), stalls };
}

/**
 * The restore of a saved backup into a new data directory, timed; its peak memory is the process's
 * VmHWM read every SAVE_SAMPLE_MS (growth in the last interval before it exits is missed).
 */
async function timedRestore(system: System, file: string, dataDir: string): Promise<{ seconds: number; peakRssBytes: number }> {
  const { command, args, env } = system.restoreCommand(file, dataDir);
  const started = process.hrtime.bigint();
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-1500)));
  let peak = 0;
  const sample = (): void => {
    try {
      peak = Math.max(peak, rssBytes(child.pid, 'VmHWM') || 0);
    } catch {
      // Exited between two samples.
    }
  };
  const sampler = setInterval(sample, SAVE_SAMPLE_MS);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  }).finally(() => clearInterval(sampler));
  const seconds = elapsedSeconds(started);
  if (exitCode !== 0) throw new Error(`${system.label}: restoring the saved snapshot failed (${exitCode}): ${stderr}`);
  return { seconds, peakRssBytes: peak };
}

async function measure(system: System, count: number, backupFile: string): Promise<Omit<Measured, 'restore'>> {
  const runStarted = process.hrtime.bigint();
  const stalls = Array.from({ length: system.members }, () => 0);
  const gcPauses = Array.from({ length: system.members }, () => 0);
  let stallMeasured = false;
  const readStall = async (index: number): Promise<void> => {
    const read = await system.stall(index);
    if (read === undefined) return;
    stallMeasured = true;
    stalls[index] = Math.max(stalls[index]!, read.stall);
    gcPauses[index] = Math.max(gcPauses[index]!, read.gcPause);
  };
  const ms = (seconds: readonly number[]): string => seconds.map((s) => (s * 1000).toFixed(0)).join(' / ');
  const stallText = (phase: PhaseStalls): string => `${ms(phase.stalls)} ms (GC pauses ${ms(phase.gcPauses)} ms)`;
  const note = (text: string): void => console.log(`${system.label.padEnd(12)} ${count} keys: ${text} (${elapsedSeconds(runStarted).toFixed(1)} s into the run)`);

  await system.recentStalls();
  const loadSeconds = await writeKeys(system.clientEndpoint, 0, count, VALUE);
  const keysPerSecond = count / loadSeconds;
  const loadStalls = await system.recentStalls();
  note(`bulk load ${keysPerSecond.toFixed(0)} keys/s${loadStalls === undefined ? '' : `, longest stall members / gateway ${stallText(loadStalls)}`}`);
  await sleep(2000);
  const rss = Array.from({ length: system.members }, (_, i) => rssBytes(system.pid(i)));
  const disk = Array.from({ length: system.members }, (_, i) => diskBytes(system.dataDir(i)));
  note(`RSS ${rss.map((b) => (b / 1e6).toFixed(0)).join(' / ')} MB, disk ${disk.map((b) => (b / 1e6).toFixed(0)).join(' / ')} MB`);

  await system.recentStalls();
  const range = await rangeAll(system.clientEndpoint);
  const rangeStalls = await system.recentStalls();
  const rangeComplete = range.keys === count;
  if (!rangeComplete && (range.keys > count || range.seconds < RANGE_LIMIT_SECONDS)) throw new Error(`${system.label}: the range saw ${range.keys} keys, not ${count}`);
  note(`range of all keys in pages of ${PAGE_KEYS}: ${rangeComplete ? '' : `stopped after ${range.keys} keys, `}${range.seconds.toFixed(2)} s${rangeStalls === undefined ? '' : `, longest stall members / gateway ${stallText(rangeStalls)}`}`);

  const save = await snapshotSave(system, backupFile);
  note(
    `etcdctl snapshot save: ${save.seconds.toFixed(2)} s, ${(save.fileBytes / 1e6).toFixed(0)} MB, serving member (${save.server + 1})'s RSS +${(save.rssGrowthBytes / 1e6).toFixed(0)} MB${save.stalls === undefined ? '' : `, longest stall members / gateway ${stallText(save.stalls)}`}`,
  );

  for (let i = 0; i < system.members; i++) await readStall(i);
  if (stallMeasured) note(`longest event-loop stall per member so far: ${ms(stalls)} ms (longest GC pause ${ms(gcPauses)} ms)`);
  const stopStarted = process.hrtime.bigint();
  await Promise.all(Array.from({ length: system.members }, (_, i) => system.stopMember(i)));
  note(`all members stopped in ${elapsedSeconds(stopStarted).toFixed(1)} s`);
  const restartStarted = process.hrtime.bigint();
  for (let i = 0; i < system.members; i++) system.startMember(i);
  await pollUntil(`${system.label}'s members to be ready after a full restart`, () => system.membersReady());
  const membersReadySeconds = elapsedSeconds(restartStarted);
  await pollUntil(`${system.label} to serve after a full restart`, () => serves(system.clientEndpoint));
  const restartSeconds = elapsedSeconds(restartStarted);
  const restartPeakRssBytes = Array.from({ length: system.members }, (_, i) => rssBytes(system.pid(i), 'VmHWM'));
  const restartStalls = await system.recentStalls();
  note(
    `full restart: members ready ${membersReadySeconds.toFixed(2)} s, serving ${restartSeconds.toFixed(2)} s, peak RSS ${restartPeakRssBytes.map((b) => (b / 1e6).toFixed(0)).join(' / ')} MB${restartStalls === undefined ? '' : `, longest stall since the range, members / gateway ${stallText(restartStalls)}`}`,
  );

  const followerWrites = Math.min(FOLLOWER_WRITES, count);
  const leader = await system.leader();
  // Not the first member either: etcd's clients write through it.
  const follower = [1, 2].find((i) => i !== leader)!;
  await readStall(follower);
  await system.stopMember(follower);
  await writeKeys(system.clientEndpoint, 0, followerWrites, OTHER_VALUE);
  const target = await system.appliedIndex(leader);
  if (target === undefined) throw new Error(`${system.label}: the leader does not report its applied index`);
  const catchUpStarted = process.hrtime.bigint();
  system.startMember(follower);
  await pollUntil(`${system.label}'s follower to catch up to ${target}`, async () => ((await system.appliedIndex(follower)) ?? -1) >= target);
  const catchUpSeconds = elapsedSeconds(catchUpStarted);
  const catchUpPeakRssBytes = rssBytes(system.pid(follower), 'VmHWM');
  const catchUpStalls = await system.recentStalls();
  note(`follower down during ${followerWrites} writes caught up in ${catchUpSeconds.toFixed(2)} s, peak RSS ${(catchUpPeakRssBytes / 1e6).toFixed(0)} MB${catchUpStalls === undefined ? '' : `, longest stall members / gateway ${stallText(catchUpStalls)}`}`);
  for (let i = 0; i < system.members; i++) await readStall(i);
  if (stallMeasured) note(`longest event-loop stall per member: ${ms(stalls)} ms (longest GC pause ${ms(gcPauses)} ms)`);
  await system.recentStalls();
  const soak = await overwriteSoak(system, count);
  const soakStalls = await system.recentStalls();
  if (soakStalls !== undefined) note(`soak: longest stall members / gateway ${stallText(soakStalls)}`);
  const soakMb = (bytes: readonly number[]): string => bytes.map((b) => (b / 1e6).toFixed(0)).join(' / ');
  note(
    `soak of ${SOAK_SECONDS} s (${soak.keysWritten} keys overwritten, ${soak.compactions} compactions): RSS at the midpoint ${soakMb(soak.atMidpoint)} MB, at the end ${soakMb(soak.atEnd)} MB, peak ${soakMb(soak.peak)} MB`,
  );
  return {
    keysPerSecond,
    loadSeconds,
    rssBytes: rss,
    diskBytes: disk,
    rangeSeconds: range.seconds,
    rangeKeys: range.keys,
    save,
    restartSeconds,
    membersReadySeconds,
    restartPeakRssBytes,
    followerWrites,
    catchUpSeconds,
    catchUpPeakRssBytes,
    stallSeconds: stallMeasured ? stalls : undefined,
    gcPauseSeconds: stallMeasured ? gcPauses : undefined,
    phaseStalls: loadStalls === undefined || rangeStalls === undefined || soakStalls === undefined ? undefined : { load: loadStalls, range: rangeStalls, soak: soakStalls },
    soak,
    wallSeconds: elapsedSeconds(runStarted),
  };
}

function etcdSystem(cluster: EtcdCluster): System {
  const status = async (index: number): Promise<{ memberId: string; leader: string; applied: number } | undefined> => {
    const client = new EtcdGrpcClient(cluster.members[index]!.clientEndpoint);
    try {
      const outcome = await client.call<{ header: { member_id: string }; leader: string; raftAppliedIndex: string }>('Maintenance', 'Status', {}, { deadlineMs: 1000 });
      return outcome.ok ? { memberId: outcome.response.header.member_id, leader: outcome.response.leader, applied: Number(outcome.response.raftAppliedIndex) } : undefined;
    } finally {
      client.close();
    }
  };
  return {
    label: 'etcd 3.4.23',
    clientEndpoint: cluster.clientEndpoint,
    members: cluster.members.length,
    pid: (index) => cluster.members[index]!.process.pid,
    dataDir: (index) => cluster.members[index]!.dataDir,
    stopMember: (index) => cluster.stopMember(index),
    startMember: (index) => cluster.startMember(index),
    membersReady: async () => (await Promise.all(cluster.members.map((member) => httpOk(`${member.clientUrl}/health`).catch(() => false)))).every(Boolean),
    leader: async () => {
      for (;;) {
        const all = await Promise.all(cluster.members.map((_, i) => status(i)));
        const lead = all.find((s) => s !== undefined && s.leader !== '0')?.leader;
        const index = all.findIndex((s) => s?.memberId === lead);
        if (index >= 0) return index;
        await sleep(POLL_MS);
      }
    },
    appliedIndex: async (index) => (await status(index))?.applied,
    // etcdctl's endpoint is the first member, which streams its own database.
    snapshotServer: () => Promise.resolve(0),
    restoreCommand: (file, dataDir) => ({
      command: 'etcdctl',
      args: ['snapshot', 'restore', file, '--data-dir', dataDir, '--name', 'restored', '--initial-cluster', 'restored=http://127.0.0.1:1', '--initial-advertise-peer-urls', 'http://127.0.0.1:1'],
      env: { ETCDCTL_API: '3' },
    }),
    stall: () => Promise.resolve(undefined),
    recentStalls: () => Promise.resolve(undefined),
    stop: () => cluster.stop(),
  };
}

function wardSystem(cluster: WardCluster): System {
  const scrape = async (url: string, prefix: string): Promise<Map<string, number> | undefined> => {
    try {
      const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
      if (!response.ok) return undefined;
      const values = new Map<string, number>();
      const pattern = new RegExp(`^${prefix}([a-z_]+)(?:\\{[^}]*\\})? (\\S+)$`);
      for (const line of (await response.text()).split('\n')) {
        const match = pattern.exec(line);
        if (match !== null) values.set(match[1]!, Number(match[2]));
      }
      return values;
    } catch {
      return undefined;
    }
  };
  // Every scrape resets a process's recent-stall and recent-pause gauges, the bench's own polling
  // too: each scrape's readings are kept here until recentStalls() takes them (members, then the gateway).
  const recentMax = Array.from({ length: cluster.nodes.length + 1 }, () => 0);
  const recentGcMax = Array.from({ length: cluster.nodes.length + 1 }, () => 0);
  const keepRecent = (slot: number, values: Map<string, number> | undefined): Map<string, number> | undefined => {
    const recent = values?.get('event_loop_longest_stall_recent_seconds');
    if (recent !== undefined) recentMax[slot] = Math.max(recentMax[slot]!, recent);
    const gc = values?.get('gc_longest_pause_recent_seconds');
    if (gc !== undefined) recentGcMax[slot] = Math.max(recentGcMax[slot]!, gc);
    return values;
  };
  const metrics = async (index: number): Promise<Map<string, number> | undefined> => keepRecent(index, await scrape(cluster.nodeHttpUrls[index]!, 'ward_raft_node_'));
  const leader = async (): Promise<number> => {
    for (;;) {
      const all = await Promise.all(cluster.nodes.map((_, i) => metrics(i)));
      const index = all.findIndex((m) => m?.get('is_leader') === 1);
      if (index >= 0) return index;
      await sleep(POLL_MS);
    }
  };
  return {
    label: 'ward',
    clientEndpoint: cluster.clientEndpoint,
    members: cluster.nodes.length,
    pid: (index) => cluster.nodes[index]!.pid,
    dataDir: (index) => cluster.nodeDataDirs[index]!,
    stopMember: (index) => cluster.stopNode(index),
    startMember: (index) => cluster.startNode(index),
    membersReady: async () => (await Promise.all(cluster.nodeHttpUrls.map((url) => httpOk(`${url}/readyz`).catch(() => false)))).every(Boolean),
    leader,
    appliedIndex: async (index) => (await metrics(index))?.get('applied_index'),
    // The gateway sends etcd's Snapshot to the leader.
    snapshotServer: leader,
    restoreCommand: (file, dataDir) => ({
      command: process.execPath,
      args: [...WARD_NODE_ENV.NODE_OPTIONS.split(' '), buildWardBundles().raftNode, 'snapshot-restore', '--file', file, '--data-dir', dataDir, '--member-id', '1', '--members', '1=restored=127.0.0.1:1=127.0.0.1:2'],
    }),
    stall: async (index) => {
      const values = await metrics(index);
      const stall = values?.get('event_loop_longest_stall_seconds');
      return stall === undefined ? undefined : { stall, gcPause: values!.get('gc_longest_pause_seconds') ?? 0 };
    },
    recentStalls: async () => {
      const gateway = cluster.nodes.length;
      const all = await Promise.all([...cluster.nodes.map((_, i) => metrics(i)), scrape(cluster.jsonGatewayUrl, 'ward_gateway_').then((values) => keepRecent(gateway, values))]);
      const answered = all.every((values) => values?.has('event_loop_longest_stall_recent_seconds') && values.has('gc_longest_pause_recent_seconds'));
      const phase = { stalls: [...recentMax], gcPauses: [...recentGcMax] };
      recentMax.fill(0);
      recentGcMax.fill(0);
      return answered ? phase : undefined;
    },
    stop: () => cluster.stop(),
  };
}

async function run(kind: 'etcd' | 'ward', count: number): Promise<Measured> {
  const system =
    kind === 'etcd'
      ? etcdSystem(await startEtcdCluster({ members: 3, extraArgs: ['--quota-backend-bytes', String(ETCD_QUOTA_BYTES)] }))
      : wardSystem(await startWardCluster({ nodes: 3, nodeEnv: { ...WARD_NODE_ENV, ...benchNodeEnv() }, gatewayEnv: benchGatewayEnv(), nodeArgs: benchNodeArgs(), cpuProfileDir: process.env.BENCH_CPU_PROF_DIR }));
  const scratch = mkdtempSync(join(tmpdir(), 'scale-save-'));
  try {
    const file = join(scratch, 'backup.db');
    let measured: Omit<Measured, 'restore'>;
    try {
      measured = await measure(system, count, file);
    } finally {
      await system.stop();
    }
    // The cluster stopped: the restore has the machine, and its memory, to itself.
    const restore = await timedRestore(system, file, join(scratch, 'restored'));
    console.log(`${system.label.padEnd(12)} ${count} keys: the saved snapshot restored into a new member's data dir in ${restore.seconds.toFixed(2)} s, peak memory ${(restore.peakRssBytes / 1e6).toFixed(0)} MB`);
    return { ...measured, restore };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const mb = (bytes: number): string => (bytes / 1e6).toFixed(0);
const range = (values: readonly number[], format: (value: number) => string): string => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return format(low) === format(high) ? format(low) : `${format(low)}–${format(high)}`;
};
const ratio = (ward: number, etcd: number): string => (etcd > 0 && Number.isFinite(ward) ? `${(ward / etcd).toFixed(2)}×` : 'n/a');

const withGateway = (seconds: readonly number[]): string => `${seconds.slice(0, -1).map((s) => (s * 1000).toFixed(0)).join(' / ')} / gateway ${(seconds.at(-1)! * 1000).toFixed(0)}`;
const stallsWithGateway = (phase: PhaseStalls): string => `${withGateway(phase.stalls)} (GC ${withGateway(phase.gcPauses)})`;
const phase = (measured: Measured, name: 'load' | 'range' | 'soak'): string => {
  const stalls = measured.phaseStalls?.[name];
  return stalls === undefined ? 'n/a' : stallsWithGateway(stalls);
};
/** A range that hit RANGE_LIMIT_SECONDS shows how far it got. */
const rangeTime = (measured: Measured, count: number): string =>
  measured.rangeKeys === count ? measured.rangeSeconds.toFixed(2) : `over ${measured.rangeSeconds.toFixed(0)} (stopped: ${measured.rangeKeys.toLocaleString('en-US')} of ${count.toLocaleString('en-US')} keys read)`;
/** Against a range that was stopped, the ratio is a bound. */
const rangeRatio = (ward: Measured, etcd: Measured, count: number): string => {
  if (ward.rangeKeys !== count) return etcd.rangeKeys === count ? `over ${ratio(ward.rangeSeconds, etcd.rangeSeconds)}` : 'n/a';
  return etcd.rangeKeys === count ? ratio(ward.rangeSeconds, etcd.rangeSeconds) : `under ${ratio(ward.rangeSeconds, etcd.rangeSeconds)}`;
};
const soakMembers = (soak: Soak): string => soak.atMidpoint.map((b, i) => `${mb(b)} → ${mb(soak.atEnd[i]!)}`).join(', ');
const growth = (soak: Soak): string => {
  const worst = Math.max(...soak.atMidpoint.map((b, i) => soak.atEnd[i]! / b));
  return `${((worst - 1) * 100).toFixed(1)}% (peak ${soak.peak.map(mb).join(' / ')} MB)`;
};

function table(count: number, etcd: Measured, ward: Measured): string {
  const average = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const rows: [string, string, string, string][] = [
    ['bulk load (keys/s, higher is better)', etcd.keysPerSecond.toFixed(0), ward.keysPerSecond.toFixed(0), ratio(ward.keysPerSecond, etcd.keysPerSecond)],
    ['memory per member (RSS, MB)', range(etcd.rssBytes, mb), range(ward.rssBytes, mb), ratio(average(ward.rssBytes), average(etcd.rssBytes))],
    ['data on disk per member (MB)', range(etcd.diskBytes, mb), range(ward.diskBytes, mb), ratio(average(ward.diskBytes), average(etcd.diskBytes))],
    [`range over all keys, pages of ${PAGE_KEYS} (s)`, rangeTime(etcd, count), rangeTime(ward, count), rangeRatio(ward, etcd, count)],
    ['etcdctl snapshot save (s)', etcd.save.seconds.toFixed(2), ward.save.seconds.toFixed(2), ratio(ward.save.seconds, etcd.save.seconds)],
    ['snapshot file (MB)', mb(etcd.save.fileBytes), mb(ward.save.fileBytes), ratio(ward.save.fileBytes, etcd.save.fileBytes)],
    ['RSS growth of the member serving the save (MB)', mb(etcd.save.rssGrowthBytes), mb(ward.save.rssGrowthBytes), ''],
    ['longest event-loop stall during the save, members / gateway (ms)', 'n/a (Go)', ward.save.stalls === undefined ? 'n/a' : `${stallsWithGateway(ward.save.stalls)}; member ${ward.save.server + 1} served it`, ''],
    ['restore of the saved file into a new member (etcdctl / raft-node snapshot-restore, s)', etcd.restore.seconds.toFixed(2), ward.restore.seconds.toFixed(2), ratio(ward.restore.seconds, etcd.restore.seconds)],
    ['peak memory of that restore (VmHWM, MB)', mb(etcd.restore.peakRssBytes), mb(ward.restore.peakRssBytes), ratio(ward.restore.peakRssBytes, etcd.restore.peakRssBytes)],
    ['full restart until serving (s)', etcd.restartSeconds.toFixed(2), ward.restartSeconds.toFixed(2), ratio(ward.restartSeconds, etcd.restartSeconds)],
    ['full restart until every member is ready (s)', etcd.membersReadySeconds.toFixed(2), ward.membersReadySeconds.toFixed(2), ratio(ward.membersReadySeconds, etcd.membersReadySeconds)],
    ['peak memory per member through the full restart (VmHWM, MB)', range(etcd.restartPeakRssBytes, mb), range(ward.restartPeakRssBytes, mb), ratio(average(ward.restartPeakRssBytes), average(etcd.restartPeakRssBytes))],
    [`follower down during ${ward.followerWrites.toLocaleString('en-US')} writes: catch-up (s)`, etcd.catchUpSeconds.toFixed(2), ward.catchUpSeconds.toFixed(2), ratio(ward.catchUpSeconds, etcd.catchUpSeconds)],
    ['peak memory of that follower through its catch-up (VmHWM, MB)', mb(etcd.catchUpPeakRssBytes), mb(ward.catchUpPeakRssBytes), ratio(ward.catchUpPeakRssBytes, etcd.catchUpPeakRssBytes)],
    ['longest event-loop stall per member (ms)', 'n/a (Go)', ward.stallSeconds === undefined ? 'n/a' : ward.stallSeconds.map((s) => (s * 1000).toFixed(0)).join(' / '), ''],
    ['longest event-loop stall during the bulk load, members / gateway (ms)', 'n/a (Go)', phase(ward, 'load'), ''],
    ['longest event-loop stall during the range, members / gateway (ms)', 'n/a (Go)', phase(ward, 'range'), ''],
    ['longest event-loop stall during the soak, members / gateway (ms)', 'n/a (Go)', phase(ward, 'soak'), ''],
    ['longest garbage-collection pause per member (ms)', 'n/a (Go)', ward.gcPauseSeconds === undefined ? 'n/a' : ward.gcPauseSeconds.map((s) => (s * 1000).toFixed(0)).join(' / '), ''],
    [`soak: keys overwritten in ${SOAK_SECONDS} s, with compaction`, String(etcd.soak.keysWritten), String(ward.soak.keysWritten), ratio(ward.soak.keysWritten, etcd.soak.keysWritten)],
    ['soak: txns tried again after an error (a timeout)', String(etcd.soak.retried), String(ward.soak.retried), ''],
    ['soak: RSS at its midpoint → at the end (MB, per member)', soakMembers(etcd.soak), soakMembers(ward.soak), ''],
    ['soak: growth from the midpoint to the end (largest of the members)', growth(etcd.soak), growth(ward.soak), ''],
  ];
  return [
    `### ${count.toLocaleString('en-US')} keys`,
    '',
    '| | etcd 3.4.23 | ward | ward/etcd |',
    '|---|---:|---:|---:|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    `Wall time of the run: etcd ${etcd.wallSeconds.toFixed(0)} s, ward ${ward.wallSeconds.toFixed(0)} s (bulk load ${etcd.loadSeconds.toFixed(0)} s / ${ward.loadSeconds.toFixed(0)} s).`,
  ].join('\n');
}

/** The commit measured, and whether the tree held changes beside it. */
function wardVersion(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: WORKSPACE_ROOT, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: WORKSPACE_ROOT, encoding: 'utf8' }).trim() !== '';
    return changed ? `${commit} with uncommitted changes` : commit;
  } catch {
    return 'an unknown commit';
  }
}
const measuredVersion = wardVersion();
const loadBefore = loadavg().map((value) => value.toFixed(1)).join(' / ');
const results: { count: number; etcd: Measured | undefined; ward: Measured | undefined }[] = [];
for (const count of KEY_COUNTS) {
  const etcd = TARGETS.includes('etcd') ? await run('etcd', count) : undefined;
  const ward = TARGETS.includes('ward') ? await run('ward', count) : undefined;
  results.push({ count, etcd, ward });
}
const loadAfter = loadavg().map((value) => value.toFixed(1)).join(' / ');
if (results.some((r) => r.etcd === undefined || r.ward === undefined)) {
  console.log('one system measured: nothing written');
  process.exit(0);
}
const cpu = cpus();
const settings = [
  process.env.BENCH_GATEWAY_ENV ? `ward's gateway with \`${process.env.BENCH_GATEWAY_ENV}\` (\`BENCH_GATEWAY_ENV\`)` : '',
  process.env.BENCH_NODE_ENV ? `ward's members with \`${process.env.BENCH_NODE_ENV}\` (\`BENCH_NODE_ENV\`)` : '',
  benchNodeArgs().length > 0 ? `every ward process with \`${benchNodeArgs().join(' ')}\` (\`BENCH_NODE_ARGS\`, after \`NODE_OPTIONS\`)` : '',
].filter((text) => text !== '');
const provenance = [
  `Measured ${new Date().toISOString()} on ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM; load average before ${loadBefore}, after ${loadAfter} (ward at ${measuredVersion})`,
  settings.length > 0 ? `; ${settings.join(', ')}` : '',
  '.',
].join('');
const subsection = (r: (typeof results)[number]): string => table(r.count, r.etcd!, r.ward!).replace('\n\n', `\n\n${provenance}\n\n`);
const page = existsSync(OUT) ? readFileSync(OUT, 'utf8') : '# Benchmarks: ward vs etcd 3.4.23\n';
const [head, ...sections] = page.split(/\n(?=## )/);
const others = sections.filter((text) => !text.startsWith('## Scale\n'));
// Key counts not measured in this run keep the subsection an earlier run wrote.
const measuredHeadings = new Set(results.map((r) => `### ${r.count.toLocaleString('en-US')} keys`));
const kept = (sections.find((text) => text.startsWith('## Scale\n')) ?? '')
  .split(/\n(?=### )/)
  .slice(1)
  .map((text) => text.trimEnd())
  .filter((text) => !measuredHeadings.has(text.split('\n')[0]!));
const keyCountOf = (text: string): number => Number(/^### ([\d,]+) keys/.exec(text)?.[1]?.replaceAll(',', '') ?? Number.MAX_SAFE_INTEGER);
const subsections = [...kept, ...results.map(subsection)].sort((a, b) => keyCountOf(a) - keyCountOf(b));
const section = `## Scale

Produced by \`libs/testing/etcd-harness/bench/scale.bench.ts\` (also part of \`npm run bench\`; alone:
\`BENCH_SCALE_KEYS=1000000 npx tsx libs/testing/etcd-harness/bench/scale.bench.ts\`); each key count's
table says when and on what it was measured (a run replaces the tables of the key counts it measures).

3 members each, one system after the other. Keys \`scale/<9 digits>\` with 256-byte values, written
by ${CLIENTS} clients with txns of ${PUTS_PER_TXN} puts (through etcd's first member; through ward's gateway).
etcd runs with \`--quota-backend-bytes ${ETCD_QUOTA_BYTES}\`, ward's members with the same quota
(\`RAFT_NODE_QUOTA_BACKEND_BYTES\`; whatever the quota, a member refuses writes past what its snapshot
holds: 3,967 MiB of key + value + 64 bytes per version), \`NODE_OPTIONS=${WARD_NODE_ENV.NODE_OPTIONS}\` (the store lives in the
heap) and otherwise their defaults (a snapshot per 64 MiB of applied entries or 10,000 entries). RSS and disk (\`du\`, allocated blocks) are read 2 s
after the load. The range reads every key (values included, linearizable) ${PAGE_KEYS} per request, for
at most \`BENCH_SCALE_RANGE_SECONDS\` (900 s by default; a range stopped there shows how far it got).
\`etcdctl snapshot save\` then writes a backup through the client endpoint (etcd's first member streams
its database; ward's gateway asks the leader, which streams a backup of its state), the serving
member's RSS sampled every ${SAVE_SAMPLE_MS} ms; once the cluster is stopped at the end, the saved file is restored
into a new one-member cluster's data directory (\`etcdctl snapshot restore\`; \`raft-node snapshot-restore\` with the
members' \`NODE_OPTIONS\`), timed, its peak memory the restoring process's \`VmHWM\` read every ${SAVE_SAMPLE_MS} ms. The
full restart stops all three members (SIGTERM) and times from starting them again until every
member reports ready (etcd \`/health\`, ward's raft-node \`/readyz\`), and until a linearizable Range
answers through the client endpoint (ward's gateway keeps running); each member's peak memory
through it is its \`VmHWM\` (\`/proc/<pid>/status\`) read then. Then a follower (not the first member) is stopped, the first
keys are overwritten (\`BENCH_SCALE_FOLLOWER_WRITES\`, 100,000 by default), and the catch-up is timed from its start until its
applied index reaches the leader's (its peak memory through it: its \`VmHWM\` then). ward's stall is each member's \`event_loop_longest_stall_seconds\`
(the longest event-loop delay since it started serving), the maximum of its readings before each
stop and at the end; the stalls during the bulk load, the range and the soak are each process's
\`event_loop_longest_stall_recent_seconds\` scraped at the phase's start and end (members, then the
gateway, whose read replica answers the range), each with the process's longest garbage-collection
pause over the phase in parentheses (\`gc_longest_pause_recent_seconds\`: a stall as long as its pause
was the collector's); beside the members' stalls, \`gc_longest_pause_seconds\`, the longest pause
over the same time. The soak then overwrites every key again, cycling through the key space, for
\`BENCH_SCALE_SOAK_SECONDS\` (300 s by default; each table gives it) with the same clients and txns, compacts every
${SOAK_COMPACT_MS / 1000} s to the revision the previous compaction saw as current (not \`physical\`: etcd removes
the history in the background, in batches, and at a million keys under this load that outlasts a
60 s deadline; ward, too, answers a compaction once applied and cuts the versions it drops afterwards, in
turns), and reads each member's RSS
every ${SOAK_SAMPLE_MS / 1000} s; growth is from the first reading in the soak's second half (several compactions
in: the history kept then is what compaction keeps) to the last. A txn that fails (etcd answered one
\`request timed out\` under this load in a run) is tried again, at most 5 times, as in the bulk load;
the table counts them.

${subsections.join('\n\n')}
`;
writeFileSync(OUT, `${[head, ...others].map((part) => part!.trimEnd()).join('\n\n')}\n\n${section}`);
console.log(`\n${section}\nwrote the Scale section of ${OUT}`);
