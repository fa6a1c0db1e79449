// Cost of the raft wire codec per call: encodeMessage and decodeMessage for a heartbeat (no
// entries), a MsgApp with one 16 KiB entry and a MsgApp with 256 entries of 100 bytes, and
// encodeEntry for a 100-byte and a 16 KiB entry, decodeEntry for the 100-byte one. The cases run
// in interleaved rounds, in a new (seeded) order each round, so that no case always pays for the
// garbage of the same predecessor; a round's figure is the process's CPU time (user + system) per
// call, which waiting for a core on a shared machine does not inflate. Each row gives the best and
// the median round. A measurement, not a test: `npx nx run raft-core:bench` prints the table
// (BENCH_CODEC_ROUNDS, BENCH_CODEC_ROUND_MS change the run's length).
import { SeededRng } from '@ward/shared/clock';
import type { Entry, Message } from '../src/index';
import { MessageType, decodeEntry, decodeMessage, encodeEntry, encodeMessage, entrySizeBytes, message, messageSizeBytes } from '../src/index';

const ROUNDS = Number(process.env.BENCH_CODEC_ROUNDS ?? 60);
const ROUND_MS = Number(process.env.BENCH_CODEC_ROUND_MS ?? 10);

function entry(index: number, bytes: number): Entry {
  return { term: 7, index, type: 0, data: new Uint8Array(bytes).fill(index & 0xff) };
}

const heartbeat = message(MessageType.Heartbeat, { to: 2n, from: 1n, term: 7, commit: 123_456 });
const oneLarge = message(MessageType.App, { to: 2n, from: 1n, term: 7, logTerm: 7, index: 1000, commit: 999, entries: [entry(1001, 16 * 1024)] });
const manySmall = message(MessageType.App, {
  to: 2n,
  from: 1n,
  term: 7,
  logTerm: 7,
  index: 1000,
  commit: 999,
  entries: Array.from({ length: 256 }, (_, i) => entry(1001 + i, 100)),
});
const smallEntry = entry(42, 100);
const largeEntry = entry(43, 16 * 1024);
const smallEntryBytes = encodeEntry(smallEntry);

interface Case {
  readonly name: string;
  /** Size of the encoding the call produces or reads. */
  readonly bytes: number;
  /** One call; returns something derived from the result so the call cannot be dropped. */
  readonly run: () => number;
  readonly perCallUs: number[];
}

function encodeCase(name: string, m: Message): Case {
  return { name: `encodeMessage, ${name}`, bytes: messageSizeBytes(m), run: () => encodeMessage(m).length, perCallUs: [] };
}

function decodeCase(name: string, m: Message): Case {
  const bytes = encodeMessage(m);
  return { name: `decodeMessage, ${name}`, bytes: bytes.length, run: () => decodeMessage(bytes).entries.length, perCallUs: [] };
}

function encodeEntryCase(name: string, e: Entry): Case {
  return { name: `encodeEntry, ${name}`, bytes: entrySizeBytes(e), run: () => encodeEntry(e).length, perCallUs: [] };
}

const cases: Case[] = [
  encodeCase('heartbeat', heartbeat),
  encodeCase('1 entry of 16 KiB', oneLarge),
  encodeCase('256 entries of 100 B', manySmall),
  encodeEntryCase('100 B', smallEntry),
  encodeEntryCase('16 KiB', largeEntry),
  decodeCase('heartbeat', heartbeat),
  decodeCase('1 entry of 16 KiB', oneLarge),
  decodeCase('256 entries of 100 B', manySmall),
  { name: 'decodeEntry, 100 B', bytes: smallEntryBytes.length, run: () => decodeEntry(smallEntryBytes).data.length, perCallUs: [] },
];

let checksum = 0;

/** Calls per batch so that one batch takes about half a millisecond. */
function batchSize(c: Case): number {
  let calls = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < calls; i++) checksum += c.run();
    if (performance.now() - start >= 0.5 || calls >= 1 << 20) return calls;
    calls *= 2;
  }
}

/** One round of `c`: batches for ROUND_MS of wall time; records CPU µs per call. */
function round(c: Case, calls: number): void {
  let done = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  while (performance.now() - start < ROUND_MS) {
    for (let i = 0; i < calls; i++) checksum += c.run();
    done += calls;
  }
  const cpu = process.cpuUsage(cpuStart);
  c.perCallUs.push((cpu.user + cpu.system) / done);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function main(): void {
  const batches = cases.map((c) => {
    for (let i = 0; i < 2000; i++) checksum += c.run(); // warm-up
    return batchSize(c);
  });
  const rng = new SeededRng(19);
  const order = cases.map((_, i) => i);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.nextInt(i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const i of order) round(cases[i]!, batches[i]!);
  }
  console.log(`raft/core codec: CPU µs per call, best and median of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms`);
  console.log('| case | encoded bytes | best µs | median µs |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const c of cases) {
    console.log(`| ${c.name} | ${c.bytes.toLocaleString('en-US')} | ${Math.min(...c.perCallUs).toFixed(2)} | ${median(c.perCallUs).toFixed(2)} |`);
  }
  if (checksum === 0) console.log('(checksum 0)');
}

main();
