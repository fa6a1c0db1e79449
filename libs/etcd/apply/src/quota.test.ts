import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { LEASE_GRANT_COST_BYTES, PUT_OVERHEAD_BYTES, quotaCostBytes } from './quota';

const put = (key: string, value: string) => ({ type: 'put' as const, request: { key: utf8(key), value: utf8(value) } });

describe('quotaCostBytes (etcd quota.go)', () => {
  it('charges a put its key, its value and 256 bytes', () => {
    expect(quotaCostBytes(put('foo', 'hello'))).toBe(PUT_OVERHEAD_BYTES + 3 + 5);
    expect(quotaCostBytes({ type: 'put', request: { key: utf8('k'), ignoreValue: true } })).toBe(PUT_OVERHEAD_BYTES + 1);
  });

  it('charges a txn its costlier branch, counting nested puts', () => {
    const cost = quotaCostBytes({
      type: 'txn',
      request: {
        compare: [],
        success: [put('a', 'xx'), { type: 'deleteRange', request: { key: utf8('b') } }],
        failure: [put('a', 'x'), { type: 'txn', request: { compare: [], success: [put('nested', '1234567890')], failure: [] } }],
      },
    });
    expect(cost).toBe(PUT_OVERHEAD_BYTES + 2 + PUT_OVERHEAD_BYTES + 6 + 10);
    expect(quotaCostBytes({ type: 'txn', request: { compare: [], success: [], failure: [] } })).toBe(0);
  });

  it('charges a lease grant 64 bytes and leaves everything else unchecked', () => {
    expect(quotaCostBytes({ type: 'leaseGrant', request: { id: 0n, ttlSeconds: 10 } })).toBe(LEASE_GRANT_COST_BYTES);
    expect(quotaCostBytes({ type: 'deleteRange', request: { key: utf8('a') } })).toBeUndefined();
    expect(quotaCostBytes({ type: 'compaction', request: { revision: 1, physical: false } } as never)).toBeUndefined();
  });
});
