// Benchmark (not a test): the CPU cost of one Lessor.expired() call on the leader, which runs it
// every 500 ms, with 10,000, 100,000 and 1,000,000 tracked leases of which none or 100 are due,
// for the heap-driven Lessor and for the scan-and-sort lessor it replaced (the reference in
// src/testing/scanning-lessor.ts). Also the one-off cost of promote() (becoming leader) at each
// size. Under 20 s.
//   npx tsx apps/raft-node/bench/lessor.bench.ts        (or: npx nx run raft-node:bench)
// Each call is made 3 s after the previous one, so the same due leases come back every time (the
// one-second rate window and the 3 s reproposal pause are both over): the steady state of a
// backlog of revokes that do not apply, or of a stream of leases expiring.
import { Lessor, type LessorOptions } from '../src/lessor';
import { LeaseTable as Table, ScanningLessor } from '../src/testing/scanning-lessor';

interface ExpiringLessor {
  promote(nowMs: number): void;
  expired(nowMs: number): bigint[];
}

// As member.ts configures it (1,000 revokes a second, proposed again after 3 s).
const OPTIONS: LessorOptions = { minTtlSeconds: 2, promoteExtendMs: 1000, maxRevokesPerSecond: 1000, reproposeAfterMs: 3000 };
const SIZES = [10_000, 100_000, 1_000_000];
const DUE = 100;
/** Measured time per configuration; the scan at a million leases takes tens of ms a call. */
const BUDGET_MS = 500;

/** `size` leases: 100 expire after 2 s (3 s after promotion), the rest live for about eleven days. */
function tableOf(size: number): Table {
  const table = new Table();
  // Ids spread like etcd's (random-looking 63-bit values), not 1..n.
  for (let i = 0; i < size; i++) table.ttl.set((BigInt(i) * 0x9e3779b97f4a7c15n) & 0x7fffffffffffffffn, i < DUE ? 2 : 1_000_000);
  return table;
}

interface Measure {
  readonly calls: number;
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly cpuMsPerCall: number;
}

/**
 * None due: calls at 1 s after promotion, before any deadline. Due: calls from 10 s on, 3 s apart,
 * each handing out the same 100 leases again.
 */
function measureExpired(lessor: ExpiringLessor, due: number): Measure {
  let nowMs = due === 0 ? 1000 : 7000;
  const step = (): void => {
    if (due > 0) nowMs += 3000;
    const handed = lessor.expired(nowMs).length;
    if (handed !== due) throw new Error(`expected ${due} leases handed out, got ${handed}`);
  };
  for (let i = 0; i < 3; i++) step(); // warm-up
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  while (times.length < 5 || (performance.now() - started < BUDGET_MS && times.length < 20_000)) {
    const t0 = performance.now();
    step();
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpuBefore);
  times.sort((a, b) => a - b);
  return {
    calls: times.length,
    medianMs: times[Math.floor(times.length / 2)]!,
    p99Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]!,
    cpuMsPerCall: (cpu.user + cpu.system) / 1000 / times.length,
  };
}

function format(ms: number): string {
  if (ms >= 10) return ms.toFixed(1);
  if (ms >= 0.1) return ms.toFixed(3);
  return ms.toFixed(4);
}

const benchStarted = performance.now();
console.log('| tracked leases | due | lessor | calls | median ms | p99 ms | CPU ms per call |');
console.log('| ---: | ---: | --- | ---: | ---: | ---: | ---: |');
const promotions: string[] = [];
for (const size of SIZES) {
  const table = tableOf(size);
  for (const [name, make] of [
    ['scan (before)', () => new ScanningLessor(OPTIONS, () => table)],
    ['heap (after)', () => new Lessor(OPTIONS, () => table)],
  ] as const) {
    const lessor: ExpiringLessor = make();
    const t0 = performance.now();
    lessor.promote(0);
    promotions.push(`${size.toLocaleString('en')} leases, ${name}: ${(performance.now() - t0).toFixed(0)} ms`);
    for (const due of [0, DUE]) {
      const m = measureExpired(lessor, due);
      console.log(`| ${size.toLocaleString('en')} | ${due} | ${name} | ${m.calls} | ${format(m.medianMs)} | ${format(m.p99Ms)} | ${format(m.cpuMsPerCall)} |`);
    }
  }
}
console.log(`\npromote() (becoming leader, once): ${promotions.join('; ')}`);
console.log(`(${((performance.now() - benchStarted) / 1000).toFixed(1)} s)`);
