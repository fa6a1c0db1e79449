import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KeyRecord } from './key-record';
import { StateDigest, recordDigest } from './state-digest';

const recordArb = fc
  .record({
    key: fc.string({ maxLength: 4 }),
    value: fc.option(fc.string({ maxLength: 4 }), { nil: null }),
    mod: fc.integer({ min: 2, max: 2 ** 40 }),
    sub: fc.integer({ min: 0, max: 5 }),
    version: fc.integer({ min: 1, max: 9 }),
    lease: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  })
  .map(({ key, value, mod, sub, version, lease }) => ({
    key,
    record: value === null ? new KeyRecord(null, mod, sub, 0, 0, 0n, null) : new KeyRecord(value, mod, sub, mod, version, lease, null),
  }));

describe('StateDigest (incremental multiset digest)', () => {
  it('does not depend on the order records were added, and removal undoes addition', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 20 }), fc.array(recordArb, { maxLength: 5 }), (records, extra) => {
        const forward = new StateDigest();
        const backward = new StateDigest();
        for (const { key, record } of records) forward.add(key, record);
        for (const { key, record } of [...records].reverse()) backward.add(key, record);
        expect(forward.hex(5, -1, 1)).toBe(backward.hex(5, -1, 1));
        const before = forward.hex(5, -1, 1);
        for (const { key, record } of extra) forward.add(key, record);
        for (const { key, record } of extra) forward.remove(key, record);
        expect(forward.hex(5, -1, 1)).toBe(before);
      }),
    );
  });

  it('tells apart every field of a record and the revision counters', () => {
    const base = new KeyRecord('v', 10, 0, 3, 2, 7n, null);
    const variants = [
      new KeyRecord('w', 10, 0, 3, 2, 7n, null),
      new KeyRecord('v', 11, 0, 3, 2, 7n, null),
      new KeyRecord('v', 10, 1, 3, 2, 7n, null),
      new KeyRecord('v', 10, 0, 4, 2, 7n, null),
      new KeyRecord('v', 10, 0, 3, 3, 7n, null),
      new KeyRecord('v', 10, 0, 3, 2, 7n + (1n << 40n), null),
      new KeyRecord(null, 10, 0, 0, 0, 0n, null),
    ];
    const seen = new Set([recordDigest('k', base).join(',')]);
    for (const variant of variants) seen.add(recordDigest('k', variant).join(','));
    seen.add(recordDigest('k2', base).join(','));
    expect(seen.size).toBe(variants.length + 2);
    const digest = new StateDigest();
    expect(new Set([digest.hex(1, -1, 1), digest.hex(2, -1, 1), digest.hex(1, 0, 1), digest.hex(1, -1, 2)]).size).toBe(4);
  });

  it('deferred: counts sizes at once and sums the lanes only when asked, to what an eager digest holds', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 20 }), (records) => {
        const eager = new StateDigest();
        const deferred = StateDigest.deferred();
        for (const { key, record } of records) {
          eager.add(key, record);
          deferred.add(key, record);
        }
        expect(deferred.retainedBytes).toBe(eager.retainedBytes);
        expect(deferred.summed).toBe(false);
        expect(() => deferred.hex(5, -1, 1)).toThrow(/deferred/);
        deferred.sumLanes((visit) => {
          for (const { key, record } of records) visit(key, record);
        });
        expect(deferred.hex(5, -1, 1)).toBe(eager.hex(5, -1, 1));
        // Kept in step from then on; a second sum changes nothing.
        if (records.length > 0) {
          eager.remove(records[0]!.key, records[0]!.record);
          deferred.remove(records[0]!.key, records[0]!.record);
        }
        deferred.sumLanes(() => {
          throw new Error('summed twice');
        });
        expect(deferred.hex(5, -1, 1)).toBe(eager.hex(5, -1, 1));
        expect(deferred.retainedBytes).toBe(eager.retainedBytes);
      }),
    );
  });
});
