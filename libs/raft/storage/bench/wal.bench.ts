/**
 * WAL throughput on the real disk: appends/s and fdatasyncs/s with 1, 16 and 64 concurrent
 * appenders, each appending one 256-byte entry and waiting for it to be durable (like a client
 * waiting for its commit). Appends per fdatasync shows group commit at work. A second table
 * compares the preallocation modes at 16 appenders.
 *
 *   npx nx run raft-storage:bench            (WAL_BENCH_SECONDS=5 for longer runs)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wal, type Preallocation, type WalRecord } from '../src/index';

const SECONDS = Number(process.env['WAL_BENCH_SECONDS'] ?? '3');
const WARMUP_SECONDS = 1.5;
const ENTRY_BYTES = 256;

interface Result {
  readonly label: string;
  readonly appendsPerSecond: number;
  readonly syncsPerSecond: number;
  readonly appendsPerSync: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

async function run(appenders: number, preallocation: Preallocation): Promise<Result> {
  const dir = await mkdtemp(join(tmpdir(), 'ward-wal-bench-'));
  try {
    const { wal } = await Wal.open({ dir, metadata: new Uint8Array(8), preallocation });
    const data = new Uint8Array(ENTRY_BYTES).fill(7);
    let index = 1;
    const latencies: number[] = [];
    const appendFor = (seconds: number, record: boolean): Promise<unknown> => {
      const deadline = performance.now() + seconds * 1000;
      return Promise.all(
        Array.from({ length: appenders }, async () => {
          while (performance.now() < deadline) {
            const entry: WalRecord = { kind: 'entry', entry: { index: index++, term: 1, type: 0, data } };
            const t0 = performance.now();
            await wal.append([entry]);
            if (record) latencies.push(performance.now() - t0);
          }
        }),
      );
    };
    // Warm-up, not measured: lets the background preallocation of the next segment finish.
    await appendFor(WARMUP_SECONDS, false);
    const before = wal.stats();
    const startedMs = performance.now();
    await appendFor(SECONDS, true);
    const seconds = (performance.now() - startedMs) / 1000;
    const after = wal.stats();
    await wal.close();
    const appends = after.appends - before.appends;
    const syncs = after.fdatasyncs - before.fdatasyncs;
    latencies.sort((a, b) => a - b);
    return {
      label: `${appenders} appender${appenders === 1 ? '' : 's'}, ${preallocation}`,
      appendsPerSecond: appends / seconds,
      syncsPerSecond: syncs / seconds,
      appendsPerSync: appends / Math.max(1, syncs),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function print(title: string, results: Result[]): void {
  console.log(`\n${title}\n`);
  console.log('| run | appends/s | fdatasyncs/s | appends per fdatasync | append p50 ms | append p99 ms |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    console.log(`| ${r.label} | ${r.appendsPerSecond.toFixed(0)} | ${r.syncsPerSecond.toFixed(0)} | ${r.appendsPerSync.toFixed(1)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} |`);
  }
}

const groupCommit: Result[] = [];
for (const appenders of [1, 16, 64]) groupCommit.push(await run(appenders, 'zeros'));
print(`WAL group commit: ${ENTRY_BYTES}-byte entries, ${SECONDS} s per run, 64 MiB zero-filled segments`, groupCommit);

const preallocation: Result[] = [];
for (const mode of ['zeros', 'sparse', 'none'] as const) preallocation.push(await run(16, mode));
print('Preallocation modes at 16 appenders', preallocation);
