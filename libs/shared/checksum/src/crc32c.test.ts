import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NATIVE_CRC_FROM_BYTES, crc32c, crc32cPortable, crc32cTable } from './crc32c';

/** Bit-at-a-time reference, independent of the table construction. */
function crc32cBitwise(bytes: Uint8Array, previous = 0): number {
  let crc = ~previous >>> 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return ~crc >>> 0;
}

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('crc32c', () => {
  it('matches the published check value and RFC 3720 vectors', () => {
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    // RFC 3720 appendix B.4: 32 bytes of zeros, of 0xff, ascending and descending.
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
  });

  it('agrees with a bitwise reference for any bytes and seed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.integer({ min: 0, max: 0xffffffff }), (bytes, seed) => {
        expect(crc32c(bytes, seed)).toBe(crc32cBitwise(bytes, seed));
      }),
      { numRuns: 300 },
    );
  });

  it('chains: the checksum of a then b, seeded, equals the checksum of a+b', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.uint8Array({ maxLength: 100 }), (a, b) => {
        const joined = new Uint8Array(a.length + b.length);
        joined.set(a);
        joined.set(b, a.length);
        expect(crc32c(b, crc32c(a))).toBe(crc32c(joined));
      }),
    );
  });

  it('gives the same value at every memory alignment and on the portable path', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 200 }), fc.integer({ min: 0, max: 7 }), (bytes, shift) => {
        const backing = new Uint8Array(bytes.length + 8);
        backing.set(bytes, shift);
        const view = backing.subarray(shift, shift + bytes.length);
        const expected = crc32cBitwise(bytes);
        expect(crc32c(view)).toBe(expected);
        expect(crc32cPortable(view)).toBe(expected);
        expect(crc32c(backing, 0, shift, shift + bytes.length)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('long ranges (the native path) agree with the table and the bitwise reference, at any offset, seed and chaining', () => {
    const backing = Uint8Array.from({ length: 3 * NATIVE_CRC_FROM_BYTES + 7 }, (_, i) => (i * 131 + (i >>> 9)) & 0xff);
    const reference = backing.subarray(5, 5 + NATIVE_CRC_FROM_BYTES + 3);
    expect(crc32c(reference, 0x1234)).toBe(crc32cBitwise(reference, 0x1234));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: NATIVE_CRC_FROM_BYTES }),
        fc.integer({ min: NATIVE_CRC_FROM_BYTES - 2, max: 2 * NATIVE_CRC_FROM_BYTES }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (start, length, seed) => {
          const end = start + length;
          expect(crc32c(backing, seed, start, end)).toBe(crc32cTable(backing, seed, start, end));
          expect(crc32c(backing.subarray(start, end), seed)).toBe(crc32cTable(backing, seed, start, end));
          // A short piece after a long one continues the long one's checksum.
          expect(crc32c(backing, crc32c(backing, seed, start, end), end, end + 7)).toBe(crc32cTable(backing, seed, start, end + 7));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('honours a sub-range and rejects a range outside the array', () => {
    const bytes = ascii('xx123456789yy');
    expect(crc32c(bytes, 0, 2, 11)).toBe(0xe3069283);
    expect(() => crc32c(bytes, 0, 5, 20)).toThrow(RangeError);
    expect(() => crc32c(bytes, 0, 6, 5)).toThrow(RangeError);
  });
});
