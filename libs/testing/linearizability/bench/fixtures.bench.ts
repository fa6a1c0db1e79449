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
}

function time<S, I, O>(name: string, model: Model<S, I, O>, history: Operation<I, O>[]): Row {
  const samples: number[] = [];
  let verdict = '';
  let steps = 0;
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    const result = checkLinearizability(model, history);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    verdict = result.verdict;
    steps = result.steps;
  }
  samples.sort((a, b) => a - b);
  return { name, operations: history.length, verdict, steps, medianMs: samples[Math.floor(samples.length / 2)] as number };
}

function print(title: string, rows: Row[]): void {
  console.log(`\n${title}`);
  console.log('| history | ops | verdict | steps | median ms | steps/ms |');
  console.log('| --- | ---: | --- | ---: | ---: | ---: |');
  for (const row of rows) {
    const rate = row.medianMs > 0 ? Math.round(row.steps / row.medianMs) : 0;
    console.log(`| ${row.name} | ${row.operations} | ${row.verdict} | ${row.steps} | ${row.medianMs.toFixed(1)} | ${rate} |`);
  }
}

const etcdFiles = readdirSync(new URL('jepsen-etcd/', testdata)).filter((f) => f.endsWith('.log') && f !== 'etcd_095.log');
const etcdRows = etcdFiles.map((file) =>
  time(file, registerModel, parseJepsenRegisterLog(readFileSync(new URL(`jepsen-etcd/${file}`, testdata), 'utf8'))),
);
etcdRows.sort((a, b) => b.medianMs - a.medianMs);
const etcdTotal = etcdRows.reduce((sum, row) => sum + row.medianMs, 0);
print(`jepsen etcd: the 10 slowest of ${etcdRows.length} (all ${etcdRows.length}: ${etcdTotal.toFixed(0)} ms)`, etcdRows.slice(0, 10));

const kvRows: Row[] = [];
for (const name of ['c01-ok', 'c01-bad', 'c10-ok', 'c10-bad', 'c50-ok', 'c50-bad']) {
  const history = parseEdnKvHistory(readFileSync(new URL(`kv/${name}.txt`, testdata), 'utf8'));
  kvRows.push(time(`${name} (per key)`, appendKvModel, history));
  if (!name.startsWith('c50')) kvRows.push(time(`${name} (single partition)`, singlePartition(appendKvModel), history));
}
print('kv fixtures', kvRows);

const simulated = simulateHistory(new SeededRng(42), kvModel.init(), executeKvKey, {
  clients: 50,
  operations: 10_000,
  unknownRate: 0.02,
  failRate: 0.02,
  keyOf: (input) => input.key,
  nextInput: (rng, sequence): KvInput => {
    const key = `k${rng.nextInt(20)}`;
    const roll = rng.nextInt(10);
    if (roll < 5) return { kind: 'get', key };
    if (roll < 8) return { kind: 'put', key, value: `v${sequence}` };
    if (roll < 9) return { kind: 'delete', key };
    return { kind: 'cas', key, compare: { version: rng.nextInt(4) }, value: `c${sequence}` };
  },
});
print('simulated kv (ward model): 50 clients, 10,000 operations, 20 keys', [time('seed 42', kvModel, simulated)]);
