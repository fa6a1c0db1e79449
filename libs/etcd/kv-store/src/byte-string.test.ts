import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compareBytes, equalBytes } from '@ward/shared/bytes';
import { fromByteString, toByteString, writeByteString } from './byte-string';

describe('byte strings (the store form of keys and values)', () => {
  it('round-trip any bytes, including lengths across the conversion chunk size', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        expect(equalBytes(fromByteString(toByteString(bytes)), bytes)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    for (const length of [8191, 8192, 8193, 20_000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 131) & 0xff);
      const text = toByteString(bytes);
      expect(text.length).toBe(length);
      expect(equalBytes(fromByteString(text), bytes)).toBe(true);
    }
  });

  it('order exactly like etcd orders keys (unsigned bytes, a prefix first)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 6 }), fc.uint8Array({ maxLength: 6 }), (a, b) => {
        const x = toByteString(a);
        const y = toByteString(b);
        const order = x < y ? -1 : x > y ? 1 : 0;
        expect(order).toBe(compareBytes(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('copy: a later change to the source does not reach the string', () => {
    const bytes = Uint8Array.of(1, 2, 3);
    const text = toByteString(bytes);
    bytes[0] = 9;
    expect([...fromByteString(text)]).toEqual([1, 2, 3]);
    const target = new Uint8Array(5);
    expect(writeByteString(text, target, 1)).toBe(4);
    expect([...target]).toEqual([0, 1, 2, 3, 0]);
  });
});
