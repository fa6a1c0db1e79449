import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MvccModel, bytesToString } from '../test/mvcc-model';
import type { ModelRequest, ModelResult } from '../test/mvcc-model';
import { KVError } from './errors';
import { KVStore } from './kv-store';
import { LeaseSet, testOptions } from './testing';
import type { Compare, KVStoreOptions, RangeRequest, RequestOp, SortOrder, SortTarget, TxnRequest } from './types';

// Property tests of the store against the brute-force model (test/mvcc-model.ts): random
// sequences of Range / Put / DeleteRange / Txn / Compact / event reads, with historical reads and
// snapshot -> restore in the middle, must give the same answers, errors and revisions.

const toBytes = (text: string): Uint8Array => Uint8Array.from(text, (char) => char.charCodeAt(0));

// A tiny key space (with 0x00 and 0xff bytes) so that keys collide, prefix each other and ranges overlap.
const keyText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', '\u00ff') },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('a', 'b', '\u0000', '\u00ff'), { minLength: 2, maxLength: 2 }).map((chars) => chars.join('')) },
);
const keyArb = keyText.map(toBytes);
const rangeEndArb: fc.Arbitrary<Uint8Array | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constant(new Uint8Array([0])) },
  { weight: 3, arbitrary: keyArb },
);
const leaseArb = fc.constantFrom(0n, 0n, 1n, 2n, 3n);
const revisionArb = fc.oneof(fc.constant(0), fc.integer({ min: -1, max: 40 }));
const filterArb = fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 30 }) });
const valueArb = fc.array(fc.constantFrom('x', 'y', '\u00ff'), { maxLength: 3 }).map((chars) => toBytes(chars.join('')));

const rangeArb = fc.record(
  {
    key: keyArb,
    rangeEnd: rangeEndArb,
    revision: revisionArb,
    limit: fc.integer({ min: -1, max: 4 }),
    sortOrder: fc.constantFrom<SortOrder | undefined>(undefined, 'NONE', 'ASCEND', 'DESCEND'),
    sortTarget: fc.constantFrom<SortTarget | undefined>(undefined, 'KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'),
    keysOnly: fc.boolean(),
    countOnly: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    minModRevision: filterArb,
    maxModRevision: filterArb,
    minCreateRevision: filterArb,
    maxCreateRevision: filterArb,
  },
  { requiredKeys: ['key'] },
);

const putArb = fc.record(
  {
    key: keyArb,
    value: valueArb,
    lease: leaseArb,
    prevKv: fc.boolean(),
    ignoreValue: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    ignoreLease: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  },
  { requiredKeys: ['key', 'value'] },
).map((put) => ({
  ...put,
  // Mostly well-formed ignore flags (empty value / no lease), sometimes the misuse etcd rejects.
  value: put.ignoreValue === true && put.value !== undefined && put.value.length > 1 ? new Uint8Array(0) : put.value,
  lease: put.ignoreLease === true && put.lease === 2n ? 0n : put.lease,
}));

const deleteArb = fc.record({ key: keyArb, rangeEnd: rangeEndArb, prevKv: fc.boolean() }, { requiredKeys: ['key'] });

const compareArb: fc.Arbitrary<Compare> = fc
  .record({
    target: fc.constantFrom('VERSION', 'CREATE', 'MOD', 'VALUE', 'LEASE'),
    result: fc.constantFrom('EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'),
    key: keyArb,
    rangeEnd: rangeEndArb,
    number: fc.integer({ min: 0, max: 12 }),
    value: valueArb,
    lease: leaseArb,
  })
  .map(({ target, result, key, rangeEnd, number, value, lease }): Compare => {
    const base = { result, key, rangeEnd } as const;
    switch (target) {
      case 'VERSION':
        return { ...base, target, version: number % 4 };
      case 'CREATE':
        return { ...base, target, createRevision: number };
      case 'MOD':
        return { ...base, target, modRevision: number };
      case 'VALUE':
        return { ...base, target, value };
      default:
        return { ...base, target: 'LEASE', lease };
    }
  });

const { txn: txnArb } = fc.letrec<{ txn: TxnRequest; op: RequestOp }>((tie) => ({
  txn: fc.record({
    compare: fc.array(compareArb, { maxLength: 2 }),
    success: fc.array(tie('op'), { maxLength: 3 }),
    failure: fc.array(tie('op'), { maxLength: 2 }),
  }),
  op: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constant('range' as const), request: rangeArb }),
    fc.record({ type: fc.constant('put' as const), request: putArb }),
    fc.record({ type: fc.constant('deleteRange' as const), request: deleteArb }),
    fc.record({ type: fc.constant('txn' as const), request: tie('txn') as fc.Arbitrary<TxnRequest> }),
  ),
}));

/** A generated step; compact and event reads pick their revision relative to the store's at run time. */
type Step =
  | { kind: 'range' | 'put' | 'deleteRange' | 'txn'; request: never }
  | { kind: 'compact'; fromHead: boolean; fraction: number; offset: number }
  | { kind: 'events'; fromFloor: boolean; fraction: number; offset: number; key: Uint8Array; rangeEnd: Uint8Array | undefined; prevKv: boolean; maxEvents: number }
  | { kind: 'restore' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: rangeArb.map((request) => ({ kind: 'range', request }) as unknown as Step) },
  { weight: 5, arbitrary: putArb.map((request) => ({ kind: 'put', request }) as unknown as Step) },
  { weight: 2, arbitrary: deleteArb.map((request) => ({ kind: 'deleteRange', request }) as unknown as Step) },
  { weight: 3, arbitrary: txnArb.map((request) => ({ kind: 'txn', request }) as unknown as Step) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      fromHead: fc.boolean(),
      fraction: fc.double({ min: 0, max: 1, noNaN: true }),
      offset: fc.constantFrom(-2, -1, 0, 0, 1),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('events' as const),
      fromFloor: fc.boolean(),
      fraction: fc.double({ min: 0, max: 1, noNaN: true }),
      offset: fc.constantFrom(-1, 0, 0, 1, 2),
      key: keyArb,
      rangeEnd: rangeEndArb,
      prevKv: fc.boolean(),
      maxEvents: fc.integer({ min: 1, max: 5 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'restore' as const }) },
);

/** More runs for a soak: KV_MODEL_RUNS=5000 npx vitest run ... mvcc.model */
const RUNS = Number(process.env['KV_MODEL_RUNS'] ?? 300);

/** Store answers as plain data: bytes as byte strings, KVErrors as their code. */
function normalize(value: unknown): unknown {
  if (value instanceof Uint8Array) return bytesToString(value);
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = normalize(item);
    return out;
  }
  return value;
}

function runOnStore(store: KVStore, request: ModelRequest): ModelResult {
  try {
    switch (request.kind) {
      case 'range':
        return { ok: normalize(store.range(request.request)) };
      case 'put':
        return { ok: normalize(store.put(request.request)) };
      case 'deleteRange':
        return { ok: normalize(store.deleteRange(request.request)) };
      case 'txn':
        return { ok: normalize(store.txn(request.request)) };
      case 'compact':
        return { ok: normalize(store.compact(request.revision)) };
      case 'events':
        return { ok: normalize(store.readEvents(request)) };
    }
  } catch (error) {
    if (error instanceof KVError) return { error: error.code };
    throw error;
  }
}

function toModelRequest(step: Step, model: MvccModel): ModelRequest {
  switch (step.kind) {
    case 'compact':
      return { kind: 'compact', revision: (step.fromHead ? model.current : Math.round(step.fraction * model.current)) + step.offset };
    case 'events': {
      const fromRevision = Math.max(1, step.fromFloor ? model.floor + step.offset : Math.round(step.fraction * (model.current + 2)));
      return { kind: 'events', fromRevision, key: step.key, rangeEnd: step.rangeEnd, prevKv: step.prevKv, maxEvents: step.maxEvents };
    }
    case 'range': {
      // Spread explicit revisions over what exists now: mostly readable, some compacted or future.
      const request = (step as unknown as { request: RangeRequest }).request;
      const revision = request.revision !== undefined && request.revision > 0 ? request.revision % (model.current + 2) : request.revision;
      return { kind: 'range', request: { ...request, revision } };
    }
    default:
      return step as unknown as ModelRequest;
  }
}

function checkSequence(steps: Step[], maxEvents: number): void {
  const leases = new LeaseSet();
  leases.granted.add(1n);
  leases.granted.add(2n);
  const options: KVStoreOptions = testOptions({ leases, eventHistoryMaxEvents: maxEvents });
  const model = new MvccModel({ maxEvents, knownLeases: leases.granted });
  let store = KVStore.create(options);
  for (const step of steps) {
    if (step.kind === 'restore') {
      const bytes = store.snapshot();
      const hash = store.hash();
      const digest = store.digest();
      const retainedBytes = store.retainedBytes;
      store = KVStore.restore(bytes, options);
      expect(store.hash()).toBe(hash);
      expect(store.digest()).toBe(digest);
      // The incremental tally equals the one a restore recounts from scratch.
      expect(store.retainedBytes).toBe(retainedBytes);
      expect(store.snapshot()).toEqual(bytes);
      continue;
    }
    const request = toModelRequest(step, model);
    expect(runOnStore(store, request)).toEqual(model.run(request));
    expect(store.currentRevision).toBe(model.current);
    expect(store.compactRevision).toBe(model.compactRevision);
    expect(store.oldestEventRevision).toBe(model.floor);
  }
  // Every revision still readable answers like the model's full copy of it.
  for (let revision = Math.max(1, model.compactRevision); revision <= model.current; revision++) {
    const request: ModelRequest = { kind: 'range', request: { key: new Uint8Array([0]), rangeEnd: new Uint8Array([0]), revision } };
    expect(runOnStore(store, request)).toEqual(model.run(request));
  }
}

describe('MVCC store against a brute-force model (fast-check)', () => {
  it('agrees on every answer, error and revision over random operation sequences (restores included)', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 60 }), (steps) => checkSequence(steps, 10_000)),
      { numRuns: RUNS },
    );
  });

  it('agrees with a small Watch history bound (whole-revision trimming)', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 6 }), (steps, maxEvents) => checkSequence(steps, maxEvents)),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('the harness catches a wrong answer (a model with an off-by-one version disagrees)', () => {
    const model = new MvccModel({ maxEvents: 100, knownLeases: new Set() });
    const store = KVStore.create(testOptions());
    const put: ModelRequest = { kind: 'put', request: { key: toBytes('a'), value: toBytes('x') } };
    model.run(put);
    runOnStore(store, put);
    const read: ModelRequest = { kind: 'range', request: { key: toBytes('a') } };
    const good = model.run(read) as { ok: { kvs: { version: number }[] } };
    const bad = { ok: { ...good.ok, kvs: [{ ...good.ok.kvs[0]!, version: 2 }] } };
    expect(runOnStore(store, read)).toEqual(good);
    expect(runOnStore(store, read)).not.toEqual(bad);
  });
});
