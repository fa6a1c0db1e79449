import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DeleteSpans } from './delete-spans';
import { isTxnReadOnly, validateTxnRequest } from './request-validate';
import { FROM_KEY, b, newStore } from './testing';
import type { RequestOp, TxnRequest } from './types';

const limits = { maxTxnOps: 128, maxTxnOpsTotal: 10_000 };

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

const validate = (success: RequestOp[], failure: RequestOp[] = []): string | undefined =>
  codeOf(() => validateTxnRequest({ compare: [], success, failure }, limits));

describe('Txn duplicate keys (etcd TestV3TxnDuplicateKeys, v3rpc checkIntervals)', () => {
  const putReq: RequestOp = { type: 'put', request: { key: b('abc'), value: b('def') } };
  const delKeyReq: RequestOp = { type: 'deleteRange', request: { key: b('abc') } };
  const delInRangeReq: RequestOp = { type: 'deleteRange', request: { key: b('a'), rangeEnd: b('b') } };
  const delOutOfRangeReq: RequestOp = { type: 'deleteRange', request: { key: b('abb'), rangeEnd: b('abc') } };
  const txnDelReq: RequestOp = { type: 'txn', request: { compare: [], success: [delInRangeReq], failure: [] } };
  const txnDelReqTwoSide: RequestOp = { type: 'txn', request: { compare: [], success: [delInRangeReq], failure: [delInRangeReq] } };
  const txnPutReq: RequestOp = { type: 'txn', request: { compare: [], success: [putReq], failure: [] } };
  const txnPutReqTwoSide: RequestOp = { type: 'txn', request: { compare: [], success: [putReq], failure: [putReq] } };

  const table: { name: string; success: RequestOp[]; duplicate: boolean }[] = [
    { name: 'put, put', success: [putReq, putReq], duplicate: true },
    { name: 'put, delete of the key', success: [putReq, delKeyReq], duplicate: true },
    { name: 'put, delete of a range holding the key', success: [putReq, delInRangeReq], duplicate: true },
    { name: 'Then(Put(a), Then(Del(a)))', success: [putReq, txnDelReq], duplicate: true },
    { name: 'Then(Del(a), Then(Put(a)))', success: [delInRangeReq, txnPutReq], duplicate: true },
    { name: 'two nested txns putting a on both sides', success: [txnPutReqTwoSide, txnPutReqTwoSide], duplicate: true },
    { name: 'Then(Del(x), (Then(Put(a)), Else(Put(a))))', success: [delOutOfRangeReq, txnPutReqTwoSide], duplicate: false },
    { name: 'Then(Then(Del(a)), (Then(Del(a)), Else(Del(a))))', success: [txnDelReq, txnDelReqTwoSide], duplicate: false },
    { name: 'deletes may overlap', success: [delKeyReq, delInRangeReq, delKeyReq, delInRangeReq], duplicate: false },
    { name: 'put, delete of a range ending at the key', success: [putReq, delOutOfRangeReq], duplicate: false },
  ];
  for (const row of table) {
    it(row.name, () => {
      expect(validate(row.success)).toBe(row.duplicate ? 'ERR_KV_DUPLICATE_KEY' : undefined);
    });
  }

  it('checks each branch on its own: a put in success and the same put in failure is fine', () => {
    expect(validate([putReq], [putReq])).toBeUndefined();
  });

  it('a from-key delete never conflicts with a put (etcd builds [key, "\\x00"), which holds no key)', () => {
    expect(validate([{ type: 'deleteRange', request: { key: b('a'), rangeEnd: FROM_KEY } }, putReq])).toBeUndefined();
    expect(validate([putReq, { type: 'deleteRange', request: { key: b('a'), rangeEnd: FROM_KEY } }])).toBeUndefined();
  });

  it('an inverted delete range holds no key', () => {
    expect(validate([{ type: 'deleteRange', request: { key: b('b'), rangeEnd: b('a') } }, putReq])).toBeUndefined();
  });

  it('sibling nested txns: a put after a nested delete of its key is a duplicate, a put before it is not (etcd checks puts against the deletes seen so far)', () => {
    expect(validate([txnDelReq, txnPutReq])).toBe('ERR_KV_DUPLICATE_KEY');
    expect(validate([txnPutReq, txnDelReq])).toBeUndefined();
  });

  it('the store rejects duplicates before changing anything', () => {
    const store = newStore();
    expect(codeOf(() => store.txn({ compare: [], success: [putReq, putReq], failure: [] }))).toBe('ERR_KV_DUPLICATE_KEY');
    expect(store.currentRevision).toBe(1);
  });
});

describe('Txn operation limits (etcd TestV3TxnTooManyOps, checkTxnRequest)', () => {
  let counter = 0;
  const uniqueKey = () => b(`key-${++counter}`);
  const addCompare = (txn: TxnRequest): TxnRequest => ({ ...txn, compare: [...txn.compare, { target: 'CREATE', result: 'GREATER', key: uniqueKey(), createRevision: 0 }] });
  const addSuccess = (txn: TxnRequest): TxnRequest => ({ ...txn, success: [...txn.success, { type: 'put', request: { key: uniqueKey(), value: b('bar') } }] });
  const addFailure = (txn: TxnRequest): TxnRequest => ({ ...txn, failure: [...txn.failure, { type: 'put', request: { key: uniqueKey(), value: b('bar') } }] });
  const addTxn = (txn: TxnRequest): TxnRequest => ({ ...txn, success: [...txn.success, { type: 'txn', request: addSuccess({ compare: [], success: [], failure: [] }) }] });
  const build = (add: (txn: TxnRequest) => TxnRequest, count: number): TxnRequest => {
    let txn: TxnRequest = { compare: [], success: [], failure: [] };
    for (let i = 0; i < count; i++) txn = add(txn);
    return txn;
  };

  for (const [name, add] of [
    ['compares', addCompare],
    ['success ops', addSuccess],
    ['failure ops', addFailure],
    ['nested txns', addTxn],
  ] as const) {
    it(`129 ${name} exceed the default 128; 128 do not`, () => {
      expect(codeOf(() => validateTxnRequest(build(add, 129), limits))).toBe('ERR_KV_TOO_MANY_OPS');
      if (add !== addTxn) expect(codeOf(() => validateTxnRequest(build(add, 128), limits))).toBeUndefined();
    });
  }

  it('gives a nested txn only the budget its parent left (128 nested txns of one op each are too many)', () => {
    // The parent uses 128 of 128, so each nested txn may hold 0 operations.
    expect(codeOf(() => validateTxnRequest(build(addTxn, 128), limits))).toBe('ERR_KV_TOO_MANY_OPS');
    expect(codeOf(() => validateTxnRequest(build(addTxn, 64), limits))).toBeUndefined();
  });

  it('honours a configured limit', () => {
    expect(codeOf(() => validateTxnRequest(build(addSuccess, 5), { maxTxnOps: 4, maxTxnOpsTotal: 100 }))).toBe('ERR_KV_TOO_MANY_OPS');
    const store = newStore({ maxTxnOps: 4, maxTxnOpsTotal: 100 });
    expect(codeOf(() => store.txn(build(addSuccess, 5)))).toBe('ERR_KV_TOO_MANY_OPS');
    expect(store.txn(build(addSuccess, 4)).revision).toBe(2);
  });

  it('bounds the total over every nesting level, and the nesting depth', () => {
    // 64 nested txns of 64 ops pass the per-level budget: 64 + 64 x 64 = 4160 operations.
    const wide: TxnRequest = {
      compare: [],
      success: Array.from({ length: 64 }, () => ({ type: 'txn' as const, request: build(addSuccess, 64) })),
      failure: [],
    };
    expect(codeOf(() => validateTxnRequest(wide, limits))).toBeUndefined();
    expect(codeOf(() => validateTxnRequest(wide, { maxTxnOps: 128, maxTxnOpsTotal: 4000 }))).toBe('ERR_KV_TOO_MANY_OPS');
    let deep: TxnRequest = { compare: [], success: [], failure: [] };
    for (let i = 0; i < 300; i++) deep = { compare: [], success: [{ type: 'txn', request: deep }], failure: [] };
    expect(codeOf(() => validateTxnRequest(deep, { maxTxnOps: 1000, maxTxnOpsTotal: 100_000 }))).toBe('ERR_KV_TOO_MANY_OPS');
  });
});

describe('Txn request checks (etcd checkTxnRequest / checkRequestOp)', () => {
  it('rejects an empty compare key, and every nested request error', () => {
    expect(codeOf(() => validateTxnRequest({ compare: [{ target: 'VERSION', result: 'EQUAL', key: new Uint8Array(0), version: 0 }], success: [], failure: [] }, limits))).toBe(
      'ERR_KV_EMPTY_KEY',
    );
    expect(validate([{ type: 'put', request: { key: new Uint8Array(0) } }])).toBe('ERR_KV_EMPTY_KEY');
    expect(validate([], [{ type: 'range', request: { key: b('a'), sortOrder: 'UP' as never } }])).toBe('ERR_KV_INVALID_SORT_OPTION');
    expect(validate([{ type: 'put', request: { key: b('a'), value: b('x'), ignoreValue: true } }])).toBe('ERR_KV_VALUE_PROVIDED');
    expect(validate([{ type: 'txn', request: { compare: [], success: [{ type: 'put', request: { key: b('a'), lease: 1n, ignoreLease: true } }], failure: [] } }])).toBe(
      'ERR_KV_LEASE_PROVIDED',
    );
    expect(validate([{ type: 'deleteRange', request: { key: new Uint8Array(0) } }])).toBe('ERR_KV_EMPTY_KEY');
  });

  it('treats malformed numbers and operands from untyped callers as caller bugs (TypeError)', () => {
    const store = newStore();
    expect(() => store.range({ key: b('a'), revision: Number.NaN })).toThrow(TypeError);
    expect(() => store.range({ key: b('a'), limit: 1.5 })).toThrow(TypeError);
    expect(() => store.put({ key: b('a'), lease: 5 as unknown as bigint })).toThrow(TypeError);
    const bad = (compare: unknown) => () => store.txn({ compare: [compare as never], success: [], failure: [] });
    expect(bad({ target: 'MOD', result: 'EQUAL', key: b('a') })).toThrow(TypeError);
    expect(bad({ target: 'LEASE', result: 'EQUAL', key: b('a'), lease: 1 })).toThrow(TypeError);
    expect(bad({ target: 'VALUE', result: 'EQUAL', key: b('a'), value: 'x' })).toThrow(TypeError);
    expect(bad({ target: 'SIZE', result: 'EQUAL', key: b('a') })).toThrow(TypeError);
    expect(bad({ target: 'VERSION', result: 'ABOUT', key: b('a'), version: 1 })).toThrow(TypeError);
    // An int64 beyond 2^53 is still an integer: etcd answers it as a future revision.
    expect(() => store.range({ key: b('a'), revision: 2 ** 62 })).toThrowError(expect.objectContaining({ code: 'ERR_KV_FUTURE_REVISION' }));
    expect(() => store.readEvents({ fromRevision: 0, key: b('a'), maxEvents: 1 })).toThrow(TypeError);
    expect(store.currentRevision).toBe(1);
  });

  it('answers an operation with no request with key not found (etcd checkRequestOp default)', () => {
    expect(validate([{ type: 'unset' } as unknown as RequestOp])).toBe('ERR_KV_KEY_NOT_FOUND');
  });

  it('isTxnReadOnly: only ranges on both top-level branches (etcd IsTxnReadonly)', () => {
    expect(isTxnReadOnly({ compare: [], success: [{ type: 'range', request: { key: b('a') } }], failure: [] })).toBe(true);
    expect(isTxnReadOnly({ compare: [], success: [], failure: [{ type: 'deleteRange', request: { key: b('a') } }] })).toBe(false);
  });
});

describe('DeleteSpans against a naive list of intervals', () => {
  it('answers holds() like a linear scan for random adds', () => {
    const key = fc.array(fc.constantFrom('a', 'b', 'c', '\u0000'), { maxLength: 3 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(fc.array(fc.tuple(key, key), { maxLength: 30 }), fc.array(key, { maxLength: 20 }), (intervals, probes) => {
        const spans = new DeleteSpans();
        for (const [start, end] of intervals) spans.add(start, end);
        for (const probe of probes) {
          const naive = intervals.some(([start, end]) => start <= probe && probe < end);
          expect(spans.holds(probe)).toBe(naive);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('reads a delete with an empty range end as the single key', () => {
    const spans = new DeleteSpans();
    spans.addDelete('abc', '');
    expect(spans.holds('abc')).toBe(true);
    expect(spans.holds('abc\u0000')).toBe(false);
    expect(spans.holds('ab')).toBe(false);
  });
});
