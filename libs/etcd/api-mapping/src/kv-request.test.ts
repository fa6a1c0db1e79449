import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RangeRequest__Output, TxnRequest__Output } from '@ward/etcd/proto';
import { isWireError, type WireErrorName } from '@ward/etcd/wire-errors';
import { ApiMappingError } from './errors';
import {
  compactionRequestFromProto,
  compactionRequestToProto,
  deleteRangeRequestFromProto,
  deleteRangeRequestToProto,
  putRequestFromProto,
  putRequestToProto,
  rangeRequestFromProto,
  rangeRequestToProto,
  txnRequestFromProto,
  txnRequestToProto,
} from './kv-request';
import { deleteRangeRequest, normalize, putRequest, rangeRequest, safeInt, txnRequest } from './test/arbitraries';
import { requestViaWire } from './test/wire';

const b = (text: string): Buffer => Buffer.from(text);

/** A decoded request as grpc-js would hand it over: through the real serializer from a sparse object. */
function decoded<T>(method: string, sparse: object): T {
  return requestViaWire<T>('KV', method, sparse);
}

function wireName(run: () => unknown): WireErrorName | 'ok' | string {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (isWireError(error)) return error.wireName;
    if (error instanceof ApiMappingError) return error.code;
    throw error;
  }
}

const put = (key: string, extra: object = {}) => ({ request_put: { key: b(key), ...extra } });
const del = (key: string, rangeEnd?: string) => ({ request_delete_range: { key: b(key), ...(rangeEnd === undefined ? {} : { range_end: b(rangeEnd) }) } });
const range = (key: string, extra: object = {}) => ({ request_range: { key: b(key), ...extra } });
const txn = (success: object[], failure: object[] = [], compare: object[] = []) => ({ request_txn: { compare, success, failure } });

describe('KV request validation (etcd v3rpc key.go)', () => {
  const cases: { name: string; method: string; request: object; expected: WireErrorName | 'ok' | string }[] = [
    { name: 'range with a key', method: 'Range', request: { key: b('a') }, expected: 'ok' },
    { name: 'range without a key', method: 'Range', request: { range_end: b('z') }, expected: 'EmptyKey' },
    { name: 'range with an unknown sort order number', method: 'Range', request: { key: b('a'), sort_order: 7 }, expected: 'InvalidSortOption' },
    { name: 'range with an unknown sort target number', method: 'Range', request: { key: b('a'), sort_target: 9 }, expected: 'InvalidSortOption' },
    { name: 'empty key is reported before a bad sort option', method: 'Range', request: { sort_order: 7 }, expected: 'EmptyKey' },
    { name: 'put', method: 'Put', request: { key: b('a'), value: b('v') }, expected: 'ok' },
    { name: 'put without a key', method: 'Put', request: { value: b('v') }, expected: 'EmptyKey' },
    { name: 'put ignore_value with a value', method: 'Put', request: { key: b('a'), value: b('v'), ignore_value: true }, expected: 'ValueProvided' },
    { name: 'put ignore_value without a value', method: 'Put', request: { key: b('a'), ignore_value: true }, expected: 'ok' },
    { name: 'put ignore_lease with a lease', method: 'Put', request: { key: b('a'), lease: '5', ignore_lease: true }, expected: 'LeaseProvided' },
    { name: 'delete without a key', method: 'DeleteRange', request: { range_end: b('z') }, expected: 'EmptyKey' },
    { name: 'txn with a put and a range of one key', method: 'Txn', request: { success: [put('a'), range('a')] }, expected: 'ok' },
    { name: 'txn putting one key twice', method: 'Txn', request: { success: [put('a'), put('a')] }, expected: 'DuplicateKey' },
    { name: 'txn putting a deleted key', method: 'Txn', request: { success: [del('a'), put('a')] }, expected: 'DuplicateKey' },
    { name: 'txn putting a key inside a deleted range', method: 'Txn', request: { success: [del('a', 'c'), put('b')] }, expected: 'DuplicateKey' },
    { name: 'txn putting a key just past a deleted range', method: 'Txn', request: { success: [del('a', 'c'), put('c')] }, expected: 'ok' },
    { name: 'txn duplicate across branches is fine', method: 'Txn', request: { success: [put('a')], failure: [put('a')] }, expected: 'ok' },
    { name: 'nested txn repeating a parent put', method: 'Txn', request: { success: [put('a'), txn([put('a')])] }, expected: 'DuplicateKey' },
    { name: 'nested then/else putting one key', method: 'Txn', request: { success: [txn([put('a')], [put('a')])] }, expected: 'ok' },
    { name: 'nested else putting a key of an earlier sibling', method: 'Txn', request: { success: [txn([put('b')], []), txn([], [put('b')])] }, expected: 'DuplicateKey' },
    { name: 'txn compare without a key', method: 'Txn', request: { compare: [{ target: 'Version', result: 'Equal', version: '1' }] }, expected: 'EmptyKey' },
    { name: 'txn op with no request set', method: 'Txn', request: { success: [{}] }, expected: 'KeyNotFound' },
    { name: 'txn nested range without a key', method: 'Txn', request: { failure: [txn([{ request_range: { limit: '1' } }])] }, expected: 'EmptyKey' },
    { name: 'txn nested range with a bad sort option', method: 'Txn', request: { success: [range('a', { sort_target: 8 })] }, expected: 'InvalidSortOption' },
    { name: 'txn with 129 compares', method: 'Txn', request: { compare: Array.from({ length: 129 }, () => ({ key: b('k'), target: 'Mod', mod_revision: '1' })) }, expected: 'TooManyOps' },
    { name: 'txn with 128 compares', method: 'Txn', request: { compare: Array.from({ length: 128 }, () => ({ key: b('k'), target: 'Mod', mod_revision: '1' })) }, expected: 'ok' },
    {
      name: 'too many ops is reported before an empty key later on',
      method: 'Txn',
      request: { success: Array.from({ length: 129 }, (_, i) => range(i === 128 ? '' : 'k')) },
      expected: 'TooManyOps',
    },
    {
      name: 'nested txn gets only the budget its parent left',
      method: 'Txn',
      request: { success: [...Array.from({ length: 100 }, (_, i) => range(`k${i}`)), txn(Array.from({ length: 29 }, (_, i) => range(`n${i}`)))] },
      expected: 'TooManyOps',
    },
    { name: 'compare with an unknown result number', method: 'Txn', request: { compare: [{ key: b('k'), result: 9, target: 'Mod' }] }, expected: 'ERR_API_MAPPING_INVALID_FIELD' },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.expected}`, () => {
      const map: Record<string, (request: never) => unknown> = {
        Range: rangeRequestFromProto,
        Put: putRequestFromProto,
        DeleteRange: deleteRangeRequestFromProto,
        Txn: txnRequestFromProto,
      };
      expect(wireName(() => map[c.method]!(decoded(c.method, c.request) as never))).toBe(c.expected);
    });
  }

  it('honours a configured maxTxnOps', () => {
    const request = decoded<TxnRequest__Output>('Txn', { success: [range('a'), range('b'), range('c')] });
    expect(wireName(() => txnRequestFromProto(request, { maxTxnOps: 2, maxTxnOpsTotal: 100 }))).toBe('TooManyOps');
    expect(wireName(() => txnRequestFromProto(request, { maxTxnOps: 3, maxTxnOpsTotal: 100 }))).toBe('ok');
  });
});

describe('KV request field mapping', () => {
  it('maps every Range field, enum names in etcd3 PascalCase, int64 strings to numbers', () => {
    const request = rangeRequestFromProto(
      decoded<RangeRequest__Output>('Range', {
        key: b('a'),
        range_end: b('b'),
        limit: '10',
        revision: '-3',
        sort_order: 'Descend',
        sort_target: 'Mod',
        serializable: true,
        keys_only: true,
        count_only: false,
        min_mod_revision: '1',
        max_mod_revision: '9007199254740991',
        min_create_revision: '2',
        max_create_revision: '3',
      }),
    );
    expect(normalize(request)).toEqual(
      normalize({
        key: b('a'),
        rangeEnd: b('b'),
        limit: 10,
        revision: -3,
        sortOrder: 'DESCEND',
        sortTarget: 'MOD',
        serializable: true,
        keysOnly: true,
        countOnly: false,
        minModRevision: 1,
        maxModRevision: Number.MAX_SAFE_INTEGER,
        minCreateRevision: 2,
        maxCreateRevision: 3,
      }),
    );
  });

  it('accepts etcd upper-case and numeric enum spellings too (JSON gateway objects)', () => {
    const request = rangeRequestFromProto({ ...decoded<RangeRequest__Output>('Range', { key: b('a') }), sort_order: 'ASCEND' as never, sort_target: 3 as never });
    expect([request.sortOrder, request.sortTarget]).toEqual(['ASCEND', 'MOD']);
  });

  it('keeps a lease id exact over all 64 bits', () => {
    const request = putRequestFromProto(decoded('Put', { key: b('k'), lease: '-9223372036854775808' }));
    expect(request.lease).toBe(-(2n ** 63n));
  });

  it('reads a compare operand from the field its target names, zero when the oneof holds another', () => {
    const request = txnRequestFromProto(
      decoded('Txn', {
        compare: [
          { key: b('k'), target: 'Mod', result: 'Less', mod_revision: '7' },
          { key: b('k'), target: 'Mod', result: 'Equal', value: b('x') },
          { key: b('k'), target: 'Value', result: 'NotEqual' },
          { key: b('k'), target: 'Lease', result: 'Greater', lease: '12' },
        ],
      }),
    );
    expect(normalize(request.compare)).toEqual(
      normalize([
        { result: 'LESS', key: b('k'), rangeEnd: new Uint8Array(0), target: 'MOD', modRevision: 7 },
        { result: 'EQUAL', key: b('k'), rangeEnd: new Uint8Array(0), target: 'MOD', modRevision: 0 },
        { result: 'NOT_EQUAL', key: b('k'), rangeEnd: new Uint8Array(0), target: 'VALUE', value: new Uint8Array(0) },
        { result: 'GREATER', key: b('k'), rangeEnd: new Uint8Array(0), target: 'LEASE', lease: 12n },
      ]),
    );
  });

  it('refuses an int64 that is not a decimal integer', () => {
    expect(wireName(() => rangeRequestFromProto({ ...decoded<RangeRequest__Output>('Range', { key: b('a') }), limit: '1.5' }))).toBe('ERR_API_MAPPING_INVALID_FIELD');
    expect(wireName(() => rangeRequestFromProto({ ...decoded<RangeRequest__Output>('Range', { key: b('a') }), limit: '99999999999999999999' }))).toBe('ERR_API_MAPPING_INVALID_FIELD');
  });

  it('maps Compaction both ways', () => {
    expect(compactionRequestFromProto(requestViaWire('KV', 'Compact', { revision: '42', physical: true }))).toEqual({ revision: 42, physical: true });
    expect(compactionRequestToProto({ revision: 42, physical: true })).toEqual({ revision: '42', physical: true });
  });
});

describe('KV requests: domain → proto → bytes → proto → domain is identity', () => {
  it('Range', () => {
    fc.assert(fc.property(rangeRequest, (r) => { expect(normalize(rangeRequestFromProto(requestViaWire('KV', 'Range', rangeRequestToProto(r))))).toEqual(normalize(r)); }));
  });
  it('Put', () => {
    fc.assert(fc.property(putRequest, (r) => { expect(normalize(putRequestFromProto(requestViaWire('KV', 'Put', putRequestToProto(r))))).toEqual(normalize(r)); }));
  });
  it('DeleteRange', () => {
    fc.assert(
      fc.property(deleteRangeRequest, (r) => {
        expect(normalize(deleteRangeRequestFromProto(requestViaWire('KV', 'DeleteRange', deleteRangeRequestToProto(r))))).toEqual(normalize(r));
      }),
    );
  });
  it('Txn (nested, every compare target)', () => {
    fc.assert(fc.property(txnRequest, (r) => { expect(normalize(txnRequestFromProto(requestViaWire('KV', 'Txn', txnRequestToProto(r))))).toEqual(normalize(r)); }), {
      numRuns: 200,
    });
  });
  it('Compaction', () => {
    fc.assert(
      fc.property(safeInt, fc.boolean(), (revision, physical) => {
        expect(compactionRequestFromProto(requestViaWire('KV', 'Compact', compactionRequestToProto({ revision, physical })))).toEqual({ revision, physical });
      }),
    );
  });
});
