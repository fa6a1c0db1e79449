import { describe, expect, it } from 'vitest';
import { MAX_NODE_ID, compareNodeIds, formatNodeId, isNodeId, parseNodeId } from './ids';

describe('node ids', () => {
  it('are bigints in [1, 2^64-1], printed in hex as etcd prints member ids', () => {
    const etcdMember = 0x8e9e05c52164694dn;
    expect(isNodeId(etcdMember)).toBe(true);
    expect(formatNodeId(etcdMember)).toBe('8e9e05c52164694d');
    expect(parseNodeId('8e9e05c52164694d')).toBe(etcdMember);
    expect(parseNodeId('0x8e9e05c52164694d')).toBe(etcdMember);
    expect(parseNodeId('10276657743932975437', 10)).toBe(etcdMember);
    expect(parseNodeId(formatNodeId(MAX_NODE_ID))).toBe(MAX_NODE_ID);
  });

  it('reject zero, negatives, overflow and non-bigints', () => {
    for (const bad of [0n, -1n, MAX_NODE_ID + 1n, 1, '1', undefined]) expect(isNodeId(bad)).toBe(false);
    for (const text of ['', '0', 'g1', '1ffffffffffffffff', ' 1', '-1']) expect(() => parseNodeId(text)).toThrow(TypeError);
    expect(() => parseNodeId('18446744073709551616', 10)).toThrow(TypeError);
  });

  it('order numerically', () => {
    expect([10n, 2n, MAX_NODE_ID, 1n].sort(compareNodeIds)).toEqual([1n, 2n, 10n, MAX_NODE_ID]);
  });
});
