// Permission checks per second for a user holding 1, 1,000, 10,000 and 100,000 key-range
// permissions, through AuthStore.checkAccess: the full apply-time decision (enabled, revision, user
// lookup, root test, index lookup). Two grant shapes: prefix grants `/data/<i>/` (etcdctl --prefix,
// answered by hash lookups) and arbitrary ranges `[/data/<i>/a, /data/<i>/m)` (answered by the
// O(log n) interval index). Key checks and range checks run over pre-built query lists of keys
// inside granted ranges (hits, 3 in 4) and just outside (misses).
// A measurement, not a test: figures vary with the machine and its load.
import { loadavg } from 'node:os';
import { prefixRangeEnd, utf8 } from '@ward/shared/bytes';
import { AuthStore, PermissionType, type AuthIdentity } from '../src/index';

// Optional filters for a quicker run: --shapes prefix,range --sizes 1,10000 (1 is always kept, as
// the reference of the "extra cost" column).
function option(name: string): string[] | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1]!.split(',') : undefined;
}
const SIZES = [...new Set([1, ...(option('sizes')?.map(Number) ?? [1_000, 10_000, 100_000])])];
const SHAPES = (option('shapes') ?? ['prefix', 'range']) as Shape[];
const QUERY_COUNT = 1 << 14;
/**
 * Besides keys spread over all the grants, each size above this is also measured with keys under
 * only this many grants (evenly spaced): the index lines a check reads then stay in cache, which
 * separates the work of a check from the cost of fetching its lines.
 */
const CACHED_SPREAD = 16;
const ROUNDS = 7;
const ROUND_MS = 300;

const pad = (i: number): string => i.toString().padStart(8, '0');

type Shape = 'prefix' | 'range';

function grantOf(shape: Shape, i: number): { key: Uint8Array; rangeEnd: Uint8Array } {
  if (shape === 'prefix') {
    const prefix = utf8(`/data/${pad(i)}/`);
    return { key: prefix, rangeEnd: prefixRangeEnd(prefix) };
  }
  return { key: utf8(`/data/${pad(i)}/a`), rangeEnd: utf8(`/data/${pad(i)}/m`) };
}

function storeWith(shape: Shape, permissionCount: number): AuthStore {
  const store = new AuthStore();
  store.userAdd({ name: 'root', passwordHash: new Uint8Array(0), noPassword: true });
  store.userGrantRole('root', 'root');
  store.userAdd({ name: 'bench', passwordHash: new Uint8Array(0), noPassword: true });
  store.roleAdd('bench-role');
  store.userGrantRole('bench', 'bench-role');
  for (let i = 0; i < permissionCount; i++) {
    store.roleGrantPermission('bench-role', { permType: PermissionType.READWRITE, ...grantOf(shape, i) });
  }
  store.authEnable();
  return store;
}

function queries(permissionCount: number, spread: number, seed: number): { keys: Uint8Array[]; ends: Uint8Array[] } {
  let state = seed >>> 0;
  const next = (bound: number): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % bound;
  };
  const keys: Uint8Array[] = [];
  const ends: Uint8Array[] = [];
  for (let q = 0; q < QUERY_COUNT; q++) {
    const i = next(spread) * Math.floor(permissionCount / spread);
    const hit = next(4) !== 0; // three hits for one miss
    keys.push(utf8(hit ? `/data/${pad(i)}/b-${next(1000)}` : `/data/${pad(i)}~b-${next(1000)}`));
    ends.push(utf8(hit ? `/data/${pad(i)}/b-999z` : `/data/${pad(i)}~b-999z`));
  }
  return { keys, ends };
}

interface Case {
  readonly shape: Shape;
  readonly size: number;
  /** How many of the grants the queried keys fall under. */
  readonly spread: number;
  readonly setupMs: number;
  readonly key: () => number;
  readonly range: () => number;
  readonly keyRates: number[];
  readonly rangeRates: number[];
}

function prepare(shape: Shape, permissionCount: number, spread: number): Case {
  const setupStart = performance.now();
  const store = storeWith(shape, permissionCount);
  const setupMs = performance.now() - setupStart;
  const identity: AuthIdentity = { username: 'bench', authRevision: store.revision };
  const { keys, ends } = queries(permissionCount, spread, 42);
  const none = new Uint8Array(0);
  const count = (access: 'read' | 'write', withEnds: boolean): (() => number) => () => {
    let allowed = 0;
    for (let q = 0; q < QUERY_COUNT; q++) if (store.checkAccess(identity, access, keys[q]!, withEnds ? ends[q]! : none) === null) allowed++;
    if (allowed === 0) throw new Error('no check was allowed: the benchmark is broken');
    return QUERY_COUNT;
  };
  return { shape, size: permissionCount, spread, setupMs, key: count('write', false), range: count('read', true), keyRates: [], rangeRates: [] };
}

/** Milliseconds of CPU time this process has used: unlike wall time, not inflated by other processes. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Checks per CPU second of one timed slice. */
function rate(run: () => number): number {
  let checks = 0;
  const start = cpuMs();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    checks += run();
    elapsed = cpuMs() - start;
  }
  return (checks / elapsed) * 1000;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const loadBefore = loadavg()[0]!;
const cases = SHAPES.flatMap((shape) =>
  SIZES.flatMap((size) => [prepare(shape, size, size), ...(size > CACHED_SPREAD ? [prepare(shape, size, CACHED_SPREAD)] : [])]),
);
for (const c of cases) {
  c.key(); // warm up: builds the flat views
  c.range();
}
// Round-robin over the sizes so that load from other processes falls on all of them alike.
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) {
    c.keyRates.push(rate(c.key));
    c.rangeRates.push(rate(c.range));
  }
}
const format = (n: number): string => Math.round(n).toLocaleString('en-US');
const extra = (value: number, reference: number): string => `${((reference / value - 1) * 100).toFixed(0)}%`;
console.log('| grants | permissions | keys under | key checks/s | extra cost vs 1 | range checks/s | extra cost vs 1 | setup ms |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const c of cases) {
  const base = cases.find((other) => other.shape === c.shape && other.size === 1)!;
  const key = median(c.keyRates);
  const range = median(c.rangeRates);
  console.log(
    `| ${c.shape} | ${format(c.size)} | ${c.spread === c.size ? 'all' : `${c.spread} of them`} | ${format(key)} | ${extra(key, median(base.keyRates))} | ${format(range)} | ${extra(range, median(base.rangeRates))} | ${c.setupMs.toFixed(0)} |`,
  );
}
console.log(`\n1-minute load average ${loadBefore.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end.`);
console.log(
  `Checks per CPU second (process CPU time, so other load inflates it less than wall time would), median of ${ROUNDS} interleaved ${ROUND_MS} ms rounds; "extra cost" = time per check relative to one permission, minus 1.`,
);
