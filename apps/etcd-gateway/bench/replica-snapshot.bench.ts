// Benchmark (not a test): what a gateway's read replica spends taking a member's state from its
// Follow feed (1 MiB chunks), at WARD_BENCH_KEYS keys (default 1,000,000) of 35-byte keys and
// 256-byte values, two ways, in alternation:
//   joined: the chunks gathered, joined into one buffer and restored in one step (as before);
//   pieced: each chunk decoded as it comes (Applier.decoder), then `finish` (the key index and
//           the Watch log built).
// The longest single step is what every other call on that gateway waits for meanwhile (its event
// loop is held: issue 20's 50 ms); the total is how long the replica takes to become ready. A step
// that a major garbage collection of the heap lands in (a million keys are millions of objects)
// takes its pause too: run with --trace-gc to tell them apart.
//   npx tsx apps/etcd-gateway/bench/replica-snapshot.bench.ts
import { Applier } from '@ward/etcd/apply';

const KEYS = Number(process.env.WARD_BENCH_KEYS ?? 1_000_000);
const ROUNDS = Number(process.env.WARD_BENCH_ROUNDS ?? 2);
const CHUNK_BYTES = 1024 * 1024;

function keyOf(i: number): Buffer {
  return Buffer.from(`/registry/pods/ns-${String(Math.floor(i / 1000)).padStart(4, '0')}/pod-${String(i).padStart(8, '0')}`);
}

const source = Applier.create();
const value = Buffer.alloc(256, 0x61);
for (let n = 0; n < KEYS; n++) {
  const i = Number((BigInt(n) * 2654435761n) % BigInt(KEYS));
  source.apply(n + 1, { header: { id: BigInt(n + 1), username: '', authRevision: 0 }, operation: { type: 'put', request: { key: keyOf(i), value } } });
}
const whole = source.snapshot();
const expectedHash = source.stateHash();
console.log(`${KEYS} keys: a state of ${(whole.length / 1e6).toFixed(0)} MB in ${Math.ceil(whole.length / CHUNK_BYTES)} chunks of 1 MiB`);

/** The feed's messages: a fresh Buffer each, as gRPC hands them over. */
function chunks(): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < whole.length; at += CHUNK_BYTES) out.push(Buffer.from(whole.subarray(at, at + CHUNK_BYTES)));
  return out;
}

interface Outcome {
  readonly totalMs: number;
  readonly cpuMs: number;
  readonly longestStepMs: number;
  readonly what: string;
  /** The median step, and how many took over 50 ms (a garbage collection of the heap lands in some). */
  readonly medianStepMs: number;
  readonly stepsOver50Ms: number;
}

function measure(take: (pieces: Buffer[], step: (work: () => void) => void) => Applier): Outcome {
  const pieces = chunks();
  let longest = 0;
  let longestWhat = '';
  let stepIndex = 0;
  const steps: number[] = [];
  const step = (work: () => void): void => {
    const started = performance.now();
    work();
    const ms = performance.now() - started;
    steps.push(ms);
    if (ms > longest) {
      longest = ms;
      longestWhat = `step ${stepIndex}`;
    }
    stepIndex++;
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  const applier = take(pieces, step);
  const totalMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (applier.stateHash() !== expectedHash) throw new Error('the restored state differs');
  const sorted = [...steps].sort((x, y) => x - y);
  return {
    totalMs,
    cpuMs: (used.user + used.system) / 1000,
    longestStepMs: longest,
    what: `${longestWhat} of ${stepIndex}`,
    medianStepMs: sorted[Math.floor(sorted.length / 2)]!,
    stepsOver50Ms: steps.filter((ms) => ms > 50).length,
  };
}

const joined = (pieces: Buffer[], step: (work: () => void) => void): Applier => {
  let applier: Applier | undefined;
  step(() => (applier = Applier.restore(Buffer.concat(pieces))));
  return applier!;
};

const pieced = (pieces: Buffer[], step: (work: () => void) => void): Applier => {
  const decoder = Applier.decoder();
  for (const piece of pieces) step(() => decoder.push(piece));
  let applier: Applier | undefined;
  step(() => (applier = decoder.finish()));
  return applier!;
};

for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, take] of round % 2 === 1 ? ([['joined', joined], ['pieced', pieced]] as const) : ([['pieced', pieced], ['joined', joined]] as const)) {
    globalThis.gc?.();
    const outcome = measure(take);
    console.log(
      `round ${round} ${name.padEnd(6)}: ready after ${(outcome.totalMs / 1000).toFixed(2)} s, CPU ${(outcome.cpuMs / 1000).toFixed(2)} s, longest step ${outcome.longestStepMs.toFixed(0)} ms (${outcome.what}), median step ${outcome.medianStepMs.toFixed(1)} ms, ${outcome.stepsOver50Ms} steps over 50 ms`,
    );
  }
}
