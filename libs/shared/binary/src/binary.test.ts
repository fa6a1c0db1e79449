import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BinaryDecodeError, BinaryLimitError, BinaryReader, BinaryWriter, ChunkSink, CollectingSink, isWellFormedText, joinChunks, latin1FromBytes, latin1IntoBytes, spliceRuns, uvarintBytes } from './index';
import { portableLatin1FromBytes, portableLatin1IntoBytes } from './latin1';

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

  it('counts the bytes of an unsigned varint as uvarint writes them', () => {
    for (const n of [0, 127, 128, 16_383, 16_384, 2 ** 35, Number.MAX_SAFE_INTEGER]) {
      expect(uvarintBytes(n)).toBe(new BinaryWriter().uvarint(n).finish().length);
    }
    fc.assert(fc.property(fc.maxSafeNat(), (n) => uvarintBytes(n) === new BinaryWriter().uvarint(n).finish().length), { numRuns: 500 });
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

describe('fixed-width integers', () => {
  it('writes little-endian (and big-endian uint64) byte layouts', () => {
    expect(new BinaryWriter().uint32le(0x01020304).finish()).toEqual(Uint8Array.of(4, 3, 2, 1));
    expect(new BinaryWriter().uint64le(2 ** 32 + 2).finish()).toEqual(Uint8Array.of(2, 0, 0, 0, 1, 0, 0, 0));
    expect(new BinaryWriter().uint64be(2 ** 32 + 2).finish()).toEqual(Uint8Array.of(0, 0, 0, 1, 0, 0, 0, 2));
    expect(new BinaryWriter().biguint64le(0x0102030405060708n).finish()).toEqual(Uint8Array.of(8, 7, 6, 5, 4, 3, 2, 1));
    expect(new BinaryWriter().bigint64le(-2n).finish()).toEqual(Uint8Array.of(0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff));
  });

  it('round-trips every value in range, and agrees with DataView', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.maxSafeNat(),
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
        (u32, u64, big, signed) => {
          const bytes = new BinaryWriter({ initialCapacityBytes: 1 }).uint32le(u32).uint64le(u64).biguint64le(big).bigint64le(signed).uint64be(u64).finish();
          const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
          expect(view.getUint32(0, true)).toBe(u32);
          expect(view.getBigUint64(4, true)).toBe(BigInt(u64));
          expect(view.getBigUint64(12, true)).toBe(big);
          expect(view.getBigInt64(20, true)).toBe(signed);
          expect(view.getBigUint64(28, false)).toBe(BigInt(u64));
          const reader = new BinaryReader(bytes);
          expect(reader.uint32le()).toBe(u32);
          expect(reader.uint64le()).toBe(u64);
          expect(reader.biguint64le()).toBe(big);
          expect(reader.bigint64le()).toBe(signed);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses a uint64 beyond 2^53 - 1 as a number, truncation, and values out of range', () => {
    const beyond = new BinaryWriter().biguint64le(1n << 53n).finish();
    expect(reasonOf(() => new BinaryReader(beyond).uint64le())).toBe('out-of-range');
    expect(new BinaryReader(new BinaryWriter().uint64le(Number.MAX_SAFE_INTEGER).finish()).uint64le()).toBe(Number.MAX_SAFE_INTEGER);
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(1, 2, 3)).uint32le())).toBe('truncated');
    expect(reasonOf(() => new BinaryReader(new Uint8Array(7)).biguint64le())).toBe('truncated');
    expect(() => new BinaryWriter().uint32le(2 ** 32)).toThrow(TypeError);
    expect(() => new BinaryWriter().uint64le(-1)).toThrow(TypeError);
    expect(() => new BinaryWriter().biguint64le(-1n)).toThrow(TypeError);
    expect(() => new BinaryWriter().bigint64le(1n << 63n)).toThrow(TypeError);
  });
});

describe('binary strings', () => {
  it('round-trips bytes through latin1 strings of every length (across the chunk size)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20_000 }), (bytes) => {
        const text = latin1FromBytes(bytes);
        expect(text.length).toBe(bytes.length);
        const written = new BinaryWriter().latin1(text).finish();
        expect(written).toEqual(bytes);
        expect(new BinaryReader(written).latin1(bytes.length)).toBe(text);
      }),
      { numRuns: 100 },
    );
    expect(reasonOf(() => new BinaryReader(Uint8Array.of(1)).latin1(2))).toBe('truncated');
  });

  // The reference: one code unit per byte, and a byte per code unit's low 8 bits.
  const referenceFromBytes = (bytes: Uint8Array): string => Array.from(bytes, (byte) => String.fromCharCode(byte)).join('');
  const referenceIntoBytes = (text: string, target: Uint8Array, offset: number, from: number, to: number): void => {
    for (let i = from; i < to; i++) target[offset + i - from] = text.charCodeAt(i) & 0xff;
  };

  it('decodes exactly as one code unit per byte, from any view of a larger buffer', () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(latin1FromBytes(every)).toBe(referenceFromBytes(every));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const end = start + (bytes.length === 0 ? 0 : b % (bytes.length - start + 1));
        const view = bytes.subarray(start, end);
        const expected = referenceFromBytes(view);
        const text = latin1FromBytes(view);
        expect(text).toBe(expected);
        expect(portableLatin1FromBytes(view)).toBe(expected);
        // A copy: changing the bytes afterwards does not change the string.
        view.fill(0x2a);
        expect(text).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('encodes exactly the low byte of each code unit of text[from, to) at an offset of any view, and nothing around it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 300 }), fc.nat(), fc.nat(), fc.nat({ max: 40 }), (units, a, b, pad) => {
        const text = String.fromCharCode(...units);
        const from = text.length === 0 ? 0 : a % (text.length + 1);
        const to = from + (text.length === 0 ? 0 : b % (text.length - from + 1));
        const backing = new Uint8Array(to - from + 2 * pad + 8).fill(0x5c);
        const target = backing.subarray(4, backing.length - 4);
        const expected = backing.slice();
        referenceIntoBytes(text, expected.subarray(4, expected.length - 4), pad, from, to);
        expect(latin1IntoBytes(text, target, pad, from, to)).toBe(pad + to - from);
        expect(backing).toEqual(expected);
        const portable = backing.slice().fill(0x5c);
        portableLatin1IntoBytes(text, portable.subarray(4, portable.length - 4), pad, from, to);
        expect(portable).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses to write past the end of the target instead of writing short', () => {
    const target = new Uint8Array(8);
    expect(() => latin1IntoBytes('abcdef', target, 4)).toThrow(RangeError);
    expect(target).toEqual(new Uint8Array(8));
    expect(latin1IntoBytes('abcd', target, 4)).toBe(8);
    expect(latin1IntoBytes('', target, 8)).toBe(8);
  });
});

describe('streaming to a sink', () => {
  it('hands the sink exactly the bytes a growing writer would hold, in chunks no larger than its buffer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 40 }), fc.array(fc.oneof(fc.uint8Array({ maxLength: 100 }), fc.maxSafeNat()), { maxLength: 40 }), (chunk, items) => {
        const sink = new CollectingSink();
        let largest = 0;
        const streaming = new BinaryWriter({ initialCapacityBytes: chunk, sink: { write: (c) => ((largest = Math.max(largest, c.length)), sink.write(c)) } });
        const growing = new BinaryWriter();
        for (const item of items) {
          if (typeof item === 'number') {
            streaming.uvarint(item).uint64le(item);
            growing.uvarint(item).uint64le(item);
          } else {
            streaming.bytes(item).latin1(latin1FromBytes(item));
            growing.bytes(item).latin1(latin1FromBytes(item));
          }
        }
        streaming.flush();
        expect(sink.bytes()).toEqual(growing.finish());
        expect(streaming.length).toBe(growing.length);
        expect(largest).toBeLessThanOrEqual(chunk);
      }),
      { numRuns: 300 },
    );
  });

  it('a writer that hands its chunks over never writes into a chunk again: the kept chunks join to the bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 40 }), fc.array(fc.oneof(fc.uint8Array({ maxLength: 100 }), fc.maxSafeNat()), { maxLength: 40 }), (chunk, items) => {
        const sink = new ChunkSink();
        const streaming = new BinaryWriter({ initialCapacityBytes: chunk, sink, handsOverChunks: true });
        const growing = new BinaryWriter();
        for (const item of items) {
          if (typeof item === 'number') {
            streaming.uvarint(item).uint64le(item).bigint64le(-BigInt(item)).uint8(item & 0xff);
            growing.uvarint(item).uint64le(item).bigint64le(-BigInt(item)).uint8(item & 0xff);
          } else {
            streaming.bytes(item).latin1(latin1FromBytes(item));
            growing.bytes(item).latin1(latin1FromBytes(item));
          }
        }
        streaming.flush();
        const expected = growing.finish();
        expect(sink.length).toBe(expected.length);
        expect(joinChunks(sink.chunks.length === 0 ? [new Uint8Array(0)] : sink.chunks)).toEqual(expected);
        expect(new Set(sink.chunks.map((c) => c.buffer)).size).toBe(sink.chunks.length);
      }),
      { numRuns: 300 },
    );
  });

  it('a writer taking its next buffers from a pool writes the same bytes, in the buffers the pool gave', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 40 }), fc.array(fc.oneof(fc.uint8Array({ maxLength: 100 }), fc.maxSafeNat()), { maxLength: 40 }), (chunk, items) => {
        // The consumer copies each chunk and hands its buffer back at once: the pool never runs dry.
        const pool: Uint8Array[] = [];
        const lent = new Set<ArrayBufferLike>();
        const copies: Uint8Array[] = [];
        const sink = {
          write(piece: Uint8Array): void {
            expect(lent.has(piece.buffer)).toBe(true);
            copies.push(piece.slice());
            pool.push(new Uint8Array(piece.buffer, piece.byteOffset, chunk));
          },
        };
        const nextBuffer = (): Uint8Array => {
          const buffer = pool.pop() ?? new Uint8Array(chunk);
          lent.add(buffer.buffer);
          return buffer;
        };
        const writer = new BinaryWriter({ initialCapacityBytes: chunk, sink, handsOverChunks: true, nextBuffer });
        const growing = new BinaryWriter();
        for (const item of items) {
          if (typeof item === 'number') {
            writer.uvarint(item).uint64le(item).uint8(item & 0xff);
            growing.uvarint(item).uint64le(item).uint8(item & 0xff);
          } else {
            writer.bytes(item).latin1(latin1FromBytes(item));
            growing.bytes(item).latin1(latin1FromBytes(item));
          }
        }
        writer.flush();
        expect(joinChunks(copies.length === 0 ? [new Uint8Array(0)] : copies)).toEqual(growing.finish());
        // One buffer went round, lent back each time.
        expect(lent.size).toBe(1);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a 64-bit bigint intact when the flush it causes runs a sink that writes bigints itself', () => {
    const sink = new CollectingSink();
    const nested = new BinaryWriter();
    let writes = 0;
    const streaming = new BinaryWriter({
      initialCapacityBytes: 10,
      sink: {
        write: (c) => {
          writes++;
          nested.biguint64le(0xffff_ffff_ffff_ffffn).bigint64le(-1n);
          sink.write(c);
        },
      },
    });
    streaming.uint32le(1).biguint64le(0x0102030405060708n).bigint64le(-0x0102030405060708n).flush();
    const expected = new BinaryWriter().uint32le(1).biguint64le(0x0102030405060708n).bigint64le(-0x0102030405060708n).finish();
    expect(sink.bytes()).toEqual(expected);
    expect(writes).toBe(3); // two flushes in the middle of a bigint's reservation, and the last
    expect(nested.finish()).toEqual(new Uint8Array(16 * writes).fill(0xff));
  });

  it('hands out an exactly filled buffer without a copy, and never writes into it again', () => {
    const writer = new BinaryWriter({ initialCapacityBytes: 4 });
    const full = writer.uint32le(7).finish();
    expect(full.length).toBe(4);
    writer.uint8(9);
    expect(full).toEqual(Uint8Array.of(7, 0, 0, 0));
    expect(writer.finish()).toEqual(Uint8Array.of(7, 0, 0, 0, 9));
  });
});

describe('spliceRuns', () => {
  it('inserts each placed array, uncopied, at its offset, leaving out empty runs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.array(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 })), { maxLength: 5 }), (own, raw) => {
        const placed = raw.map(([at, bytes]) => ({ at: at % (own.length + 1), bytes })).sort((x, y) => x.at - y.at);
        const pieces = spliceRuns(own, placed);
        const expected: number[] = [];
        let from = 0;
        for (const { at, bytes } of placed) {
          expected.push(...own.subarray(from, at), ...bytes);
          from = at;
        }
        expected.push(...own.subarray(from));
        expect([...joinChunks(pieces)]).toEqual(expected);
        for (const { bytes } of placed) expect(pieces.includes(bytes)).toBe(true);
        expect(pieces.every((piece) => piece.length > 0) || (own.length === 0 && placed.length === 0)).toBe(true);
      }),
    );
    expect(() => spliceRuns(new Uint8Array(4), [{ at: 3, bytes: Uint8Array.of(1) }, { at: 1, bytes: Uint8Array.of(2) }])).toThrow(RangeError);
    expect(() => spliceRuns(new Uint8Array(4), [{ at: 5, bytes: Uint8Array.of(1) }])).toThrow(RangeError);
  });
});
