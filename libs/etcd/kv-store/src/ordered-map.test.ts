import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OrderedMap } from './ordered-map';

type Op = { kind: 'set'; key: string; value: number } | { kind: 'delete'; key: string };

// Keys over a tiny alphabet (with 0x00 and 0xff) so that collisions, prefixes and neighbours are common.
const keyArb = fc
  .array(fc.constantFrom('\u0000', 'a', 'b', '\u00ff'), { minLength: 0, maxLength: 4 })
  .map((chars) => chars.join(''));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), key: keyArb, value: fc.integer() }),
  fc.record({ kind: fc.constant('delete' as const), key: keyArb }),
);

function modelScan(model: Map<string, number>, start: string, end: string | null): [string, number][] {
  return [...model.entries()]
    .filter(([key]) => key >= start && (end === null || key < end))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function treeScan(tree: OrderedMap<number>, start: string, end: string | null): [string, number][] {
  const out: [string, number][] = [];
  tree.scan(start, end, (key, value) => {
    out.push([key, value]);
  });
  return out;
}

describe('OrderedMap (B+tree) against a Map model', () => {
  it('agrees on get/set/delete/scan and keeps its invariants for random operations (order 4 and 6)', () => {
    fc.assert(
      fc.property(fc.constantFrom(4, 6), fc.array(opArb, { maxLength: 300 }), keyArb, keyArb, (order, ops, a, b) => {
        const tree = new OrderedMap<number>(order);
        const model = new Map<string, number>();
        for (const op of ops) {
          if (op.kind === 'set') {
            expect(tree.set(op.key, op.value)).toBe(!model.has(op.key));
            model.set(op.key, op.value);
          } else {
            expect(tree.delete(op.key)).toBe(model.delete(op.key));
          }
        }
        tree.assertInvariants();
        expect(tree.size).toBe(model.size);
        for (const key of [a, b]) expect(tree.get(key)).toBe(model.get(key));
        expect(treeScan(tree, a, b)).toEqual(modelScan(model, a, b));
        expect(treeScan(tree, a, null)).toEqual(modelScan(model, a, null));
      }),
      { numRuns: 400 },
    );
  });

  it('grows and shrinks through many levels with sequential and reverse inserts/deletes', () => {
    const tree = new OrderedMap<number>(4);
    const keys = Array.from({ length: 2000 }, (_, i) => `k${String(i).padStart(5, '0')}`);
    keys.forEach((key, i) => tree.set(key, i));
    tree.assertInvariants();
    expect(tree.size).toBe(2000);
    for (let i = keys.length - 1; i >= 0; i -= 2) expect(tree.delete(keys[i]!)).toBe(true);
    tree.assertInvariants();
    expect(tree.size).toBe(1000);
    for (let i = 0; i < keys.length; i += 2) expect(tree.delete(keys[i]!)).toBe(true);
    tree.assertInvariants();
    expect(tree.size).toBe(0);
    expect(treeScan(tree, '', null)).toEqual([]);
  });

  it('stops a scan when the visitor returns false, and at the end bound', () => {
    const tree = new OrderedMap<number>(4);
    for (let i = 0; i < 50; i++) tree.set(String.fromCharCode(65 + i), i);
    const seen: string[] = [];
    tree.scan('C', null, (key) => {
      seen.push(key);
      return seen.length < 3;
    });
    expect(seen).toEqual(['C', 'D', 'E']);
    expect(treeScan(tree, 'X', 'Z').map(([key]) => key)).toEqual(['X', 'Y']);
    expect(treeScan(tree, 'Z', 'X')).toEqual([]);
  });

  it('builds from sorted input into a valid tree equal to incremental inserts', () => {
    fc.assert(
      fc.property(fc.uniqueArray(keyArb, { maxLength: 200 }), fc.constantFrom(4, 8, 64), (keys, order) => {
        const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const tree = OrderedMap.fromSorted(sorted, sorted.map((_, i) => i), order);
        tree.assertInvariants();
        expect(treeScan(tree, '', null)).toEqual(sorted.map((key, i) => [key, i]));
        // The bulk-built tree keeps working under updates.
        for (const key of sorted.slice(0, sorted.length / 2)) tree.delete(key);
        tree.set('zz', -1);
        tree.assertInvariants();
      }),
      { numRuns: 200 },
    );
    expect(() => OrderedMap.fromSorted(['b', 'a'], [1, 2])).toThrow(TypeError);
  });

  it('a sorted builder takes exactly the keys it announced, in order', () => {
    const builder = OrderedMap.sortedBuilder<number>(3, 4);
    builder.add('a', 1);
    builder.add('b', 2);
    expect(() => builder.finish()).toThrow(TypeError);
    expect(() => builder.add('a', 3)).toThrow(TypeError);
    builder.add('c', 3);
    expect(() => builder.add('d', 4)).toThrow(TypeError);
    const tree = builder.finish();
    tree.assertInvariants();
    expect(treeScan(tree, '', null)).toEqual([['a', 1], ['b', 2], ['c', 3]]);
  });

  it('orders byte strings as unsigned bytes, a prefix first', () => {
    const tree = new OrderedMap<number>();
    for (const key of ['\u00ff', 'a\u0000', 'a', '\u0000', '\u007f\u00ff', '\u0080']) tree.set(key, 0);
    expect(treeScan(tree, '', null).map(([key]) => key)).toEqual(['\u0000', 'a', 'a\u0000', '\u007f\u00ff', '\u0080', '\u00ff']);
  });

  it('counts a key range from its subtree figures where the stamp bound allows, like a model (countWhere)', () => {
    // A value carries its `counted` answer and the answer a read beyond the bound would give.
    type Entry = { readonly live: boolean; readonly stamp: number; readonly otherwise: boolean };
    const stats = { counted: (entry: Entry) => entry.live, stamp: (entry: Entry) => entry.stamp };
    const entryArb = fc.record({ live: fc.boolean(), stamp: fc.integer({ min: 0, max: 20 }), otherwise: fc.boolean() });
    type StatOp = { kind: 'set'; key: string; entry: Entry } | { kind: 'delete'; key: string } | { kind: 'replace'; start: string; end: string | null; entry: Entry };
    const statOpArb: fc.Arbitrary<StatOp> = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: keyArb, entry: entryArb }),
      fc.record({ kind: fc.constant('delete' as const), key: keyArb }),
      fc.record({ kind: fc.constant('replace' as const), start: keyArb, end: fc.option(keyArb, { nil: null }), entry: entryArb }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(4, 6),
        fc.uniqueArray(keyArb, { maxLength: 60 }),
        fc.array(statOpArb, { maxLength: 200 }),
        keyArb,
        fc.option(keyArb, { nil: null }),
        fc.integer({ min: -1, max: 21 }),
        (order, initial, ops, start, end, bound) => {
          const sorted = [...initial].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          const seed = sorted.map((_, i) => ({ live: i % 3 !== 0, stamp: i % 7, otherwise: i % 2 === 0 }));
          const tree = OrderedMap.fromSorted(sorted, seed, order, stats);
          const model = new Map<string, Entry>(sorted.map((key, i) => [key, seed[i]!]));
          for (const op of ops) {
            if (op.kind === 'set') {
              tree.set(op.key, op.entry);
              model.set(op.key, op.entry);
            } else if (op.kind === 'delete') {
              tree.delete(op.key);
              model.delete(op.key);
            } else {
              // Replace every other visited value: some keep their figures, some change them.
              let flip = false;
              tree.scanReplace(op.start, op.end, (_key, value) => ((flip = !flip) ? op.entry : value));
              flip = false;
              for (const [key] of modelScan(new Map([...model].map(([k]) => [k, 0])), op.start, op.end)) {
                if ((flip = !flip)) model.set(key, op.entry);
              }
            }
          }
          tree.assertInvariants();
          const test = (entry: Entry): boolean => (entry.stamp <= bound ? entry.live : entry.otherwise);
          const expected = [...model].filter(([key, entry]) => key >= start && (end === null || key < end) && test(entry)).length;
          expect(tree.countWhere(start, end, bound, test)).toBe(expected);
          expect(treeScan(tree as unknown as OrderedMap<number>, '', null).length).toBe(model.size);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('detects a miscounted node (the figure checker can fail)', () => {
    const tree = new OrderedMap<number>(4, { counted: (value) => value % 2 === 0, stamp: (value) => value });
    for (let i = 0; i < 20; i++) tree.set(`k${i}`, i);
    tree.assertInvariants();
    expect(tree.countWhere('', null, 100, (value) => value % 2 === 0)).toBe(10);
    // Corrupt the root's total through a cast: the checker must notice.
    (tree as unknown as { root: { counted: number } }).root.counted += 1;
    expect(() => tree.assertInvariants()).toThrow(/miscounts/);
  });

  it('detects a broken invariant (the checker can fail)', () => {
    const tree = new OrderedMap<number>(4);
    for (let i = 0; i < 20; i++) tree.set(`k${i}`, i);
    // Corrupt the size counter through a cast: the checker must notice.
    (tree as unknown as { count: number }).count += 1;
    expect(() => tree.assertInvariants()).toThrow(/size/);
    expect(() => new OrderedMap(5)).toThrow(TypeError);
  });
});
