// Benchmarks of the key space at etcd scale: the ordered index and the store at 1,000,000 keys.
// Measurements, not tests. Run: npx nx run etcd-kv-store:bench  (or: npx tsx this file [keyCount]).
//
// Figures depend on the machine and on what else runs on it. Times are the process's CPU time
// (user + system, process.cpuUsage), not wall-clock time: on a shared, oversubscribed machine
// waiting for a core would otherwise dominate. Each figure is measured several times (in slices
// of a long run, or by repeating a short one) and reported as the median and the best. The first
// row times a plain JS Map on the same keys, to compare machines.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KVStore, ANY_LEASE_EXISTS } from '../src/index';
import { OrderedMap } from '../src/ordered-map';
import { toByteString } from '../src/byte-string';
import { keyText, median, shuffled } from './bench-keys';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const KEY_COUNT = Number(process.argv[2] ?? 1_000_000);
const VALUE_BYTES = 64;
const encoder = new TextEncoder();

interface Row {
  readonly name: string;
  readonly operations: number;
  readonly medianUs: number;
  readonly bestUs: number;
  readonly note: string;
}
const rows: Row[] = [];

/** CPU milliseconds (user + system) spent by this process in `run`. */
function elapsedMs(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/**
 * Runs `run(from, to)` over [0, total) in slices; the per-operation figures come from the slices
 * of the second half (so "at N keys" means a structure already holding N/2 to N).
 */
function sliced(name: string, total: number, slices: number, run: (from: number, to: number) => void, note = ''): void {
  const size = Math.ceil(total / slices);
  const perOpUs: number[] = [];
  for (let from = 0; from < total; from += size) {
    const to = Math.min(total, from + size);
    const ms = elapsedMs(() => run(from, to));
    if (from >= total / 2) perOpUs.push((ms * 1000) / (to - from));
  }
  rows.push({ name, operations: total, medianUs: median(perOpUs), bestUs: Math.min(...perOpUs), note });
}

/** Runs `run` (doing `operations` operations) `times` times. */
function repeated(name: string, operations: number, times: number, run: () => void, note = ''): void {
  const perOpUs: number[] = [];
  for (let i = 0; i < times; i++) perOpUs.push((elapsedMs(run) * 1000) / operations);
  rows.push({ name, operations, medianUs: median(perOpUs), bestUs: Math.min(...perOpUs), note });
}

function heapUsedBytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function benchIndex(order: number[]): void {
  // The store holds flat byte strings (toByteString); template literals would be ropes.
  const keys = order.map((i) => toByteString(encoder.encode(keyText(i))));
  const calibration = new Map<string, number>();
  sliced('calibration: JS Map.set, same keys', KEY_COUNT, 20, (from, to) => {
    for (let i = from; i < to; i++) calibration.set(keys[i]!, i);
  });
  calibration.clear();
  const map = new OrderedMap<number>();
  sliced('index (B+tree) insert, random order', KEY_COUNT, 20, (from, to) => {
    for (let i = from; i < to; i++) map.set(keys[i]!, i);
  });
  const probes = shuffled(KEY_COUNT).map((i) => keys[i]!);
  sliced(`index lookup at ${KEY_COUNT.toLocaleString()} keys, random`, KEY_COUNT, 20, (from, to) => {
    for (let i = from; i < to; i++) if (map.get(probes[i]!) === undefined) throw new Error('index lost a key');
  });
  repeated('index full scan (per key)', KEY_COUNT, 3, () => {
    let scanned = 0;
    map.scan('', null, () => {
      scanned++;
    });
    if (scanned !== KEY_COUNT) throw new Error('index scan incomplete');
  });
}

function benchWrites(order: number[]): { store: KVStore; keyBytes: Uint8Array[] } {
  const value = new Uint8Array(VALUE_BYTES).fill(0x61);
  const keyBytes = order.map((i) => encoder.encode(keyText(i)));
  const before = heapUsedBytes();
  const store = KVStore.create({ maxTxnOps: 128, maxTxnOpsTotal: 10_000, eventHistoryMaxEvents: 100_000, leases: ANY_LEASE_EXISTS });
  sliced(`put new keys (${VALUE_BYTES} B values), random order`, KEY_COUNT, 20, (from, to) => {
    for (let i = from; i < to; i++) store.put({ key: keyBytes[i]!, value });
  });
  store.compact(store.currentRevision);
  const perKey = (heapUsedBytes() - before) / KEY_COUNT;
  const payload = keyBytes.reduce((sum, key) => sum + key.length, 0) / KEY_COUNT + VALUE_BYTES;
  rows.push({
    name: 'memory per key (V8 heap, compacted, Watch log 100k)',
    operations: KEY_COUNT,
    medianUs: Number.NaN,
    bestUs: Number.NaN,
    note: `${perKey.toFixed(0)} B/key, of which ${payload.toFixed(0)} B key + value`,
  });
  const overwrites = Math.min(KEY_COUNT, 200_000);
  sliced('put overwrite of existing keys', overwrites, 10, (from, to) => {
    for (let i = from; i < to; i++) store.put({ key: keyBytes[i]!, value });
  });
  sliced('txn: compare version + put', 100_000, 10, (from, to) => {
    for (let i = from; i < to; i++) {
      const key = keyBytes[i]!;
      store.txn({ compare: [{ target: 'VERSION', result: 'GREATER', key, version: 0 }], success: [{ type: 'put', request: { key, value } }], failure: [] });
    }
  });
  return { store, keyBytes };
}

function benchRanges(store: KVStore): void {
  const all = { key: new Uint8Array([0]), rangeEnd: new Uint8Array([0]) };
  const n = KEY_COUNT.toLocaleString();
  repeated(`range all ${n} keys with values (per key)`, KEY_COUNT, 3, () => {
    if (store.range(all).kvs.length !== KEY_COUNT) throw new Error('range lost keys');
  });
  repeated(`range all ${n}, keys_only (per key)`, KEY_COUNT, 3, () => store.range({ ...all, keysOnly: true }));
  repeated(`range all ${n}, count_only (per key)`, KEY_COUNT, 3, () => store.range({ ...all, countOnly: true }));
  repeated(`range all ${n}, limit 100 (count from subtree totals; per call)`, 1, 5, () => store.range({ ...all, limit: 100 }));
  // Request keys are built before timing: only the store's work is measured.
  const namespaces = Math.max(1, Math.floor(KEY_COUNT / 1000));
  const prefixRequests = Array.from({ length: 2_000 }, (_, p) => {
    const prefix = `/registry/pods/ns-${String((p * 7919) % namespaces).padStart(4, '0')}/`;
    return { key: encoder.encode(prefix), rangeEnd: encoder.encode(prefix.slice(0, -1) + '0') };
  });
  sliced('range prefix of 1,000 keys with values (per call)', 1_000, 10, (from, to) => {
    for (let p = from; p < to; p++) store.range(prefixRequests[p]!);
  });
  sliced('range prefix, limit 10 (per call)', 2_000, 10, (from, to) => {
    for (let p = from; p < to; p++) store.range({ ...prefixRequests[p]!, limit: 10 });
  });
  const singleKeys = Array.from({ length: 200_000 }, (_, i) => encoder.encode(keyText((i * 7919) % KEY_COUNT)));
  sliced('range single key', singleKeys.length, 20, (from, to) => {
    for (let i = from; i < to; i++) store.range({ key: singleKeys[i]! });
  });
  repeated(`range all ${n}, sort by MOD desc, limit 10 (per key)`, KEY_COUNT, 3, () =>
    store.range({ ...all, sortTarget: 'MOD', sortOrder: 'DESCEND', limit: 10 }),
  );
  const historical = Math.max(2, store.currentRevision - 150_000);
  repeated(`count all at a past revision (per key)`, KEY_COUNT, 3, () => store.range({ ...all, revision: historical, countOnly: true }));
}

function benchMaintenance(store: KVStore): void {
  repeated('compact at the current revision (per key)', KEY_COUNT, 1, () => store.compact(store.currentRevision));
  let bytes: Uint8Array = new Uint8Array(0);
  repeated('snapshot (per key)', KEY_COUNT, 2, () => {
    bytes = store.snapshot();
  });
  rows[rows.length - 1] = { ...rows[rows.length - 1]!, note: `${(bytes.length / 1e6).toFixed(1)} MB` };
  let hash = '';
  repeated('hash (per key)', KEY_COUNT, 2, () => {
    hash = store.hash();
  });
  let restored: KVStore | undefined;
  repeated('restore (per key)', KEY_COUNT, 2, () => {
    restored = KVStore.restore(bytes, store.options);
  });
  if (restored!.hash() !== hash) throw new Error('restored hash differs');
}

function print(): void {
  const header = ['benchmark', 'ops', 'median CPU µs/op', 'best CPU µs/op', 'best ops/CPU-s', 'note'];
  const figure = (us: number) => (Number.isNaN(us) ? '' : us < 10 ? us.toFixed(3) : us.toFixed(1));
  const lines = rows.map((row) => [
    row.name,
    row.operations.toLocaleString(),
    figure(row.medianUs),
    figure(row.bestUs),
    Number.isNaN(row.bestUs) ? '' : Math.round(1e6 / row.bestUs).toLocaleString(),
    row.note,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(format(header));
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  for (const line of lines) console.log(format(line));
}

const order = shuffled(KEY_COUNT);
console.log(`kv-store benchmark: ${KEY_COUNT.toLocaleString()} keys, node ${process.version}`);
benchIndex(order);
const { store } = benchWrites(order);
benchRanges(store);
benchMaintenance(store);
print();
