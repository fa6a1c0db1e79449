import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, fromUtf8, utf8 } from '@ward/shared/bytes';
import { CoverageIndex } from './coverage-index';
import { CoverageView } from './coverage-view';

const k = (text: string): Uint8Array => utf8(text);

/** Is every key of [key, end) inside some interval? Checked key by key over a tiny universe. */
function naiveCovered(intervals: ReadonlyArray<readonly [Uint8Array, Uint8Array | null]>, key: Uint8Array): boolean {
  return intervals.some(([begin, end]) => compareBytes(begin, key) <= 0 && (end === null || compareBytes(key, end) < 0));
}

// Every byte string over {0x00, 0x01, 0x02} up to length 3, in order: coverage of a range is decided
// by the universe's keys inside it plus the boundaries (all of which are universe keys).
const ALPHABET = [0, 1, 2];
const UNIVERSE: Uint8Array[] = (() => {
  const out: Uint8Array[] = [];
  const grow = (prefix: number[]): void => {
    if (prefix.length > 0) out.push(Uint8Array.from(prefix));
    if (prefix.length === 3) return;
    for (const byte of ALPHABET) grow([...prefix, byte]);
  };
  grow([]);
  return out.sort(compareBytes);
})();

const universeKey = fc.integer({ min: 0, max: UNIVERSE.length - 1 }).map((i) => UNIVERSE[i]!);

describe('CoverageIndex', () => {
  it('treats touching intervals as one and ends as exclusive', () => {
    const index = new CoverageIndex();
    index.add(k('a'), k('b'));
    index.add(k('b'), k('c'));
    expect(index.coversRange(k('a'), k('c'))).toBe(true);
    expect(index.coversKey(k('b'))).toBe(true);
    expect(index.coversKey(k('c'))).toBe(false);
    expect(index.mergedIntervals().map((i) => [fromUtf8(i.begin), i.end && fromUtf8(i.end)])).toEqual([['a', 'c']]);
    index.checkInvariants();
  });

  it('needs an open-ended interval to cover a range to +∞', () => {
    const index = new CoverageIndex();
    index.add(k('a'), k('z'));
    expect(index.coversRange(k('b'), null)).toBe(false);
    index.add(k('y'), null);
    expect(index.coversRange(k('b'), null)).toBe(true);
    expect(index.coversKey(k('zzzz'))).toBe(true);
  });

  it('keeps coverage while another copy of an interval remains, drops it after the last', () => {
    const index = new CoverageIndex();
    index.add(k('a'), k('c'));
    index.add(k('a'), k('c'));
    index.remove(k('a'), k('c'));
    expect(index.coversKey(k('b'))).toBe(true);
    index.remove(k('a'), k('c'));
    expect(index.coversKey(k('b'))).toBe(false);
    expect(index.boundaries).toBe(0);
    expect(index.size).toBe(0);
  });

  it('answers an inverted or empty range by the key alone, and never covers the empty key', () => {
    const index = new CoverageIndex();
    index.add(k('b'), k('c'));
    expect(index.coversRange(k('b'), k('a'))).toBe(true);
    expect(index.coversRange(k('b'), k('b'))).toBe(true);
    expect(index.coversRange(k('a'), k('a'))).toBe(false);
    expect(index.coversKey(new Uint8Array(0))).toBe(false);
    expect(index.coversRange(new Uint8Array(0), k('b'))).toBe(false);
  });

  it('agrees with a key-by-key reference over random adds, removes and queries', () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), begin: universeKey, end: fc.option(universeKey) }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 30 }), fc.array(fc.tuple(universeKey, fc.option(universeKey)), { maxLength: 10 }), (operations, queries) => {
        const index = new CoverageIndex();
        const held: Array<readonly [Uint8Array, Uint8Array | null]> = [];
        for (const op of operations) {
          if (op.kind === 'add') {
            if (op.end !== null && compareBytes(op.begin, op.end) >= 0) continue;
            index.add(op.begin, op.end);
            held.push([op.begin, op.end]);
          } else if (held.length > 0) {
            const [removed] = held.splice(op.pick % held.length, 1);
            index.remove(removed![0], removed![1]);
          }
        }
        index.checkInvariants();
        for (const [key, end] of queries) {
          expect(index.coversKey(key)).toBe(naiveCovered(held, key));
          const inRange = UNIVERSE.filter((u) => compareBytes(u, key) >= 0 && (end === null || compareBytes(u, end) < 0));
          const expected = end !== null && compareBytes(end, key) <= 0 ? naiveCovered(held, key) : inRange.every((u) => naiveCovered(held, u)) && (end !== null || held.some(([, e]) => e === null && naiveCovered(held, key)));
          expect(index.coversRange(key, end)).toBe(expected);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('answers from its flat view exactly as from its tree, prefixes and keys outside included', () => {
    // Keys share a long prefix ("pp…") so the view's common-prefix and head logic is exercised, plus
    // keys that diverge below, above and inside the prefix, and long tails that tie on the head.
    const inner = fc.array(fc.constantFrom(0x00, 0x61, 0x62, 0xff), { minLength: 0, maxLength: 9 }).map((t) => Uint8Array.from([0x70, 0x70, ...t]));
    const outer = fc.constantFrom(utf8('p'), utf8('a'), utf8('q'), utf8('pa'), utf8('pq'), new Uint8Array(0));
    const anyKey = fc.oneof({ weight: 5, arbitrary: inner }, { weight: 1, arbitrary: outer });
    fc.assert(
      fc.property(fc.array(fc.tuple(inner, fc.option(inner)), { maxLength: 12 }), fc.array(fc.tuple(anyKey, fc.option(anyKey)), { maxLength: 20 }), (intervals, queries) => {
        const index = new CoverageIndex();
        const held: Array<readonly [Uint8Array, Uint8Array | null]> = [];
        for (const [begin, end] of intervals) {
          if (begin.length === 0 || (end !== null && compareBytes(begin, end) >= 0)) continue;
          index.add(begin, end);
          held.push([begin, end]);
        }
        const view = new CoverageView(index.mergedIntervals());
        for (const [key, end] of queries) {
          expect(view.coversKey(key)).toBe(key.length > 0 && naiveCovered(held, key));
          const treeAnswer = new CoverageIndex();
          for (const [b, e] of held) treeAnswer.add(b, e);
          expect(view.coversRange(key, end)).toBe(treeAnswer.coversRange(key, end));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('switches to the flat view after enough queries and back to the tree on a change', () => {
    const index = new CoverageIndex();
    index.add(k('a'), k('c'));
    for (let i = 0; i < 8; i++) expect(index.coversKey(k('b'))).toBe(true);
    expect(index.hasView).toBe(true);
    index.add(k('x'), null);
    expect(index.hasView).toBe(false);
    expect(index.coversRange(k('y'), null)).toBe(true);
  });

  it('stays balanced: height is logarithmic after 100,000 sequential boundaries', () => {
    const index = new CoverageIndex();
    const keyOf = (i: number): Uint8Array => utf8(`/k/${i.toString().padStart(7, '0')}`);
    for (let i = 0; i < 50_000; i++) index.add(keyOf(2 * i), keyOf(2 * i + 1));
    expect(index.boundaries).toBe(100_000);
    expect(index.coversKey(keyOf(1000))).toBe(true);
    expect(index.coversKey(keyOf(1001))).toBe(false);
    index.checkInvariants();
  });
});
