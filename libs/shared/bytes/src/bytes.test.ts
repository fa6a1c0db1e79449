import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, concatBytes, equalBytes, fromHex, fromUtf8, prefixRangeEnd, splitBytes, toHex, utf8 } from './index';

describe('compareBytes', () => {
  it('orders like Buffer.compare (unsigned lexicographic) for arbitrary inputs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 8 }), fc.uint8Array({ maxLength: 8 }), (a, b) => {
        expect(compareBytes(a, b)).toBe(Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(equalBytes(a, b)).toBe(Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0);
      }),
      { numRuns: 2000 },
    );
  });

  it('treats bytes as unsigned and a prefix as smaller', () => {
    expect(compareBytes(new Uint8Array([0x7f]), new Uint8Array([0x80]))).toBe(-1);
    expect(compareBytes(utf8('ab'), utf8('abc'))).toBe(-1);
    expect(compareBytes(utf8('b'), utf8('abc'))).toBe(1);
  });
});

/** A Uint8Array whose slice is a view, as Node's Buffer.slice is. */
function viewSlicing(bytes: Uint8Array): Uint8Array {
  return Object.assign(bytes, { slice: (start?: number, end?: number) => bytes.subarray(start, end) });
}

describe('prefixRangeEnd', () => {
  it('never writes into its argument, even when slice() returns a view (Node Buffers)', () => {
    const prefix = viewSlicing(utf8('foo'));
    expect(prefix.slice(0, 1).buffer).toBe(prefix.buffer); // the double really slices as a view
    expect(fromUtf8(prefixRangeEnd(prefix))).toBe('fop');
    expect(fromUtf8(prefix)).toBe('foo');
  });

  it('matches etcd GetPrefixRangeEnd examples', () => {
    expect(fromUtf8(prefixRangeEnd(utf8('foo')))).toBe('fop');
    expect(toHex(prefixRangeEnd(new Uint8Array([0x61, 0xff])))).toBe('62');
    expect(toHex(prefixRangeEnd(new Uint8Array([0xff, 0xff])))).toBe('00');
    expect(toHex(prefixRangeEnd(new Uint8Array([])))).toBe('00');
  });

  it('bounds exactly the keys that start with the prefix', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 4 }), fc.uint8Array({ maxLength: 6 }), (prefix, key) => {
        const end = prefixRangeEnd(prefix);
        const startsWith = key.length >= prefix.length && equalBytes(key.slice(0, prefix.length), prefix);
        const allFf = prefix.every((b) => b === 0xff);
        const inRange = compareBytes(key, prefix) >= 0 && (allFf || compareBytes(key, end) < 0);
        if (startsWith) expect(inRange).toBe(true);
        if (!allFf && inRange) expect(startsWith).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('hex and concat', () => {
  it('round-trips hex and rejects malformed input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 32 }), (bytes) => {
        expect(fromHex(toHex(bytes))).toEqual(bytes);
      }),
    );
    expect(() => fromHex('abc')).toThrow(TypeError);
    expect(() => fromHex('zz')).toThrow(TypeError);
  });

  it('concatenates in order', () => {
    expect(fromUtf8(concatBytes(utf8('a'), utf8(''), utf8('bc')))).toBe('abc');
  });
});

describe('splitBytes', () => {
  it('cuts at the given positions, in order, into pieces that join to the whole', () => {
    const bytes = Uint8Array.of(1, 2, 3, 4, 5);
    expect(splitBytes(bytes, [3, 1, 3, 9]).map((piece) => [...piece])).toEqual([[1], [2, 3], [4, 5], []]);
    expect(splitBytes(bytes, []).map((piece) => [...piece])).toEqual([[1, 2, 3, 4, 5]]);
    expect(concatBytes(...splitBytes(bytes, [0, 2, 4]))).toEqual(bytes);
  });
});
