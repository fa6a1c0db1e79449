import { assert } from '@ward/shared/errors';
import { encodeUtf8Strict } from './utf8-strict';

const UINT64_MAX = (1n << 64n) - 1n;
const SAFE_MAX_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);
/** Zigzag of |v| < 2^52 stays below 2^53, so it can be computed with numbers. */
const ZIGZAG_NUMBER_LIMIT = 2 ** 52;
const ZIGZAG_NUMBER_LIMIT_BIGINT = BigInt(ZIGZAG_NUMBER_LIMIT);
/** Strings up to this length are checked for ASCII and copied without TextEncoder. */
const ASCII_FAST_PATH_CHARS = 64;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** Thrown when a writer would pass its byte limit: the value is too large for the format. */
export class BinaryLimitError extends RangeError {
  readonly limitBytes: number;

  constructor(limitBytes: number) {
    super(`encoding exceeds the limit of ${limitBytes} bytes`);
    this.name = 'BinaryLimitError';
    this.limitBytes = limitBytes;
  }
}

/**
 * Appends values to a growable byte buffer in one canonical form: unsigned LEB128 varints (shortest
 * form only), zigzag varints for signed 64-bit values, length-prefixed byte strings and strict UTF-8
 * strings. The same values always give the same bytes, which replicated logs and state hashes need.
 */
export class BinaryWriter {
  private buffer: Uint8Array;
  private lengthBytes = 0;
  readonly maxBytes: number;

  constructor(options: { initialCapacityBytes?: number; maxBytes?: number } = {}) {
    const initial = options.initialCapacityBytes ?? 256;
    this.maxBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    assert(Number.isSafeInteger(initial) && initial > 0, 'initial capacity is a positive integer');
    assert(Number.isSafeInteger(this.maxBytes) && this.maxBytes > 0, 'maxBytes is a positive integer');
    this.buffer = new Uint8Array(Math.min(initial, this.maxBytes));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.lengthBytes;
  }

  private reserve(extraBytes: number): void {
    const needed = this.lengthBytes + extraBytes;
    if (needed > this.maxBytes) throw new BinaryLimitError(this.maxBytes);
    if (needed <= this.buffer.length) return;
    let capacity = this.buffer.length * 2;
    while (capacity < needed) capacity *= 2;
    const grown = new Uint8Array(Math.min(capacity, this.maxBytes));
    grown.set(this.buffer.subarray(0, this.lengthBytes));
    this.buffer = grown;
  }

  uint8(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xff) throw new TypeError(`uint8 out of range: ${value}`);
    this.reserve(1);
    this.buffer[this.lengthBytes++] = value;
    return this;
  }

  bool(value: boolean): this {
    return this.uint8(value ? 1 : 0);
  }

  /** A non-negative safe integer (at most 2^53 - 1) as an unsigned varint. */
  uvarint(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`uvarint needs a non-negative safe integer: ${value}`);
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.lengthBytes++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buffer[this.lengthBytes++] = rest;
    return this;
  }

  /** An unsigned 64-bit integer as an unsigned varint (at most 10 bytes). */
  uvarint64(value: bigint): this {
    if (value < 0n || value > UINT64_MAX) throw new TypeError(`uvarint64 out of range: ${value}`);
    if (value <= SAFE_MAX_BIGINT) return this.uvarint(Number(value));
    this.reserve(10);
    let rest = value;
    while (rest >= 0x80n) {
      this.buffer[this.lengthBytes++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.buffer[this.lengthBytes++] = Number(rest);
    return this;
  }

  /** A signed 64-bit integer, zigzag-encoded (small magnitudes take few bytes). */
  svarint64(value: bigint): this {
    if (value < INT64_MIN || value > INT64_MAX) throw new TypeError(`svarint64 out of range: ${value}`);
    if (value > -ZIGZAG_NUMBER_LIMIT_BIGINT && value < ZIGZAG_NUMBER_LIMIT_BIGINT) return this.svarint(Number(value));
    const zigzag = value >= 0n ? value << 1n : ((-value) << 1n) - 1n;
    return this.uvarint64(zigzag);
  }

  /** A safe integer, zigzag-encoded: the same bytes as `svarint64(BigInt(value))`. */
  svarint(value: number): this {
    if (!Number.isSafeInteger(value)) throw new TypeError(`svarint needs a safe integer: ${value}`);
    if (value <= -ZIGZAG_NUMBER_LIMIT || value >= ZIGZAG_NUMBER_LIMIT) return this.svarint64(BigInt(value));
    return this.uvarint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  /** Raw bytes with no length prefix (fixed-size fields such as a magic number). */
  raw(bytes: Uint8Array): this {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.lengthBytes);
    this.lengthBytes += bytes.length;
    return this;
  }

  /** A length-prefixed byte string. */
  bytes(bytes: Uint8Array): this {
    this.uvarint(bytes.length);
    return this.raw(bytes);
  }

  /** A length-prefixed strict UTF-8 string (a TypeError for lone surrogates). */
  string(text: string): this {
    if (text.length <= ASCII_FAST_PATH_CHARS && this.writeAscii(text)) return this;
    return this.bytes(encodeUtf8Strict(text));
  }

  /** Writes a short ASCII string without an intermediate array; false (nothing written) otherwise. */
  private writeAscii(text: string): boolean {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return false;
    this.uvarint(text.length);
    this.reserve(text.length);
    for (let i = 0; i < text.length; i++) this.buffer[this.lengthBytes++] = text.charCodeAt(i);
    return true;
  }

  /** A copy of the bytes written so far. */
  finish(): Uint8Array {
    return this.buffer.slice(0, this.lengthBytes);
  }
}
