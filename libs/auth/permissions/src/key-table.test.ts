import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { toHex } from '@ward/shared/bytes';
import { KeyTable, fnvHash } from './key-table';

describe('KeyTable', () => {
  it('agrees with a counted Map over random adds and removes, prefixes included', () => {
    const keyArb = fc.uint8Array({ minLength: 1, maxLength: 3 }).map((a) => a.map((b) => b % 4));
    const opArb = fc.oneof(fc.record({ add: fc.constant(true), key: keyArb }), fc.record({ add: fc.constant(false), pick: fc.nat() }));
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), fc.array(keyArb, { maxLength: 20 }), (ops, queries) => {
        const table = new KeyTable();
        const model = new Map<string, number>();
        const held: Uint8Array[] = [];
        for (const op of ops) {
          if ('key' in op) {
            table.add(op.key);
            model.set(toHex(op.key), (model.get(toHex(op.key)) ?? 0) + 1);
            held.push(op.key);
          } else if (held.length > 0) {
            const [key] = held.splice(op.pick % held.length, 1);
            table.remove(key!);
            const left = model.get(toHex(key!))! - 1;
            if (left === 0) model.delete(toHex(key!));
            else model.set(toHex(key!), left);
          }
        }
        expect(table.size).toBe(model.size);
        for (const key of [...queries, ...held]) {
          const slot = table.find(key, key.length, fnvHash(key));
          expect(slot >= 0).toBe(model.has(toHex(key)));
          // Looking up a prefix of a longer key by its length and partial hash.
          if (key.length > 1) {
            const prefix = key.subarray(0, 1);
            expect(table.find(key, 1, fnvHash(key, 1)) >= 0).toBe(model.has(toHex(prefix)));
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every surviving key through growth and arena compaction', () => {
    const table = new KeyTable();
    const keyOf = (i: number): Uint8Array => new TextEncoder().encode(`/key/${i}`);
    for (let i = 0; i < 1000; i++) table.add(keyOf(i));
    for (let i = 0; i < 900; i++) table.remove(keyOf(i));
    expect(table.size).toBe(100);
    for (let i = 0; i < 1000; i++) {
      const key = keyOf(i);
      const slot = table.find(key, key.length, fnvHash(key));
      expect(slot >= 0).toBe(i >= 900);
    }
  });

  it('matches the FNV-1a test vectors', () => {
    expect(fnvHash(new Uint8Array(0))).toBe(0x811c9dc5);
    expect(fnvHash(new TextEncoder().encode('a'))).toBe(0xe40c292c);
    expect(fnvHash(new TextEncoder().encode('foobar'))).toBe(0xbf9cf968);
  });
});
