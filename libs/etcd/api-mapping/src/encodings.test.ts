import { describe, expect, it } from 'vitest';
import { isWireError } from '@ward/etcd/wire-errors';
import { SORT_ORDER_NAMES, enumFromProto, enumNumber, enumToProto } from './enum-names';
import { ApiMappingError } from './errors';
import { int64ToBigInt, int64ToNumber, toInt64String, uint64ToBigInt } from './int64';
import { leaseGrantOperation, leaseRevokeOperation } from './lease';
import { DEFAULT_MAX_REQUEST_BYTES, checkRequestSize, encodeProposal } from './request-size';

describe('int64 / uint64 fields', () => {
  it('keeps all 64 bits as bigints and refuses what is out of range or not an integer', () => {
    expect(int64ToBigInt('9223372036854775807', 'f')).toBe(2n ** 63n - 1n);
    expect(uint64ToBigInt('18446744073709551615', 'f')).toBe(2n ** 64n - 1n);
    expect(() => int64ToBigInt('9223372036854775808', 'f')).toThrow(ApiMappingError);
    expect(() => uint64ToBigInt('-1', 'f')).toThrow(ApiMappingError);
    expect(() => int64ToBigInt('0x10', 'f')).toThrow(ApiMappingError);
    expect(() => int64ToBigInt(1.5, 'f')).toThrow(ApiMappingError);
  });

  it('reads absent fields as zero and writes decimal strings', () => {
    expect(int64ToNumber(undefined, 'f')).toBe(0);
    expect(int64ToNumber('', 'f')).toBe(0);
    expect(toInt64String(-42)).toBe('-42');
    expect(toInt64String(2n ** 63n - 1n)).toBe('9223372036854775807');
  });

  it('clamps int64s beyond ±(2^53 − 1) to a safe integer (a future revision stays a future revision)', () => {
    expect(int64ToNumber('9007199254740993', 'f')).toBe(Number.MAX_SAFE_INTEGER);
    expect(int64ToNumber('9223372036854775807', 'f')).toBe(Number.MAX_SAFE_INTEGER);
    expect(int64ToNumber('-9223372036854775808', 'f')).toBe(-Number.MAX_SAFE_INTEGER);
    expect(int64ToNumber('9007199254740991', 'f')).toBe(Number.MAX_SAFE_INTEGER);
    expect(int64ToNumber('-42', 'f')).toBe(-42);
  });
});

describe('enum spellings', () => {
  it('reads PascalCase, upper-case and numbers; writes PascalCase', () => {
    expect(enumFromProto(SORT_ORDER_NAMES, 'Descend')).toBe('DESCEND');
    expect(enumFromProto(SORT_ORDER_NAMES, 'DESCEND')).toBe('DESCEND');
    expect(enumFromProto(SORT_ORDER_NAMES, 2)).toBe('DESCEND');
    expect(enumFromProto(SORT_ORDER_NAMES, 3)).toBeUndefined();
    expect(enumToProto(SORT_ORDER_NAMES, 'ASCEND')).toBe('Ascend');
    expect(enumNumber(SORT_ORDER_NAMES, 'NONE')).toBe(0);
  });
});

describe('request size (etcd --max-request-bytes)', () => {
  const put = (valueBytes: number) => ({
    header: { id: 1n, username: '', authRevision: 0 },
    operation: { type: 'put' as const, request: { key: new Uint8Array([1]), value: new Uint8Array(valueBytes) } },
  });

  it('encodes a proposal within the limit and refuses a larger one with RequestTooLarge', () => {
    expect(encodeProposal(put(1000)).length).toBeGreaterThan(1000);
    const refused = (() => {
      try {
        encodeProposal(put(DEFAULT_MAX_REQUEST_BYTES));
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(isWireError(refused, 'RequestTooLarge')).toBe(true);
    expect(isWireError(catchError(() => encodeProposal(put(200), 100)), 'RequestTooLarge')).toBe(true);
    expect(() => checkRequestSize(100, 100)).not.toThrow();
    expect(isWireError(catchError(() => checkRequestSize(101, 100)), 'RequestTooLarge')).toBe(true);
  });
});

describe('lease requests', () => {
  it('keeps the client’s id; 0 is left for the leader to draw', () => {
    expect(leaseGrantOperation({ ID: '0', TTL: '60' })).toEqual({ type: 'leaseGrant', request: { id: 0n, ttlSeconds: 60 } });
    expect(leaseGrantOperation({ ID: '5', TTL: '60' })).toEqual({ type: 'leaseGrant', request: { id: 5n, ttlSeconds: 60 } });
    expect(isWireError(catchError(() => leaseGrantOperation({ ID: '0', TTL: '9000000001' })), 'LeaseTTLTooLarge')).toBe(true);
    expect(leaseGrantOperation({ ID: '0', TTL: '9000000000' }).request.ttlSeconds).toBe(9_000_000_000);
    expect(leaseRevokeOperation({ ID: '-3' })).toEqual({ type: 'leaseRevoke', request: { id: -3n } });
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}
