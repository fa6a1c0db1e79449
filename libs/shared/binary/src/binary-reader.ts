import { BinaryDecodeError } from './binary-decode-error';
import { latin1FromBytes } from './latin1';
import { decodeUtf8Strict } from './utf8-strict';

const UINT64_MAX = (1n << 64n) - 1n;
/** Strings up to this many bytes are decoded without TextDecoder when they are ASCII. */
const ASCII_FAST_PATH_BYTES = 64;
const TWO_POW_32 = 0x1_0000_0000;
/** Largest high word of a safe integer ((2^53 - 1) >>> 32). */
const MAX_SAFE_HIGH_WORD = 0x1f_ffff;

/**
 * Reads what {@link BinaryWriter} writes, treating the input as untrusted: every read is bounds-
 * checked, varints must be in their shortest form, lengths are capped by the caller, and any
 * violation throws a {@link BinaryDecodeError} (never a RangeError or a crash). Returned byte
 * strings are copies, so they never alias the input.
 */
export class BinaryReader {
  private readonly input: Uint8Array;
  private offsetBytes = 0;
  /** For the 64-bit fixed-width reads; made on first use. */
  private view: DataView | undefined;

  constructor(input: Uint8Array) {
    this.input = input;
  }

  get offset(): number {
    return this.offsetBytes;
  }

  get remaining(): number {
    return this.input.length - this.offsetBytes;
  }

  private fail(reason: ConstructorParameters<typeof BinaryDecodeError>[0], detail: string): never {
    throw new BinaryDecodeError(reason, this.offsetBytes, detail);
  }

  private need(lengthBytes: number): void {
    if (lengthBytes > this.input.length - this.offsetBytes) this.fail('truncated', `expected ${lengthBytes} bytes, ${this.remaining} left`);
  }

  uint8(): number {
    if (this.offsetBytes >= this.input.length) this.fail('truncated', 'expected a byte');
    return this.input[this.offsetBytes++]!;
  }

  bool(): boolean {
    const value = this.uint8();
    if (value > 1) this.fail('invalid-value', 'a boolean is 0 or 1');
    return value === 1;
  }

  /** An unsigned varint up to `max` (default 2^53 - 1). */
  uvarint(max: number = Number.MAX_SAFE_INTEGER): number {
    let result = 0;
    let scale = 1;
    // Eight 7-bit groups hold 56 bits, more than a safe integer's 53: a ninth group is out of range.
    for (let index = 0; index < 8; index++) {
      const byte = this.uint8();
      result += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) {
        if (byte === 0 && index > 0) this.fail('varint-not-canonical', 'varint has a redundant trailing zero byte');
        if (result > max) this.fail('out-of-range', `value above ${max}`);
        return result;
      }
      scale *= 0x80;
    }
    return this.fail('out-of-range', 'varint above 2^53 - 1');
  }

  uvarint64(): bigint {
    // Seven 7-bit groups (49 bits) are exact in a number: most values take this path.
    const start = this.offsetBytes;
    let small = 0;
    let scale = 1;
    for (let index = 0; index < 7 && this.offsetBytes < this.input.length; index++) {
      const byte = this.input[this.offsetBytes++]!;
      small += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) {
        if (byte === 0 && index > 0) this.fail('varint-not-canonical', 'varint has a redundant trailing zero byte');
        return BigInt(small);
      }
      scale *= 0x80;
    }
    this.offsetBytes = start;
    return this.uvarint64Slow();
  }

  private uvarint64Slow(): bigint {
    let result = 0n;
    for (let index = 0; index < 10; index++) {
      const byte = this.uint8();
      if (index === 9 && byte > 1) this.fail('out-of-range', 'varint above 2^64 - 1');
      result |= BigInt(byte & 0x7f) << BigInt(7 * index);
      if ((byte & 0x80) === 0) {
        if (byte === 0 && index > 0) this.fail('varint-not-canonical', 'varint has a redundant trailing zero byte');
        return result <= UINT64_MAX ? result : this.fail('out-of-range', 'varint above 2^64 - 1');
      }
    }
    return this.fail('varint-too-long', 'varint longer than 10 bytes');
  }

  svarint64(): bigint {
    const zigzag = this.uvarint64();
    return (zigzag & 1n) === 0n ? zigzag >> 1n : -((zigzag + 1n) >> 1n);
  }

  /** A zigzag varint that must hold a safe integer (what `BinaryWriter.svarint` writes). */
  svarint(): number {
    const start = this.offsetBytes;
    const value = this.svarint64();
    if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new BinaryDecodeError('out-of-range', start, 'integer beyond 2^53');
    }
    return Number(value);
  }

  /** A fixed-width unsigned 32-bit integer, little-endian. */
  uint32le(): number {
    this.need(4);
    const value = this.dataView().getUint32(this.offsetBytes, true);
    this.offsetBytes += 4;
    return value;
  }

  /** A fixed-width unsigned 64-bit integer, little-endian, that must be a safe integer. */
  uint64le(): number {
    this.need(8);
    const view = this.dataView();
    const low = view.getUint32(this.offsetBytes, true);
    const high = view.getUint32(this.offsetBytes + 4, true);
    if (high > MAX_SAFE_HIGH_WORD) this.fail('out-of-range', 'uint64 exceeds 2^53 - 1');
    this.offsetBytes += 8;
    return high * TWO_POW_32 + low;
  }

  /** A fixed-width unsigned 64-bit integer, little-endian. */
  biguint64le(): bigint {
    this.need(8);
    const value = this.dataView().getBigUint64(this.offsetBytes, true);
    this.offsetBytes += 8;
    return value;
  }

  /** A fixed-width two's-complement 64-bit integer, little-endian. */
  bigint64le(): bigint {
    this.need(8);
    const value = this.dataView().getBigInt64(this.offsetBytes, true);
    this.offsetBytes += 8;
    return value;
  }

  private dataView(): DataView {
    return (this.view ??= new DataView(this.input.buffer, this.input.byteOffset, this.input.byteLength));
  }

  /** `lengthBytes` raw bytes as a binary string, one code unit per byte (see latin1FromBytes). */
  latin1(lengthBytes: number): string {
    this.need(lengthBytes);
    const text = latin1FromBytes(this.input.subarray(this.offsetBytes, this.offsetBytes + lengthBytes));
    this.offsetBytes += lengthBytes;
    return text;
  }

  /** `lengthBytes` raw bytes (a copy). */
  raw(lengthBytes: number): Uint8Array {
    this.need(lengthBytes);
    // Not input.slice: on a Node Buffer (what gRPC and fs hand over) slice is a view, not a copy.
    const out = new Uint8Array(this.input.subarray(this.offsetBytes, this.offsetBytes + lengthBytes));
    this.offsetBytes += lengthBytes;
    return out;
  }

  /** A length-prefixed byte string of at most `maxLengthBytes`. */
  bytes(maxLengthBytes: number): Uint8Array {
    return this.raw(this.byteStringLength(maxLengthBytes));
  }

  /**
   * The same as `bytes`, as a view of the input instead of a copy: for a large section decoded at
   * once and not kept (a copy of hundreds of MB costs seconds); whoever keeps it keeps the input.
   */
  bytesView(maxLengthBytes: number): Uint8Array {
    return this.rawView(this.byteStringLength(maxLengthBytes));
  }

  /** `lengthBytes` raw bytes as a view of the input (see bytesView), not a copy. */
  rawView(lengthBytes: number): Uint8Array {
    this.need(lengthBytes);
    const view = this.input.subarray(this.offsetBytes, this.offsetBytes + lengthBytes);
    this.offsetBytes += lengthBytes;
    return view;
  }

  private byteStringLength(maxLengthBytes: number): number {
    const start = this.offsetBytes;
    const length = this.uvarint();
    if (length > maxLengthBytes) {
      throw new BinaryDecodeError('too-large', start, `byte string of ${length} bytes, limit ${maxLengthBytes}`);
    }
    return length;
  }

  /** A length-prefixed strict UTF-8 string of at most `maxLengthBytes` encoded bytes. */
  string(maxLengthBytes: number): string {
    const start = this.offsetBytes;
    const length = this.uvarint();
    if (length > maxLengthBytes) {
      throw new BinaryDecodeError('too-large', start, `byte string of ${length} bytes, limit ${maxLengthBytes}`);
    }
    this.need(length);
    if (length <= ASCII_FAST_PATH_BYTES) {
      const ascii = this.readAscii(length);
      if (ascii !== undefined) return ascii;
    }
    const text = decodeUtf8Strict(this.raw(length));
    if (text === undefined) throw new BinaryDecodeError('invalid-utf8', start, 'string is not UTF-8');
    return text;
  }

  /** `length` bytes as a string when they are all ASCII (then consumed); undefined otherwise. */
  private readAscii(length: number): string | undefined {
    const input = this.input;
    const end = this.offsetBytes + length;
    let text = '';
    for (let i = this.offsetBytes; i < end; i++) {
      const byte = input[i]!;
      if (byte >= 0x80) return undefined;
      text += String.fromCharCode(byte);
    }
    this.offsetBytes = end;
    return text;
  }

  /** A count of repeated items, capped, and checked against the bytes left (each item ≥ 1 byte). */
  count(maxItems: number): number {
    const start = this.offsetBytes;
    const items = this.uvarint();
    if (items > maxItems) throw new BinaryDecodeError('too-large', start, `${items} items, limit ${maxItems}`);
    if (items > this.remaining) throw new BinaryDecodeError('truncated', start, `${items} items cannot fit`);
    return items;
  }

  /** Fails unless every byte was consumed. */
  expectEnd(): void {
    if (this.remaining !== 0) this.fail('trailing-bytes', `${this.remaining} bytes after the end`);
  }
}
