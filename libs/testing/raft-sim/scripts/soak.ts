// Long soak of the Raft simulator, by hand:
//   npx tsx libs/testing/raft-sim/scripts/soak.ts --seeds 10000 [--from 1] [--profile chaos]
//       [--ticks 10000] [--workers 2] [--mutation <name>] [--check-determinism] [--seed N]
// Every seed runs the full fault phase, the liveness phase and the linearizability check of its
// client history. Failures print the seed and trace hash; `--seed N` replays one seed exactly.
// Exit code 1 if any seed failed (or, with --mutation, if the mutant was never caught).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RaftMutation } from '@ward/raft/core';
import { RAFT_MUTATIONS } from '@ward/raft/core';
import type { SimProfile, SimResult } from '../src/index';
import { PROFILES, isCleanRun, isSafetyViolation, runSimulation, withOverrides } from '../src/index';
import { checkKvHistory } from '../src/test/linearizability';

interface Args {
  seeds: number;
  from: number;
  profile: string;
  ticks: number | undefined;
  workers: number;
  mutation: RaftMutation | undefined;
  checkDeterminism: boolean;
  seed: number | undefined;
  worker: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { seeds: 10_000, from: 1, profile: 'chaos', ticks: undefined, workers: 2, mutation: undefined, checkDeterminism: false, seed: undefined, worker: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (): number => {
      const n = Number(value());
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} needs a non-negative integer`);
      return n;
    };
    if (flag === '--seeds') args.seeds = int();
    else if (flag === '--from') args.from = int();
    else if (flag === '--profile') args.profile = value();
    else if (flag === '--ticks') args.ticks = int();
    else if (flag === '--workers') args.workers = Math.max(1, int());
    else if (flag === '--seed') args.seed = int();
    else if (flag === '--check-determinism') args.checkDeterminism = true;
    else if (flag === '--worker') args.worker = true;
    else if (flag === '--mutation') {
      const m = value();
      if (!(RAFT_MUTATIONS as readonly string[]).includes(m)) throw new Error(`unknown mutation ${m}; known: ${RAFT_MUTATIONS.join(', ')}`);
      args.mutation = m as RaftMutation;
    } else throw new Error(`unknown flag ${flag}`);
  }
  if (PROFILES[args.profile] === undefined) throw new Error(`unknown profile ${args.profile}; known: ${Object.keys(PROFILES).join(', ')}`);
  return args;
}

function profileOf(args: Args): SimProfile {
  let profile = PROFILES[args.profile]!;
  if (args.ticks !== undefined) profile = withOverrides(profile, { ticks: args.ticks });
  if (args.mutation !== undefined) profile = withOverrides(profile, { mutations: [args.mutation] });
  return profile;
}

/** One line per seed, as JSON, for the coordinating process. */
interface SeedLine {
  seed: number;
  traceHash: string;
  clean: boolean;
  caught: boolean;
  linearizability: SimResult['linearizability'];
  violations: SimResult['violations'];
  leaderAfterHealTicks: number | undefined;
}

function runOne(seed: number, args: Args): SeedLine {
  const r = runSimulation(seed, profileOf(args), { checkHistory: checkKvHistory, stopAtFirstViolation: args.mutation !== undefined });
  const caught = r.violations.some(isSafetyViolation) || r.linearizability === 'illegal';
  return { seed, traceHash: r.traceHash, clean: isCleanRun(r), caught, linearizability: r.linearizability, violations: r.violations.slice(0, 3), leaderAfterHealTicks: r.stats.leaderAfterHealTicks };
}

/** Worker mode: run seeds [from, from+seeds) and print one JSON line each. */
function workerMain(args: Args): void {
  for (let seed = args.from; seed < args.from + args.seeds; seed++) {
    const line = runOne(seed, args);
    process.stdout.write(`${JSON.stringify(line)}\n`);
    if (args.mutation !== undefined && line.caught) return;
  }
}

function spawnWorker(from: number, seeds: number, base: string[]): Promise<SeedLine[]> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(import.meta.url);
    const child = spawn(process.execPath, [...process.execArgv, script, ...base, '--worker', '--from', String(from), '--seeds', String(seeds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: SeedLine[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = JSON.parse(buffer.slice(0, nl)) as SeedLine;
        lines.push(line);
        report(line);
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(lines) : reject(new Error(`worker exited with ${code}`))));
  });
}

let done = 0;
function report(line: SeedLine): void {
  done++;
  if (!line.clean) console.log(`FAIL seed ${line.seed} trace ${line.traceHash} linearizability ${line.linearizability} ${JSON.stringify(line.violations)}`);
  if (done % 100 === 0) console.log(`.. ${done} seeds`);
}

function baseArgs(args: Args): string[] {
  const out = ['--profile', args.profile];
  if (args.ticks !== undefined) out.push('--ticks', String(args.ticks));
  if (args.mutation !== undefined) out.push('--mutation', args.mutation);
  return out;
}

async function runAll(args: Args): Promise<SeedLine[]> {
  const per = Math.ceil(args.seeds / args.workers);
  const jobs: Promise<SeedLine[]>[] = [];
  for (let w = 0; w < args.workers; w++) {
    const from = args.from + w * per;
    const count = Math.min(per, args.from + args.seeds - from);
    if (count > 0) jobs.push(spawnWorker(from, count, baseArgs(args)));
  }
  return (await Promise.all(jobs)).flat().sort((a, b) => a.seed - b.seed);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.worker) {
    workerMain(args);
    return 0;
  }
  if (args.seed !== undefined) {
    const line = runOne(args.seed, args);
    console.log(JSON.stringify(line, null, 2));
    return line.clean ? 0 : 1;
  }
  const startedMs = Date.now();
  const profile = profileOf(args);
  console.log(`soak: profile ${profile.name}, ${profile.nodes} nodes, seeds ${args.from}..${args.from + args.seeds - 1} x ${profile.ticks} ticks, ${args.workers} workers${args.mutation ? `, mutation ${args.mutation}` : ''}`);
  const lines = await runAll(args);
  const seconds = ((Date.now() - startedMs) / 1000).toFixed(1);
  if (args.mutation !== undefined) {
    const first = lines.find((l) => l.caught);
    console.log(first ? `mutation ${args.mutation} caught at seed ${first.seed}: ${first.violations[0]?.kind ?? 'not-linearizable'} (${seconds}s)` : `mutation ${args.mutation} NOT caught (${seconds}s)`);
    return first ? 0 : 1;
  }
  const failed = lines.filter((l) => !l.clean);
  if (args.checkDeterminism) {
    const again = await runAll(args);
    const differing = again.filter((l, i) => l.traceHash !== lines[i]!.traceHash);
    console.log(`determinism: ${lines.length - differing.length}/${lines.length} seeds gave the same trace hash in separate processes`);
    if (differing.length > 0) return 1;
  }
  const leader = lines.map((l) => l.leaderAfterHealTicks ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
  console.log(`soak: ${lines.length} seeds, ${failed.length} failed, ${seconds}s; leader after heal p50 ${leader[leader.length >> 1]} p99 ${leader[Math.floor(leader.length * 0.99)]} max ${leader[leader.length - 1]} ticks`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
