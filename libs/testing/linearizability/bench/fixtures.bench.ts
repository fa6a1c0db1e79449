// Times the checker on the fixture histories and on a large simulated history.
// Usage: npx nx run testing-linearizability:bench   (or: npx tsx bench/fixtures.bench.ts [--runs N])
// Figures depend on the machine and its load; they are measurements, not pass/fail criteria.
import { readFileSync, readdirSync } from 'node:fs';
import { SeededRng } from '@ward/shared/clock';
import type { Model, Operation } from '../src/index';
import {
  appendKvModel,
  checkLinearizability,
  kvModel,
  parseEdnKvHistory,
  parseJepsenRegisterLog,
  registerModel,
  singlePartition,
} from '../src/index';
import type { KvInput } from '../src/index';
import { executeKvKey, simulateHistory } from '../src/testing';

const runsIndex = process.argv.indexOf('--runs');
const RUNS = runsIndex === -1 ? 3 : Number(process.argv[runsIndex + 1]);
const testdata = new URL('../testdata/', import.meta.url);

interface Row {
  name: string;
  operations: number;
  verdict: string;
  steps: number;
  medianMs: number;
  /** CPU time of the median run: steadier than wall time on a loaded machine. */
  cpuMs: number;
}

function time<S, I, O>(name: string, model: Model<S, I, O>, history: Operation<I, O>[]): Row {
  const samples: { wallMs: number; cpuMs: number }[] = [];
  let verdict = '';
  let steps = 0;
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    const cpuStart = process.cpuUsage();
    const result = checkLinearizability(model, history, { budget: { maxSteps: 30_000_000 } });
    const cpu = process.cpuUsage(cpuStart);
    samples.push({ wallMs: Number(process.hrtime.bigint() - start) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 });
    verdict = result.verdict;
    steps = result.steps;
  }
  samples.sort((a, b) => a.wallMs - b.wallMs);
  const median = samples[Math.floor(samples.length / 2)] as { wallMs: number; cpuMs: number };
  return { name, operations: history.length, verdict, steps, medianMs: median.wallMs, cpuMs: median.cpuMs };
}

function print(title: string, rows: Row[]): void {
  console.log(`\n${title}`);
  console.log('| history | ops | verdict | steps | median wall ms | its cpu ms | steps/cpu ms |');
  console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: |');
  for (const row of rows) {
    const rate = row.cpuMs > 0 ? Math.round(row.steps / row.cpuMs) : 0;
    console.log(
      `| ${row.name} | ${row.operations} | ${row.verdict} | ${row.steps} | ${row.medianMs.toFixed(1)} | ${row.cpuMs.toFixed(1)} | ${rate} |`,
    );
  }
}

const etcdFiles = readdirSync(new URL('jepsen-etcd/', testdata)).filter((f) => f.endsWith('.log') && f !== 'etcd_095.log');
const etcdRows = etcdFiles.map((file) =>
  time(file, registerModel, parseJepsenRegisterLog(readFileSync(new URL(`jepsen-etcd/${file}`, testdata), 'utf8'))),
);
etcdRows.sort((a, b) => b.medianMs - a.medianMs);
const etcdWall = etcdRows.reduce((sum, row) => sum + row.medianMs, 0);
const etcdCpu = etcdRows.reduce((sum, row) => sum + row.cpuMs, 0);
print(
  `jepsen etcd: the 10 slowest of ${etcdRows.length} (all ${etcdRows.length}: ${etcdWall.toFixed(0)} ms wall, ${etcdCpu.toFixed(0)} ms cpu)`,
  etcdRows.slice(0, 10),
);

const kvRows: Row[] = [];
for (const name of ['c01-ok', 'c01-bad', 'c10-ok', 'c10-bad', 'c50-ok', 'c50-bad']) {
  const history = parseEdnKvHistory(readFileSync(new URL(`kv/${name}.txt`, testdata), 'utf8'));
  kvRows.push(time(`${name} (per key)`, appendKvModel, history));
  if (!name.startsWith('c50')) kvRows.push(time(`${name} (single partition)`, singlePartition(appendKvModel), history));
}
print('kv fixtures', kvRows);

interface Scenario {
  clients: number;
  operations: number;
  keys: number;
  lostRate: number;
  unappliedLost: 'unknown' | 'failed';
}

function simulatedKv(seed: number, scenario: Scenario) {
  return simulateHistory(new SeededRng(seed), kvModel.init(), executeKvKey, {
    clients: scenario.clients,
    operations: scenario.operations,
    unknownRate: scenario.lostRate,
    failRate: 0.02,
    unappliedLost: scenario.unappliedLost,
    keyOf: (input) => input.key,
    nextInput: (rng, sequence): KvInput => {
      const key = `k${rng.nextInt(scenario.keys)}`;
      const roll = rng.nextInt(10);
      if (roll < 5) return { kind: 'get', key };
      if (roll < 8) return { kind: 'put', key, value: `v${rng.nextInt(3)}` };
      if (roll < 9) return { kind: 'delete', key };
      return { kind: 'cas', key, compare: { version: rng.nextInt(4) }, value: `c${sequence}` };
    },
  });
}

const scenarios: Scenario[] = [
  { clients: 50, operations: 10_000, keys: 20, lostRate: 0.02, unappliedLost: 'unknown' },
  { clients: 50, operations: 10_000, keys: 5, lostRate: 0.05, unappliedLost: 'unknown' },
  { clients: 50, operations: 10_000, keys: 5, lostRate: 0.05, unappliedLost: 'failed' },
  { clients: 5, operations: 2_000, keys: 1, lostRate: 0.3, unappliedLost: 'unknown' },
  { clients: 5, operations: 2_000, keys: 1, lostRate: 0.3, unappliedLost: 'failed' },
];
const simulatedRows = scenarios.flatMap((scenario) =>
  [1, 2, 3].map((seed) =>
    time(
      `${scenario.clients} clients, ${scenario.keys} keys, ${scenario.lostRate * 100}% lost (unapplied: ${scenario.unappliedLost}), seed ${seed}`,
      kvModel,
      simulatedKv(seed, scenario),
    ),
  ),
);
print('simulated ward-kv histories (get/put/delete/cas with versions; 2% refused, lost ones applied or not at random)', simulatedRows);
