// The kv-store index (OrderedMap) against the npm package sorted-btree on the same keys: put in
// random order, point lookup, a range of 1,000 keys, and V8 heap per key. A measurement the
// README's figures come from, not a test, and not part of `nx run etcd-kv-store:bench`:
// sorted-btree is not a dependency of ward. To run it:
//   npm install --no-save sorted-btree
//   npx tsx libs/etcd/kv-store/bench/index-vs-sorted-btree.ts <ordered-map|sorted-btree|sorted-btree-64> [keys]
// One structure per process, so the heap figure is that structure's alone. Times are CPU time.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { OrderedMap } from '../src/ordered-map';
import { toByteString } from '../src/byte-string';
import { keyText, median, shuffled } from './bench-keys';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const [kind = 'ordered-map', countText] = process.argv.slice(2);
const KEYS = Number(countText ?? 1_000_000);
const sortedBtreePackage = 'sorted-btree';
const BTree = kind === 'ordered-map' ? undefined : ((await import(sortedBtreePackage)) as { default: new (entries: undefined, compare: (a: string, b: string) => number, maxNodeSize?: number) => { set(k: string, v: number): unknown; get(k: string): number | undefined; forRange(low: string, high: string, includeHigh: boolean, onFound: (k: string, v: number) => void): number } }).default;
const encoder = new TextEncoder();
const order = shuffled(KEYS);
const keys = order.map((i) => toByteString(encoder.encode(keyText(i))));
const probes = shuffled(KEYS).map((i) => keys[i]!);
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
interface Map_ { set(k: string, v: number): unknown; get(k: string): number | undefined; range(start: string, end: string, visit: (k: string, v: number) => void): void }
function make(): Map_ {
  if (kind === 'ordered-map') { const m = new OrderedMap<number>(); return { set: (k, v) => m.set(k, v), get: (k) => m.get(k), range: (s, e, f) => m.scan(s, e, f) }; }
  const t = new BTree!(undefined, cmp, kind === 'sorted-btree-64' ? 64 : undefined);
  return { set: (k, v) => t.set(k, v), get: (k) => t.get(k), range: (s, e, f) => { t.forRange(s, e, false, f); } };
}
const cpu = (run: () => void) => { const s = process.cpuUsage(); run(); const u = process.cpuUsage(s); return (u.user + u.system) / 1000; };
gc(); gc();
const before = process.memoryUsage().heapUsed;
const map = make();
const putUs: number[] = [];
const slice = KEYS / 20;
for (let from = 0; from < KEYS; from += slice) {
  const ms = cpu(() => { for (let i = from; i < from + slice; i++) map.set(keys[i]!, i); });
  if (from >= KEYS / 2) putUs.push((ms * 1000) / slice);
}
gc(); gc();
const perKey = (process.memoryUsage().heapUsed - before) / KEYS;
const getUs: number[] = [];
for (let from = 0; from < KEYS; from += slice) {
  const ms = cpu(() => { for (let i = from; i < from + slice; i++) if (map.get(probes[i]!) === undefined) throw new Error('lost'); });
  getUs.push((ms * 1000) / slice);
}
const namespaces = Math.floor(KEYS / 1000);
const ranges = Array.from({ length: 2000 }, (_, p) => { const ns = String((p * 7919) % namespaces).padStart(4, '0'); return [`/registry/pods/ns-${ns}/`, `/registry/pods/ns-${ns}0`] as const; });
const rangeUs: number[] = [];
for (let r = 0; r < 10; r++) {
  let seen = 0;
  const ms = cpu(() => { for (let p = r * 200; p < r * 200 + 200; p++) map.range(ranges[p]![0], ranges[p]![1], () => { seen++; }); });
  if (seen !== 200_000) throw new Error(`range saw ${seen}`);
  rangeUs.push((ms * 1000) / 200);
}
console.log(JSON.stringify({ kind, keys: KEYS, putMedianUs: median(putUs), putBestUs: Math.min(...putUs), getMedianUs: median(getUs), getBestUs: Math.min(...getUs), range1000MedianUs: median(rangeUs), range1000BestUs: Math.min(...rangeUs), heapBytesPerKey: Math.round(perKey) }));
