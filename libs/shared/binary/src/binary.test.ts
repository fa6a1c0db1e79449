import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BinaryDecodeError, BinaryLimitError, BinaryReader, BinaryWriter, isWellFormedText } from './index';

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof BinaryDecodeError) return error.reason;
    throw error;
  }
  return undefined;
}

describe('varints', () => {
  it('encodes unsigned values in LEB128 shortest form', () => {
    expect(new BinaryWriter().uvarint(0).finish()).toEqual(Uint8Array.of(0));
    expect(new BinaryWriter().uvarint(127).finish()).toEqual(Uint8Array.of(0x7f));
    expect(new BinaryWriter().uvarint(300).finish()).toEqual(Uint8Array.of(0xac, 0x02));
    expect(new BinaryWriter().uvarint64(300n).finish()).toEqual(Uint8Array.of(0xac, 0x02));
  });

  it('zigzag-encodes signed 64-bit values', () => {
    expect(new BinaryWriter().svarint64(0n).finish()).toEqual(Uint8Array.of(0));
    expect(new BinaryWriter().svarint64(-1n).finish()).toEqual(Uint8Array.of(1));
    expect(new BinaryWriter().svarint64(1n).finish()).toEqual(Uint8Array.of(2));
  });

  it('round-trips every safe integer, uint64 and int64', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (n, u, s) => {
        const bytes = new BinaryWriter().uvarint(n).uvarint64(u).svarint64(s).finish();
        const reader = new BinaryReader(bytes);
        expect(reader.uvarint()).toBe(n);
        expect(reader.uvarint64()).toBe(u);
        expect(reader.svarint64()).toBe(s);
        reader.expectEnd();
      }),
      { numRuns: 2000 },
    );
  });

  it('writes safe integers with svarint exactly as svarint64 does, and reads them back', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        const bytes = new BinaryWriter().svarint(n).finish();
        expect(bytes).toEqual(new BinaryWriter().svarint64(BigInt(n)).finish());
        expect(new BinaryReader(bytes).svarint()).toBe(n);
      }),
      { numRuns: 2000 },
    );
    const beyond = new BinaryWriter().svarint64(1n << 60n).finish();
    expect(reasonOf(() => new BinaryReader(beyond).svarint())).toBe('out-of-range');
  });

  it('rejects non-canonical, overlong and out-of-range varints', () => {
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(0x80, 0x00)).uvarint())).toBe('varint-not-canonical');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(0x80, 0x00)).uvarint64())).toBe('varint-not-canonical');
    expect(reasonOf(() => new BinaryReader(new Uint8Array(11).fill(0x80)).uvarint64())).toBe('out-of-range');
    expect(reasonOf(() => new BinaryReader(new Uint8Array(9).fill(0xff)).uvarint())).toBe('out-of-range');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(0x81)).uvarint())).toBe('truncated');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(5)).uvarint(4))).toBe('out-of-range');
    const twoTo64 = Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02);
    expect(reasonOf(() => new BinaryReader(twoTo64).uvarint64())).toBe('out-of-range');
  });

  it('refuses to write values outside the declared ranges', () => {
    expect(() => new BinaryWriter().uvarint(-1)).toThrow(TypeError);
    expect(() => new BinaryWriter().uvarint(2 ** 53)).toThrow(TypeError);
    expect(() => new BinaryWriter().uvarint64(1n << 64n)).toThrow(TypeError);
    expect(() => new BinaryWriter().svarint64(1n << 63n)).toThrow(TypeError);
    expect(() => new BinaryWriter().uint8(256)).toThrow(TypeError);
  });
});

describe('byte strings and text', () => {
  it('round-trips bytes and strings and returns copies', () => {
    const input = new BinaryWriter().bytes(Uint8Array.of(1, 2, 3)).string('héllo 😀').bool(true).finish();
    const reader = new BinaryReader(input);
    const bytes = reader.bytes(16);
    expect(bytes).toEqual(Uint8Array.of(1, 2, 3));
    input[1] = 99;
    expect(bytes[0]).toBe(1);
    expect(reader.string(64)).toBe('héllo 😀');
    expect(reader.bool()).toBe(true);
    reader.expectEnd();
  });

  it('returns copies from a Node Buffer input too (Buffer#slice shares memory)', () => {
    const input = Buffer.from(new BinaryWriter().bytes(Uint8Array.of(1, 2, 3)).raw(Uint8Array.of(4, 5)).finish());
    const reader = new BinaryReader(input);
    const bytes = reader.bytes(16);
    const raw = reader.raw(2);
    input.fill(0xee);
    expect(bytes).toEqual(Uint8Array.of(1, 2, 3));
    expect(raw).toEqual(Uint8Array.of(4, 5));
    expect(bytes.buffer).not.toBe(input.buffer);
  });

  it('rejects lengths above the caller limit, truncation, bad UTF-8, bad booleans and trailing bytes', () => {
    const long = new BinaryWriter().bytes(new Uint8Array(10)).finish();
    expect(reasonOf(() => new BinaryReader(long).bytes(9))).toBe('too-large');
    expect(reasonOf(() => new BinaryReader(long.subarray(0, 5)).bytes(10))).toBe('truncated');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(2, 0xc3, 0x28)).string(8))).toBe('invalid-utf8');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(2)).bool())).toBe('invalid-value');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(0, 0)).expectEnd())).toBe('trailing-bytes');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(5, 0)).count(10))).toBe('truncated');
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(11)).count(10))).toBe('too-large');
  });

  it('decodes ASCII and non-ASCII strings of every length alike (fast path and TextDecoder)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100, unit: 'binary' }), (text) => {
        const bytes = new BinaryWriter().string(text).finish();
        expect(bytes).toEqual(Uint8Array.of(...new BinaryWriter().bytes(new TextEncoder().encode(text)).finish()));
        expect(new BinaryReader(bytes).string(1000)).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses strings with lone surrogates instead of writing a lossy encoding', () => {
    expect(isWellFormedText('a\ud83d\ude00b')).toBe(true);
    expect(isWellFormedText('a\ud83d')).toBe(false);
    expect(isWellFormedText('\ude00')).toBe(false);
    expect(() => new BinaryWriter().string('\ud800x')).toThrow(TypeError);
  });

  it('stops at its byte limit with a BinaryLimitError', () => {
    const writer = new BinaryWriter({ maxBytes: 4, initialCapacityBytes: 1 });
    writer.raw(Uint8Array.of(1, 2, 3));
    expect(() => writer.raw(Uint8Array.of(4, 5))).toThrow(BinaryLimitError);
    expect(writer.finish()).toEqual(Uint8Array.of(1, 2, 3));
  });

  it('never throws anything but BinaryDecodeError on random input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (input) => {
        const reader = new BinaryReader(input);
        try {
          reader.uvarint();
          reader.string(16);
          reader.svarint64();
          reader.bytes(8);
          reader.bool();
        } catch (error) {
          expect(error).toBeInstanceOf(BinaryDecodeError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
