// Benchmark of paged ranges at scale: what one Range with a limit costs when the span holds
// 1,000,000 keys (etcd returns the span's total `count` with every page), and what reading the
// whole span in pages of 1000 costs, as `etcdctl get --prefix` paging and the scale bench do.
// Measurements, not tests. Run: npx tsx libs/etcd/kv-store/bench/range.bench.ts [keyCount]
//
// Times are the process's CPU time (user + system), as in kv-store.bench.ts: on a shared machine
// wall-clock time would mostly measure the wait for a core. "worst page" is the slowest single
// Range of the full paging (what stalls a member's event loop).
import { KVStore, ANY_LEASE_EXISTS, type RangeResponse } from '../src/index';
import { median } from './bench-keys';

const KEY_COUNT = Number(process.argv[2] ?? 1_000_000);
const PAGE_KEYS = 1000;
const VALUE_BYTES = 256;
const PREFIX = 'scale/';
const PREFIX_END = new TextEncoder().encode('scale0');
const encoder = new TextEncoder();
const key = (i: number): Uint8Array => encoder.encode(`${PREFIX}${String(i).padStart(9, '0')}`);

/** CPU milliseconds (user + system) spent by this process in `run`. */
function cpuMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const rows: string[][] = [];
function row(name: string, samplesMs: number[], note = ''): void {
  rows.push([name, median(samplesMs).toFixed(2), Math.min(...samplesMs).toFixed(2), note]);
}

const store = KVStore.create({ maxTxnOps: 128, maxTxnOpsTotal: 10_000, eventHistoryMaxEvents: 100_000, leases: ANY_LEASE_EXISTS });
const value = new Uint8Array(VALUE_BYTES).fill(0x76);
const loadMs = cpuMs(() => {
  for (let i = 0; i < KEY_COUNT; i++) store.put({ key: key(i), value });
});
const loadedAt = store.currentRevision;
console.log(`range benchmark: ${KEY_COUNT.toLocaleString()} keys of ${VALUE_BYTES} B, node ${process.version}; load ${(loadMs / 1000).toFixed(1)} CPU s`);

const firstPage = { key: encoder.encode(PREFIX), rangeEnd: PREFIX_END, limit: PAGE_KEYS };
const times = (count: number, run: () => void): number[] => Array.from({ length: count }, () => cpuMs(run));
row(`first page, limit ${PAGE_KEYS} (count of all ${KEY_COUNT.toLocaleString()})`, times(9, () => {
  const page = store.range(firstPage);
  if (page.count !== KEY_COUNT || page.kvs.length !== PAGE_KEYS || !page.more) throw new Error('first page is wrong');
}));
row(`first page, limit ${PAGE_KEYS}, keys_only`, times(9, () => store.range({ ...firstPage, keysOnly: true })));
row(`count_only over all ${KEY_COUNT.toLocaleString()}`, times(9, () => store.range({ ...firstPage, limit: 0, countOnly: true })));

/** Reads the whole span in pages; returns the CPU ms of every page. */
function pageAll(revision: number): number[] {
  const pages: number[] = [];
  let start = encoder.encode(PREFIX);
  let seen = 0;
  for (;;) {
    let page: RangeResponse | undefined;
    pages.push(cpuMs(() => (page = store.range({ key: start, rangeEnd: PREFIX_END, limit: PAGE_KEYS, revision }))));
    if (page === undefined) throw new Error('no page');
    seen += page.kvs.length;
    if (!page.more) break;
    const last = page.kvs[page.kvs.length - 1]!.key;
    start = new Uint8Array(last.length + 1);
    start.set(last);
  }
  if (seen !== KEY_COUNT) throw new Error(`paging saw ${seen} keys, not ${KEY_COUNT}`);
  return pages;
}
const paging = pageAll(0);
const pagingTotal = paging.reduce((sum, ms) => sum + ms, 0);
rows.push([`full paging at the current revision (${paging.length} pages)`, (pagingTotal / 1000).toFixed(2) + ' s', '', `worst page ${Math.max(...paging).toFixed(1)} ms, median ${median(paging).toFixed(2)} ms`]);

// A past revision: 10% of the keys (spread over the span) were overwritten since, so the count
// looks at those one by one.
for (let i = 0; i < KEY_COUNT; i += 10) store.put({ key: key(i), value });
const pastPaging = pageAll(loadedAt);
const pastTotal = pastPaging.reduce((sum, ms) => sum + ms, 0);
rows.push([`full paging at a past revision (10% changed since)`, (pastTotal / 1000).toFixed(2) + ' s', '', `worst page ${Math.max(...pastPaging).toFixed(1)} ms, median ${median(pastPaging).toFixed(2)} ms`]);
row(`first page at that past revision`, times(5, () => store.range({ ...firstPage, revision: loadedAt })));

const header = ['benchmark', 'median CPU ms', 'best CPU ms', 'note'];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((line) => line[column]!.length)));
const format = (cells: string[]): string => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
console.log(format(header));
console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
for (const line of rows) console.log(format(line));
