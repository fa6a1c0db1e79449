import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FROM_KEY, LeaseSet, b, keysOf, newStore, putAll } from './testing';
import type { Compare, CompareResult, RequestOp, TxnRequest, TxnResponse } from './types';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

const put = (key: string, value = 'v', extra: object = {}): RequestOp => ({ type: 'put', request: { key: b(key), value: b(value), ...extra } });
const get = (key: string, extra: object = {}): RequestOp => ({ type: 'range', request: { key: b(key), ...extra } });
const del = (key: string, rangeEnd?: Uint8Array): RequestOp => ({ type: 'deleteRange', request: { key: b(key), rangeEnd } });
const txnOp = (request: TxnRequest): RequestOp => ({ type: 'txn', request });
const versionIs = (key: string, version: number, result: CompareResult = 'EQUAL'): Compare => ({ target: 'VERSION', result, key: b(key), version });

describe('Txn revisions (etcd TestV3TxnRevision, storeTxnWrite)', () => {
  it('a read-only txn and a txn deleting nothing keep the revision; a txn with a put bumps it once', () => {
    const store = newStore();
    const put1 = store.put({ key: b('abc'), value: b('def') });
    expect(store.txn({ compare: [], success: [get('abc')], failure: [] }).revision).toBe(put1.revision);
    expect(store.txn({ compare: [], success: [del('def')], failure: [] }).revision).toBe(put1.revision);
    const response = store.txn({ compare: [], success: [put('abc', '123'), put('xyz', '1')], failure: [] });
    expect(response.revision).toBe(put1.revision + 1);
    expect(store.currentRevision).toBe(put1.revision + 1);
  });

  it('numbers the changes of one txn with sub-revisions 0, 1, 2 ... across puts and deleted keys', () => {
    const store = newStore();
    putAll(store, ['x1', 'x2']); // 2, 3
    store.txn({ compare: [], success: [put('a'), del('x', b('y')), put('c')], failure: [] });
    const events = store.readEvents({ fromRevision: 4, key: FROM_KEY, rangeEnd: FROM_KEY, maxEvents: 100 }).events;
    expect(events.map((event) => [new TextDecoder().decode(event.kv.key), event.type, event.revision, event.subRevision])).toEqual([
      ['a', 'PUT', 4, 0],
      ['x1', 'DELETE', 4, 1],
      ['x2', 'DELETE', 4, 2],
      ['c', 'PUT', 4, 3],
    ]);
  });

  it('reads inside a txn see its earlier writes at the txn revision', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('old') }); // 2
    // A from-key delete may follow a put of a key it covers (etcd's duplicate check allows it).
    const response = store.txn({ compare: [], success: [get('k'), put('k', 'new'), get('k'), del('k', FROM_KEY), get('k')], failure: [] });
    const ranges = response.responses.filter((op) => op.type === 'range').map((op) => op.response);
    expect(ranges.map((range) => [range.revision, range.kvs[0]?.value])).toEqual([
      [2, b('old')],
      [3, b('new')],
      [3, undefined],
    ]);
    const putResponse = response.responses[1]!;
    expect(putResponse.type === 'put' && putResponse.response.revision).toBe(3);
  });
});

describe('Txn compares (etcd txn.go applyCompare / compareKV)', () => {
  const store = newStore();
  store.put({ key: b('k'), value: b('m'), lease: 5n }); // create 2, mod 2, version 1
  store.put({ key: b('k'), value: b('m'), lease: 5n }); // mod 3, version 2
  const cases: { compare: Compare; holds: boolean }[] = [];
  const add = (make: (result: CompareResult, operand: 'below' | 'equal' | 'above') => Compare) => {
    const expected: Record<CompareResult, Record<'below' | 'equal' | 'above', boolean>> = {
      EQUAL: { below: false, equal: true, above: false },
      NOT_EQUAL: { below: true, equal: false, above: true },
      GREATER: { below: true, equal: false, above: false },
      LESS: { below: false, equal: false, above: true },
    };
    for (const result of ['EQUAL', 'NOT_EQUAL', 'GREATER', 'LESS'] as const) {
      for (const operand of ['below', 'equal', 'above'] as const) cases.push({ compare: make(result, operand), holds: expected[result][operand] });
    }
  };
  const shift = (value: number, operand: 'below' | 'equal' | 'above') => (operand === 'below' ? value - 1 : operand === 'above' ? value + 1 : value);
  add((result, operand) => ({ target: 'VERSION', result, key: b('k'), version: shift(2, operand) }));
  add((result, operand) => ({ target: 'CREATE', result, key: b('k'), createRevision: shift(2, operand) }));
  add((result, operand) => ({ target: 'MOD', result, key: b('k'), modRevision: shift(3, operand) }));
  add((result, operand) => ({ target: 'LEASE', result, key: b('k'), lease: BigInt(shift(5, operand)) }));
  add((result, operand) => ({ target: 'VALUE', result, key: b('k'), value: b(operand === 'below' ? 'l' : operand === 'above' ? 'n' : 'm') }));

  it.each(cases.map((c, i) => [i, c.compare.target, c.compare.result, c.holds, c] as const))(
    'case %i: %s %s -> %s',
    (_i, _target, _result, holds, c) => {
      expect(store.txn({ compare: [c.compare], success: [], failure: [] }).succeeded).toBe(holds);
    },
  );

  it('a missing key compares as zero, except VALUE, which always fails', () => {
    const fresh = newStore();
    const run = (compare: Compare) => fresh.txn({ compare: [compare], success: [], failure: [] }).succeeded;
    expect(run({ target: 'VERSION', result: 'EQUAL', key: b('none'), version: 0 })).toBe(true);
    expect(run({ target: 'CREATE', result: 'LESS', key: b('none'), createRevision: 1 })).toBe(true);
    expect(run({ target: 'MOD', result: 'GREATER', key: b('none'), modRevision: 0 })).toBe(false);
    expect(run({ target: 'LEASE', result: 'EQUAL', key: b('none'), lease: 0n })).toBe(true);
    expect(run({ target: 'VALUE', result: 'NOT_EQUAL', key: b('none'), value: b('x') })).toBe(false);
    expect(run({ target: 'VALUE', result: 'EQUAL', key: b('none'), value: new Uint8Array(0) })).toBe(false);
  });

  it('all compares must hold (etcd applyCompares)', () => {
    expect(store.txn({ compare: [versionIs('k', 2), versionIs('k', 1)], success: [], failure: [] }).succeeded).toBe(false);
    expect(store.txn({ compare: [versionIs('k', 2), versionIs('none', 0)], success: [], failure: [] }).succeeded).toBe(true);
  });
});

describe('Txn compares over ranges (etcd TestV3TxnRangeCompare)', () => {
  const store = newStore();
  putAll(store, ['/a/2', '/a/3', '/a/4', '/f/5'], 'x'); // named by their revisions
  store.put({ key: b('/a/4'), value: b('x') }); // keeps create 4
  const table: { name: string; compare: Compare; succeeded: boolean }[] = [
    { name: '>= /a/; all create revs fit', compare: { target: 'CREATE', result: 'LESS', key: b('/a/'), rangeEnd: FROM_KEY, createRevision: 6 }, succeeded: true },
    { name: '>= /a/; one create rev does not fit', compare: { target: 'CREATE', result: 'LESS', key: b('/a/'), rangeEnd: FROM_KEY, createRevision: 5 }, succeeded: false },
    { name: 'prefix /a/*; all create revs fit', compare: { target: 'CREATE', result: 'LESS', key: b('/a/'), rangeEnd: b('/a0'), createRevision: 5 }, succeeded: true },
    { name: 'prefix /a/*; one create rev does not fit', compare: { target: 'CREATE', result: 'LESS', key: b('/a/'), rangeEnd: b('/a0'), createRevision: 4 }, succeeded: false },
    { name: 'does not exist, does not succeed', compare: { target: 'VALUE', result: 'EQUAL', key: b('/b/'), rangeEnd: b('/b0'), value: b('x') }, succeeded: false },
    { name: 'all keys are leased (none is)', compare: { target: 'LEASE', result: 'GREATER', key: b('/a/'), rangeEnd: b('/a0'), lease: 0n }, succeeded: false },
    { name: 'no keys are leased', compare: { target: 'LEASE', result: 'EQUAL', key: b('/a/'), rangeEnd: b('/a0'), lease: 0n }, succeeded: true },
    { name: 'empty range compares as zero', compare: { target: 'VERSION', result: 'EQUAL', key: b('/z/'), rangeEnd: b('/z0'), version: 0 }, succeeded: true },
    { name: 'every key has the value', compare: { target: 'VALUE', result: 'EQUAL', key: b('/a/'), rangeEnd: b('/a0'), value: b('x') }, succeeded: true },
  ];
  for (const row of table) {
    it(row.name, () => {
      expect(store.txn({ compare: [row.compare], success: [], failure: [] }).succeeded).toBe(row.succeeded);
    });
  }
});

describe('Txn branches and nesting (etcd TestV3TxnNestedPath, executeTxn)', () => {
  it('runs the failure branch when a compare fails, answering in request order', () => {
    const store = newStore();
    const response = store.txn({ compare: [versionIs('k', 1)], success: [put('s')], failure: [put('f'), get('f'), del('nothing')] });
    expect(response.succeeded).toBe(false);
    expect(response.responses.map((op) => op.type)).toEqual(['put', 'range', 'deleteRange']);
    expect(keysOf(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).kvs)).toEqual(['f']);
  });

  it('follows a random path through 10 nested txns; nested headers carry revision 0', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }), (path) => {
        const store = newStore();
        const build = (depth: number): TxnRequest => {
          if (depth === path.length) return { compare: [], success: [put(`leaf${depth}`)], failure: [] };
          const next = txnOp(build(depth + 1));
          return path[depth]!
            ? { compare: [versionIs('k', 0)], success: [next], failure: [] }
            : { compare: [versionIs('k', 1)], success: [], failure: [next] };
        };
        const top = store.txn(build(0));
        let current: TxnResponse = top;
        for (const [depth, expected] of path.entries()) {
          expect(current.succeeded).toBe(expected);
          expect(current.revision).toBe(depth === 0 ? 2 : 0);
          const inner = current.responses[0]!;
          if (inner.type !== 'txn') throw new Error('expected a nested txn response');
          current = inner.response;
        }
        expect(store.range({ key: b('leaf10') }).count).toBe(1);
      }),
      { numRuns: 50 },
    );
  });

  it('evaluates nested compares against the state before the txn, not after earlier writes', () => {
    const store = newStore();
    const response = store.txn({
      compare: [],
      success: [put('k'), txnOp({ compare: [versionIs('k', 0)], success: [put('saw-empty')], failure: [put('saw-put')] })],
      failure: [],
    });
    const nested = response.responses[1]!;
    expect(nested.type === 'txn' && nested.response.succeeded).toBe(true);
    expect(keysOf(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).kvs)).toEqual(['k', 'saw-empty']);
  });
});

describe('Txn apply-time checks (etcd checkTxn; TestV3TxnInvalidRange)', () => {
  it('a range at a future or compacted revision fails the whole txn before any change', () => {
    const store = newStore();
    putAll(store, ['foo', 'foo', 'foo']); // 2, 3, 4
    store.compact(2);
    const txn = (revision: number): TxnRequest => ({ compare: [], success: [put('foo', 'bar'), get('foo', { revision })], failure: [] });
    // Revision 5 would exist after the put, but etcd checks against the state before the txn.
    expect(codeOf(() => store.txn(txn(5)))).toBe('ERR_KV_FUTURE_REVISION');
    expect(codeOf(() => store.txn(txn(100)))).toBe('ERR_KV_FUTURE_REVISION');
    expect(codeOf(() => store.txn(txn(1)))).toBe('ERR_KV_COMPACTED');
    expect(store.currentRevision).toBe(4);
    expect(store.txn(txn(4)).responses[1]).toMatchObject({ type: 'range', response: { revision: 5, count: 1 } });
  });

  it('is atomic: a failing check late in the branch leaves no change behind', () => {
    const leases = new LeaseSet();
    const store = newStore({ leases });
    const before = store.hash();
    expect(codeOf(() => store.txn({ compare: [], success: [put('a'), txnOp({ compare: [], success: [put('b', 'v', { lease: 99n })], failure: [] })], failure: [] }))).toBe(
      'ERR_KV_LEASE_NOT_FOUND',
    );
    expect(store.hash()).toBe(before);
    expect(store.currentRevision).toBe(1);
  });

  it('accepts a put inside its own from-key delete, as etcd does (the delete runs first, the put wins)', () => {
    const store = newStore();
    putAll(store, ['a', 'b']);
    const response = store.txn({ compare: [], success: [del('a', FROM_KEY), put('b', 'new')], failure: [] });
    expect(response.revision).toBe(4);
    expect(store.range({ key: b('b') }).kvs[0]).toMatchObject({ value: b('new'), version: 1, createRevision: 4 });
    expect(store.range({ key: b('a') }).count).toBe(0);
  });

  it('fails with key not found, before any change, an ignore_value put whose key an earlier from-key delete removed (etcd panics here)', () => {
    const store = newStore();
    putAll(store, ['a', 'b']);
    const before = store.hash();
    const ignore: RequestOp = { type: 'put', request: { key: b('b'), ignoreValue: true } };
    expect(codeOf(() => store.txn({ compare: [], success: [del('a', FROM_KEY), ignore], failure: [] }))).toBe('ERR_KV_KEY_NOT_FOUND');
    expect(store.hash()).toBe(before);
    // In the other order the put keeps the value and the delete then removes the key.
    store.txn({ compare: [], success: [ignore, del('a', FROM_KEY)], failure: [] });
    expect(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).count).toBe(0);
  });
});
