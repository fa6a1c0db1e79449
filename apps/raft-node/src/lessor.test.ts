import { describe, expect, it } from 'vitest';
import { Lessor, minLeaseTtlSeconds, type LessorOptions } from './lessor';

class Table {
  readonly ttl = new Map<bigint, number>();
  ttlOf(id: bigint): number | undefined {
    return this.ttl.get(id);
  }
  entries(): Array<[bigint, number]> {
    return [...this.ttl.entries()];
  }
}

const OPTIONS: LessorOptions = { minTtlSeconds: 2, promoteExtendMs: 1000, maxRevokesPerSecond: 1000, reproposeAfterMs: 3000 };

function lessor(options: Partial<LessorOptions> = {}): { lessor: Lessor; table: Table } {
  const table = new Table();
  return { lessor: new Lessor({ ...OPTIONS, ...options }, () => table), table };
}

describe('minLeaseTtlSeconds', () => {
  it('is etcd’s ceil(3 * electionTicks / 2 * tick) in seconds', () => {
    expect(minLeaseTtlSeconds(10, 100)).toBe(2); // 1.5 s → 2 s
    expect(minLeaseTtlSeconds(10, 200)).toBe(3);
    expect(minLeaseTtlSeconds(5, 100)).toBe(1); // 7 ticks × 100 ms = 0.7 s → 1 s
  });
});

describe('Lessor', () => {
  it('raises TTLs below the minimum', () => {
    const { lessor: l } = lessor();
    expect(l.grantTtl(1)).toBe(2);
    expect(l.grantTtl(-5)).toBe(2);
    expect(l.grantTtl(10)).toBe(10);
  });

  it('tracks nothing and expires nothing on a follower', () => {
    const { lessor: l, table } = lessor();
    table.ttl.set(1n, 5);
    l.granted(1n, 5, 0);
    expect(l.trackedCount).toBe(0);
    expect(l.expired(1_000_000)).toEqual([]);
    expect(l.renew(1n, 0)).toEqual({ kind: 'not_primary' });
    expect(l.remainingMs(1n, 0)).toBeUndefined();
  });

  it('expires a granted lease once its TTL has passed, not before', () => {
    const { lessor: l, table } = lessor();
    l.promote(0);
    table.ttl.set(7n, 5);
    l.granted(7n, 5, 1000);
    expect(l.remainingMs(7n, 1000)).toBe(5000);
    expect(l.expired(5999)).toEqual([]);
    expect(l.expired(6000)).toEqual([7n]);
  });

  it('a renewal pushes the deadline to now + TTL', () => {
    const { lessor: l, table } = lessor();
    l.promote(0);
    table.ttl.set(7n, 5);
    l.granted(7n, 5, 0);
    expect(l.renew(7n, 4000)).toEqual({ kind: 'renewed', ttlSeconds: 5 });
    expect(l.expired(8999)).toEqual([]);
    expect(l.remainingMs(7n, 8000)).toBe(1000);
    expect(l.expired(9000)).toEqual([7n]);
  });

  it('does not renew an expired or unknown lease', () => {
    const { lessor: l, table } = lessor();
    l.promote(0);
    table.ttl.set(7n, 5);
    l.granted(7n, 5, 0);
    expect(l.renew(7n, 5000)).toEqual({ kind: 'not_found' });
    expect(l.renew(8n, 0)).toEqual({ kind: 'not_found' });
  });

  it('on promotion gives every lease its TTL plus the extension, whatever happened before', () => {
    const { lessor: l, table } = lessor();
    table.ttl.set(1n, 3).set(2n, 10);
    l.promote(50_000);
    expect(l.remainingMs(1n, 50_000)).toBe(4000);
    expect(l.remainingMs(2n, 50_000)).toBe(11_000);
    expect(l.expired(53_999)).toEqual([]);
    expect(l.expired(54_000)).toEqual([1n]);
  });

  it('forgets every deadline on demotion', () => {
    const { lessor: l, table } = lessor();
    table.ttl.set(1n, 3);
    l.promote(0);
    l.demote();
    expect(l.isPrimary).toBe(false);
    expect(l.trackedCount).toBe(0);
    expect(l.expired(100_000)).toEqual([]);
  });

  it('proposes a revoke again only after the pause, and forgets revoked leases', () => {
    const { lessor: l, table } = lessor();
    l.promote(0);
    table.ttl.set(1n, 2);
    l.granted(1n, 2, 0);
    expect(l.expired(2000)).toEqual([1n]);
    expect(l.expired(4999)).toEqual([]);
    expect(l.expired(5000)).toEqual([1n]);
    table.ttl.delete(1n);
    l.revoked(1n);
    expect(l.expired(100_000)).toEqual([]);
    expect(l.trackedCount).toBe(0);
  });

  it('hands out at most maxRevokesPerSecond leases per second, earliest deadline first', () => {
    const { lessor: l, table } = lessor({ maxRevokesPerSecond: 2 });
    l.promote(0);
    for (const [id, ttl] of [[1n, 4], [2n, 2], [3n, 3]] as const) {
      table.ttl.set(id, ttl);
      l.granted(id, ttl, 0);
    }
    expect(l.expired(10_000)).toEqual([2n, 3n]);
    expect(l.expired(10_500)).toEqual([]);
    expect(l.expired(11_000)).toEqual([1n]);
  });

  it('tracks a lease granted before promotion but applied after it', () => {
    const { lessor: l, table } = lessor();
    l.promote(0);
    table.ttl.set(9n, 4);
    expect(l.remainingMs(9n, 1000)).toBe(4000);
    expect(l.expired(5000)).toEqual([9n]);
  });
});
