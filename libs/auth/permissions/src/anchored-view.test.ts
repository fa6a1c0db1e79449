import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, concatBytes, utf8 } from '@ward/shared/bytes';
import { AnchoredView, MAX_ANCHOR_LENGTHS, MAX_BUCKET_INTERVALS, MAX_STORED_LENGTH } from './anchored-view';
import { CoverageIndex, type CoveredInterval } from './coverage-index';

/** The merged interval holding `key`, by a linear scan. */
function holder(intervals: readonly CoveredInterval[], key: Uint8Array): CoveredInterval | undefined {
  if (key.length === 0) return undefined;
  return intervals.find((i) => compareBytes(i.begin, key) <= 0 && (i.end === null || compareBytes(key, i.end) < 0));
}

const bytesArb = fc.array(fc.constantFrom(0x00, 0x01, 0x61, 0x62, 0xfe, 0xff), { minLength: 1, maxLength: 4 }).map((a) => Uint8Array.from(a));

describe('AnchoredView', () => {
  const checkAgainstScan = (keyArb: fc.Arbitrary<Uint8Array>, numRuns: number, mayRefuse: boolean): void => {
    const intervals = fc.oneof(
      fc.tuple(keyArb, keyArb).map(([a, b]) => (compareBytes(a, b) < 0 ? { begin: a, end: b } : { begin: b, end: concatBytes(b, Uint8Array.of(0)) })),
      keyArb.map((k) => ({ begin: k, end: concatBytes(k, Uint8Array.of(0)) })),
      keyArb.map((k) => ({ begin: k, end: null as Uint8Array | null })),
    );
    const endArb = fc.oneof(keyArb, fc.constant(new Uint8Array(0)), fc.constant(Uint8Array.of(0)));
    const queryArb = fc.tuple(fc.oneof(keyArb, fc.constant(new Uint8Array(0))), endArb);
    fc.assert(
      fc.property(fc.array(intervals, { maxLength: 30 }), fc.array(queryArb, { maxLength: 40 }), (added, queries) => {
        const index = new CoverageIndex();
        for (const { begin, end } of added) index.add(begin, end);
        const merged = index.mergedIntervals();
        const view = AnchoredView.build(merged);
        if (view === null && mayRefuse) return; // more anchor lengths than the cap (longer keys)
        expect(view).not.toBeNull();
        for (const [key, end] of queries) {
          const held = holder(merged, key);
          let expected: boolean;
          if (held === undefined) expected = false;
          else if (end.length === 0 || held.end === null) expected = true;
          else if (end.length === 1 && end[0] === 0) expected = false;
          else expected = compareBytes(end, key) <= 0 || compareBytes(end, held.end) <= 0;
          expect(view!.permits(key, end)).toBe(expected);
        }
      }),
      { numRuns },
    );
  };

  it('answers key, range, open and inverted checks exactly as a scan of the merged intervals', () => {
    checkAgainstScan(bytesArb, 5000, false); // keys of at most 4 bytes: at most 5 anchor lengths
  });

  it('answers as the scan with longer keys and anchors too', () => {
    const prefixed = fc
      .tuple(fc.constantFrom(0, 1, 2, 3), fc.array(fc.constantFrom(0x00, 0x2f, 0x61, 0x62, 0xff), { minLength: 1, maxLength: 10 }))
      .map(([head, rest]) => Uint8Array.from([0x2f, head, ...rest]));
    checkAgainstScan(prefixed, 2000, true);
  });

  it('tells apart anchors of one length that share their first bytes', () => {
    const index = new CoverageIndex();
    const key = (text: string): Uint8Array => utf8(`/p/${text}`);
    index.add(key('bbbb'), concatBytes(key('bbbb'), Uint8Array.of(0))); // keeps the common prefix at /p/
    for (let i = 0; i < 2000; i += 2) index.add(key(`aaaa${String(i).padStart(4, '0')}`), concatBytes(key(`aaaa${String(i).padStart(4, '0')}`), Uint8Array.of(0)));
    const view = AnchoredView.build(index.mergedIntervals())!;
    const none = new Uint8Array(0);
    for (let i = 0; i < 2000; i++) expect(view.permits(key(`aaaa${String(i).padStart(4, '0')}`), none)).toBe(i % 2 === 0);
  });

  it('answers for many intervals sharing one anchor and for many anchors', () => {
    const index = new CoverageIndex();
    const under = (anchor: string, ...bytes: number[]): Uint8Array => concatBytes(utf8(anchor), Uint8Array.from(bytes));
    for (let i = 0; i < 50; i++) index.add(under('/a/', 2 * i + 1), under('/a/', 2 * i + 2)); // one anchor, /a/
    for (let i = 0; i < 5000; i++) index.add(utf8(`/b/${i}/a`), utf8(`/b/${i}/m`)); // anchors /b/<i>/
    const view = AnchoredView.build(index.mergedIntervals())!;
    expect(view).not.toBeNull();
    const none = new Uint8Array(0);
    for (let i = 0; i < 50; i++) {
      expect(view.permits(under('/a/', 2 * i + 1), none)).toBe(true);
      expect(view.permits(under('/a/', 2 * i + 1, 0xff), none)).toBe(true);
      expect(view.permits(under('/a/', 2 * i + 2), none)).toBe(false);
      expect(view.permits(under('/a/', 2 * i), none)).toBe(false);
      expect(view.permits(under('/a/', 2 * i + 1), under('/a/', 2 * i + 2))).toBe(true);
      expect(view.permits(under('/a/', 2 * i + 1), under('/a/', 2 * i + 2, 0))).toBe(false);
    }
    for (let i = 0; i < 5000; i++) {
      expect(view.permits(utf8(`/b/${i}/b`), utf8(`/b/${i}/l`))).toBe(true);
      expect(view.permits(utf8(`/b/${i}/b`), utf8(`/b/${i}/m`))).toBe(true);
      expect(view.permits(utf8(`/b/${i}/b`), utf8(`/b/${i}/n`))).toBe(false);
      expect(view.permits(utf8(`/b/${i}/`), utf8(`/b/${i}/b`))).toBe(false);
      expect(view.permits(utf8(`/b/${i}/b`), utf8(`/b/${i}/`))).toBe(true); // inverted: the key alone
    }
  });

  it('refuses a bucket of more intervals than the cap', () => {
    const index = new CoverageIndex();
    const under = (byte: number): Uint8Array => Uint8Array.of(0x2f, byte);
    for (let i = 0; i <= MAX_BUCKET_INTERVALS; i++) index.add(under(2 * i + 1), under(2 * i + 2));
    expect(AnchoredView.build(index.mergedIntervals())).toBeNull();
    index.remove(under(1), under(2));
    expect(AnchoredView.build(index.mergedIntervals())).not.toBeNull();
  });

  it('refuses more distinct anchor lengths than the cap', () => {
    const intervals: CoveredInterval[] = [];
    for (let length = 1; length <= MAX_ANCHOR_LENGTHS + 1; length++) {
      const key = new Uint8Array(length).fill(0x61);
      key[length - 1] = 0x62;
      intervals.push({ begin: key, end: concatBytes(key, Uint8Array.of(0)) });
    }
    intervals.sort((a, b) => compareBytes(a.begin, b.begin));
    expect(AnchoredView.build(intervals)).toBeNull();
    expect(AnchoredView.build(intervals.slice(1))).not.toBeNull();
  });

  it('holds long anchors and tails up to the stored-length cap, and refuses longer ones', () => {
    const long = (length: number, last: number): Uint8Array => {
      const key = new Uint8Array(length).fill(0x61);
      key[length - 1] = last;
      return key;
    };
    const atCap = [{ begin: long(MAX_STORED_LENGTH, 0x62), end: long(MAX_STORED_LENGTH, 0x64) }];
    const view = AnchoredView.build(atCap)!;
    expect(view).not.toBeNull();
    expect(view.permits(long(MAX_STORED_LENGTH, 0x63), new Uint8Array(0))).toBe(true);
    expect(view.permits(long(MAX_STORED_LENGTH, 0x64), new Uint8Array(0))).toBe(false);
    expect(view.permits(long(MAX_STORED_LENGTH, 0x62), long(MAX_STORED_LENGTH, 0x64))).toBe(true);
    const tooLong = [{ begin: long(MAX_STORED_LENGTH + 2, 0x62), end: long(MAX_STORED_LENGTH + 2, 0x64) }];
    expect(AnchoredView.build(tooLong)).toBeNull();
    const longTail = [{ begin: Uint8Array.of(0x61), end: concatBytes(Uint8Array.of(0x61), long(MAX_STORED_LENGTH + 1, 0x62)) }];
    expect(AnchoredView.build(longTail)).toBeNull();
  });
});
