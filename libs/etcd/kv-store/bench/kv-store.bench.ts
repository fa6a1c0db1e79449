// Benchmarks of the key space at etcd scale: the ordered index and the store at 1,000,000 keys.
// Measurements, not tests. Run: npx nx run etcd-kv-store:bench  (or: npx tsx this file [keyCount]).
// Figures depend on the machine and on what else runs on it; read them as indicative.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KVStore, ANY_LEASE_EXISTS } from '../src/index';
import { OrderedMap } from '../src/ordered-map';
import { toByteString } from '../src/byte-string';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const KEY_COUNT = Number(process.argv[2] ?? 1_000_000);
const VALUE_BYTES = 64;
const encoder = new TextEncoder();

interface Row {
  name: string;
  operations: number;
  totalMs: number;
  note?: string;
}
const rows: Row[] = [];

function time(name: string, operations: number, run: () => void, note?: string): number {
  const start = process.hrtime.bigint();
  run();
  const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
  rows.push({ name, operations, totalMs, note });
  return totalMs;
}

/** A deterministic shuffle (xorshift) so that runs compare. */
function shuffled(count: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  let state = 0x9e3779b9;
  for (let i = count - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** etcd-style keys: /registry/<kind>/<namespace>/<name>, ~36 bytes, 1000 keys per namespace. */
function keyText(i: number): string {
  return `/registry/pods/ns-${String(Math.floor(i / 1000)).padStart(4, '0')}/pod-${String(i).padStart(8, '0')}`;
}

function heapUsedMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

function benchIndex(order: number[]): void {
  // The store holds flat byte strings (toByteString); template literals would be ropes.
  const keys = order.map((i) => toByteString(encoder.encode(keyText(i))));
  const calibration = new Map<string, number>();
  time('calibration: JS Map.set of the same keys (machine speed)', KEY_COUNT, () => {
    for (let i = 0; i < keys.length; i++) calibration.set(keys[i]!, i);
  });
  calibration.clear();
  const map = new OrderedMap<number>();
  time(`index insert ${KEY_COUNT.toLocaleString()} keys (random order)`, KEY_COUNT, () => {
    for (let i = 0; i < keys.length; i++) map.set(keys[i]!, i);
  });
  let found = 0;
  time(`index lookup at ${KEY_COUNT.toLocaleString()} keys (random)`, KEY_COUNT, () => {
    for (let i = keys.length - 1; i >= 0; i--) if (map.get(keys[i]!) !== undefined) found++;
  });
  if (found !== KEY_COUNT) throw new Error('index lost keys');
  let scanned = 0;
  time('index full scan', KEY_COUNT, () => {
    map.scan('', null, () => {
      scanned++;
    });
  });
  if (scanned !== KEY_COUNT) throw new Error('index scan incomplete');
}

function benchStore(order: number[]): KVStore {
  const value = new Uint8Array(VALUE_BYTES).fill(0x61);
  const keyBytes = order.map((i) => encoder.encode(keyText(i)));
  const before = heapUsedMb();
  const store = KVStore.create({ maxTxnOps: 128, maxTxnOpsTotal: 10_000, eventHistoryMaxEvents: 100_000, leases: ANY_LEASE_EXISTS });
  time(`put ${KEY_COUNT.toLocaleString()} new keys (random order, ${VALUE_BYTES} B values)`, KEY_COUNT, () => {
    for (const key of keyBytes) store.put({ key, value });
  });
  store.compact(store.currentRevision);
  const afterMb = heapUsedMb();
  const keyPayload = keyBytes.reduce((sum, key) => sum + key.length, 0) / KEY_COUNT;
  const perKey = ((afterMb - before) * 1e6) / KEY_COUNT;
  rows.push({
    name: 'memory per key (heap, after compaction, event log 100k)',
    operations: KEY_COUNT,
    totalMs: 0,
    note: `${perKey.toFixed(0)} B/key incl. ${keyPayload.toFixed(0)} B key + ${VALUE_BYTES} B value`,
  });
  const overwrite = Math.min(KEY_COUNT, 200_000);
  time(`put ${overwrite.toLocaleString()} overwrites`, overwrite, () => {
    for (let i = 0; i < overwrite; i++) store.put({ key: keyBytes[i]!, value });
  });
  time('txn compare(mod) + put, 100,000', 100_000, () => {
    for (let i = 0; i < 100_000; i++) {
      const key = keyBytes[i]!;
      store.txn({
        compare: [{ target: 'VERSION', result: 'GREATER', key, version: 0 }],
        success: [{ type: 'put', request: { key, value } }],
        failure: [],
      });
    }
  });
  return store;
}

function benchRanges(store: KVStore): void {
  const all = { key: new Uint8Array([0]), rangeEnd: new Uint8Array([0]) };
  let count = 0;
  time(`range all ${KEY_COUNT.toLocaleString()} keys (values)`, KEY_COUNT, () => {
    count = store.range(all).kvs.length;
  });
  if (count !== KEY_COUNT) throw new Error(`range returned ${count}`);
  time(`range all ${KEY_COUNT.toLocaleString()} keys, keys_only`, KEY_COUNT, () => {
    store.range({ ...all, keysOnly: true });
  });
  time(`range all ${KEY_COUNT.toLocaleString()} keys, count_only`, KEY_COUNT, () => {
    store.range({ ...all, countOnly: true });
  });
  time(`range all, limit 100 (count still ${KEY_COUNT.toLocaleString()})`, KEY_COUNT, () => {
    store.range({ ...all, limit: 100 });
  });
  const prefixes = 1000;
  time(`range prefix of 1,000 keys (x${prefixes})`, prefixes * 1000, () => {
    for (let p = 0; p < prefixes; p++) {
      const namespace = Math.floor((p * 7919) % Math.max(1, KEY_COUNT / 1000));
      const prefix = `/registry/pods/ns-${String(namespace).padStart(4, '0')}/`;
      store.range({ key: encoder.encode(prefix), rangeEnd: encoder.encode(prefix.slice(0, -1) + '0') });
    }
  });
  time('range prefix, limit 10 (x10,000)', 10_000 * 10, () => {
    for (let p = 0; p < 10_000; p++) {
      const namespace = Math.floor((p * 7919) % Math.max(1, KEY_COUNT / 1000));
      const prefix = `/registry/pods/ns-${String(namespace).padStart(4, '0')}/`;
      store.range({ key: encoder.encode(prefix), rangeEnd: encoder.encode(prefix.slice(0, -1) + '0'), limit: 10 });
    }
  });
  time('range single key (x200,000)', 200_000, () => {
    for (let i = 0; i < 200_000; i++) store.range({ key: encoder.encode(keyText((i * 7919) % KEY_COUNT)) });
  });
  time('range all, sort by MOD desc, limit 10', KEY_COUNT, () => {
    store.range({ ...all, sortTarget: 'MOD', sortOrder: 'DESCEND', limit: 10 });
  });
  const historical = Math.max(2, store.currentRevision - 150_000);
  time(`range all at revision ${historical.toLocaleString()} (historical)`, KEY_COUNT, () => {
    store.range({ ...all, revision: historical, countOnly: true });
  });
}

function benchMaintenance(store: KVStore): void {
  time('compact at the current revision', KEY_COUNT, () => {
    store.compact(store.currentRevision);
  });
  let bytes: Uint8Array = new Uint8Array(0);
  time('snapshot', KEY_COUNT, () => {
    bytes = store.snapshot();
  });
  rows[rows.length - 1]!.note = `${(bytes.length / 1e6).toFixed(1)} MB`;
  let hash = '';
  time('hash', KEY_COUNT, () => {
    hash = store.hash();
  });
  let restored: KVStore | undefined;
  time('restore', KEY_COUNT, () => {
    restored = KVStore.restore(bytes, store.options);
  });
  if (restored!.hash() !== hash) throw new Error('restored hash differs');
}

function print(): void {
  const header = ['benchmark', 'ops', 'total ms', 'ops/s', 'µs/op', 'note'];
  const lines = rows.map((row) => [
    row.name,
    row.operations.toLocaleString(),
    row.totalMs === 0 ? '' : row.totalMs.toFixed(0),
    row.totalMs === 0 ? '' : Math.round((row.operations / row.totalMs) * 1000).toLocaleString(),
    row.totalMs === 0 ? '' : ((row.totalMs * 1000) / row.operations).toFixed(3),
    row.note ?? '',
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
const store = benchStore(order);
benchRanges(store);
benchMaintenance(store);
print();
