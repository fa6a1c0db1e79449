import { assert } from '@ward/shared/errors';
import { concatBytes } from '@ward/shared/bytes';
import { latin1IntoBytes } from './latin1';
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
const TWO_POW_32 = 0x1_0000_0000;
/** The most one write reserves at once (a 64-bit varint); a sink's chunk must hold it. */
const LARGEST_RESERVATION = 10;
/**
 * Where a bigint's 8 bytes are laid out before being copied into a writer's buffer. Writers store
 * fixed-width numbers byte by byte and keep no DataView of their own: making one per writer costs
 * about as much as encoding a short message.
 */
const SCRATCH = new Uint8Array(8);
const SCRATCH_VIEW = new DataView(SCRATCH.buffer);

/** Bytes of `value` (a non-negative safe integer) as {@link BinaryWriter.uvarint} writes it. */
export function uvarintBytes(value: number): number {
  let bytes = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) bytes++;
  return bytes;
}

/**
 * Writes `value` (a non-negative safe integer, unchecked) as {@link BinaryWriter.uvarint} does into
 * `target` at `offset`, which has room for it; returns the offset after it.
 */
export function putUvarint(target: Uint8Array, offset: number, value: number): number {
  let at = offset;
  let rest = value;
  while (rest >= 0x80) {
    target[at++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  target[at++] = rest;
  return at;
}

/** Thrown when a writer would pass its byte limit: the value is too large for the format. */
export class BinaryLimitError extends RangeError {
  readonly limitBytes: number;

  constructor(limitBytes: number) {
    super(`encoding exceeds the limit of ${limitBytes} bytes`);
    this.name = 'BinaryLimitError';
    this.limitBytes = limitBytes;
  }
}

/** Receives a streaming writer's bytes chunk by chunk; a chunk is only valid during the call. */
export interface BinarySink {
  write(chunk: Uint8Array): void;
}

export interface BinaryWriterOptions {
  /** First buffer size (default 256); a writer sized exactly hands that buffer out without a copy. */
  readonly initialCapacityBytes?: number;
  /** Writing past this many bytes throws a BinaryLimitError (not with a sink). */
  readonly maxBytes?: number;
  /**
   * Streams instead of growing: a fixed buffer of `initialCapacityBytes` (default 64 KiB) is
   * handed to the sink whenever it fills, and by `flush()`. Nothing is kept, so an encoding can be
   * hashed without being held.
   */
  readonly sink?: BinarySink;
  /**
   * With a sink: every chunk flushed is the sink's to keep (the writer goes on in a new buffer of
   * `initialCapacityBytes`), so a large encoding is collected without a copy of each chunk.
   */
  readonly handsOverChunks?: boolean;
  /**
   * With `handsOverChunks`: where the first buffer and the one after each flush come from (default:
   * new ones of `initialCapacityBytes`). A pool of buffers the sink's consumer has finished with keeps a long
   * encoding in memory already touched instead of fresh pages (on some machines the dearest part
   * of writing a large state).
   */
  readonly nextBuffer?: () => Uint8Array;
}

/**
 * Appends values to a byte buffer in one canonical form: unsigned LEB128 varints (shortest form
 * only), zigzag varints for signed 64-bit values, length-prefixed byte strings and strict UTF-8
 * strings, and fixed-width little-endian integers for formats that want them. The same values
 * always give the same bytes, which replicated logs and state hashes need. The buffer grows, or,
 * with a sink, streams out in chunks.
 */
export class BinaryWriter {
  private buffer: Uint8Array;
  private lengthBytes = 0;
  /** Bytes already handed to the sink. */
  private flushedBytes = 0;
  private readonly sink: BinarySink | undefined;
  /** The size of a new buffer after a flush that handed the previous one over (0: reuse it). */
  private readonly handOverBytes: number;
  private readonly nextBuffer: (() => Uint8Array) | undefined;
  readonly maxBytes: number;

  constructor(options: BinaryWriterOptions = {}) {
    this.sink = options.sink;
    const initial = options.initialCapacityBytes ?? (this.sink === undefined ? 256 : 64 * 1024);
    assert(options.handsOverChunks !== true || this.sink !== undefined, 'only a streaming writer hands chunks over');
    this.handOverBytes = options.handsOverChunks === true ? initial : 0;
    assert(options.nextBuffer === undefined || options.handsOverChunks === true, 'only a writer that hands its chunks over takes its next buffer from elsewhere');
    this.nextBuffer = options.nextBuffer;
    this.maxBytes = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
    assert(Number.isSafeInteger(initial) && initial > 0, 'initial capacity is a positive integer');
    assert(Number.isSafeInteger(this.maxBytes) && this.maxBytes > 0, 'maxBytes is a positive integer');
    assert(this.sink === undefined || (options.maxBytes === undefined && initial >= LARGEST_RESERVATION), 'a streaming writer has no byte limit and a chunk of at least 10 bytes');
    this.buffer = this.nextBuffer === undefined ? new Uint8Array(Math.min(initial, this.maxBytes)) : this.takeNextBuffer(this.nextBuffer);
  }

  private takeNextBuffer(nextBuffer: () => Uint8Array): Uint8Array {
    const next = nextBuffer();
    assert(next.length >= LARGEST_RESERVATION, 'a streaming writer needs a buffer of at least 10 bytes');
    return next;
  }

  /** Bytes written so far (with a sink, including those already flushed). */
  get length(): number {
    return this.flushedBytes + this.lengthBytes;
  }

  /** Room for `extraBytes` more; small, so every write inlines it (growing is out of line). */
  private reserve(extraBytes: number): void {
    if (this.lengthBytes + extraBytes > this.buffer.length) this.makeRoom(extraBytes);
  }

  private makeRoom(extraBytes: number): void {
    if (this.sink !== undefined) {
      this.flush();
      return;
    }
    const needed = this.lengthBytes + extraBytes;
    if (needed > this.maxBytes) throw new BinaryLimitError(this.maxBytes);
    let capacity = this.buffer.length * 2;
    while (capacity < needed) capacity *= 2;
    const grown = new Uint8Array(Math.min(capacity, this.maxBytes));
    grown.set(this.buffer.subarray(0, this.lengthBytes));
    this.buffer = grown;
  }

  uint8(value: number): this {
    if ((value & 0xff) !== value) throw new TypeError(`uint8 out of range: ${value}`);
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
    this.lengthBytes = putUvarint(this.buffer, this.lengthBytes, value);
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

  /** A fixed-width unsigned 32-bit integer, little-endian. */
  uint32le(value: number): this {
    if (value >>> 0 !== value) throw new TypeError(`uint32 out of range: ${value}`);
    this.reserve(4);
    const buffer = this.buffer;
    const at = this.lengthBytes;
    buffer[at] = value;
    buffer[at + 1] = value >>> 8;
    buffer[at + 2] = value >>> 16;
    buffer[at + 3] = value >>> 24;
    this.lengthBytes = at + 4;
    return this;
  }

  /** A non-negative safe integer as a fixed-width unsigned 64-bit integer, little-endian. */
  uint64le(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`uint64 needs a non-negative safe integer: ${value}`);
    this.reserve(8);
    const low = value >>> 0;
    const high = (value - low) / TWO_POW_32;
    const buffer = this.buffer;
    const at = this.lengthBytes;
    buffer[at] = low;
    buffer[at + 1] = low >>> 8;
    buffer[at + 2] = low >>> 16;
    buffer[at + 3] = low >>> 24;
    buffer[at + 4] = high;
    buffer[at + 5] = high >>> 8;
    buffer[at + 6] = high >>> 16;
    buffer[at + 7] = high >>> 24;
    this.lengthBytes = at + 8;
    return this;
  }

  /** A non-negative safe integer as a fixed-width unsigned 64-bit integer, big-endian. */
  uint64be(value: number): this {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`uint64 needs a non-negative safe integer: ${value}`);
    this.reserve(8);
    const high = Math.floor(value / TWO_POW_32);
    const low = value >>> 0;
    const buffer = this.buffer;
    let at = this.lengthBytes;
    for (let shift = 24; shift >= 0; shift -= 8) buffer[at++] = (high >>> shift) & 0xff;
    for (let shift = 24; shift >= 0; shift -= 8) buffer[at++] = (low >>> shift) & 0xff;
    this.lengthBytes = at;
    return this;
  }

  /** A bigint in [0, 2^64) as a fixed-width unsigned 64-bit integer, little-endian. */
  biguint64le(value: bigint): this {
    if (value < 0n || value > UINT64_MAX) throw new TypeError(`uint64 out of range: ${value}`);
    this.reserve(8);
    SCRATCH_VIEW.setBigUint64(0, value, true);
    return this.copyScratch8();
  }

  /** A bigint in [-2^63, 2^63) as a fixed-width two's-complement 64-bit integer, little-endian. */
  bigint64le(value: bigint): this {
    if (value < INT64_MIN || value > INT64_MAX) throw new TypeError(`int64 out of range: ${value}`);
    this.reserve(8);
    SCRATCH_VIEW.setBigInt64(0, value, true);
    return this.copyScratch8();
  }

  /** Appends the 8 bytes just laid out in SCRATCH (room already reserved: a flush cannot intervene). */
  private copyScratch8(): this {
    const buffer = this.buffer;
    const at = this.lengthBytes;
    buffer[at] = SCRATCH[0]!;
    buffer[at + 1] = SCRATCH[1]!;
    buffer[at + 2] = SCRATCH[2]!;
    buffer[at + 3] = SCRATCH[3]!;
    buffer[at + 4] = SCRATCH[4]!;
    buffer[at + 5] = SCRATCH[5]!;
    buffer[at + 6] = SCRATCH[6]!;
    buffer[at + 7] = SCRATCH[7]!;
    this.lengthBytes = at + 8;
    return this;
  }

  /** Raw bytes with no length prefix (fixed-size fields such as a magic number). */
  raw(bytes: Uint8Array): this {
    if (bytes.length <= this.buffer.length - this.lengthBytes) {
      this.buffer.set(bytes, this.lengthBytes);
      this.lengthBytes += bytes.length;
      return this;
    }
    if (this.sink !== undefined) {
      for (let offset = 0; offset < bytes.length; ) {
        if (this.lengthBytes === this.buffer.length) this.flush();
        const count = Math.min(bytes.length - offset, this.buffer.length - this.lengthBytes);
        this.buffer.set(bytes.subarray(offset, offset + count), this.lengthBytes);
        this.lengthBytes += count;
        offset += count;
      }
      return this;
    }
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.lengthBytes);
    this.lengthBytes += bytes.length;
    return this;
  }

  /** The bytes of a binary string (one code unit in 0..255 per byte; see latin1FromBytes), no length prefix. */
  latin1(text: string): this {
    if (this.sink === undefined || text.length <= this.buffer.length - this.lengthBytes) {
      this.reserve(text.length);
      this.lengthBytes = latin1IntoBytes(text, this.buffer, this.lengthBytes);
      return this;
    }
    for (let offset = 0; offset < text.length; ) {
      if (this.lengthBytes === this.buffer.length) this.flush();
      const count = Math.min(text.length - offset, this.buffer.length - this.lengthBytes);
      this.lengthBytes = latin1IntoBytes(text, this.buffer, this.lengthBytes, offset, offset + count);
      offset += count;
    }
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
    this.latin1(text);
    return true;
  }

  /** With a sink: hands what is buffered to it. */
  flush(): void {
    assert(this.sink !== undefined, 'only a streaming writer flushes');
    if (this.lengthBytes === 0) return;
    this.sink.write(this.buffer.subarray(0, this.lengthBytes));
    this.flushedBytes += this.lengthBytes;
    this.lengthBytes = 0;
    if (this.handOverBytes === 0) return;
    this.buffer = this.nextBuffer === undefined ? new Uint8Array(this.handOverBytes) : this.takeNextBuffer(this.nextBuffer);
  }

  /**
   * The bytes written so far. A copy, except when they fill the buffer exactly (a writer sized
   * for its output): then the buffer itself, which the writer never changes again (a later write
   * grows into a new one).
   */
  finish(): Uint8Array {
    assert(this.sink === undefined, 'a streaming writer flushes; it has no bytes to finish with');
    return this.lengthBytes === this.buffer.length ? this.buffer : this.buffer.slice(0, this.lengthBytes);
  }
}

/** A sink that keeps copies of every chunk and joins them at the end. */
export class CollectingSink implements BinarySink {
  private readonly chunks: Uint8Array[] = [];
  private lengthBytes = 0;

  write(chunk: Uint8Array): void {
    this.chunks.push(new Uint8Array(chunk)); // a copy even of a Buffer (whose slice is a view)
    this.lengthBytes += chunk.length;
  }

  bytes(): Uint8Array {
    return joinChunks(this.chunks);
  }
}

/**
 * A sink that keeps the chunks it is handed, uncopied: for a writer that hands its chunks over
 * (`handsOverChunks`), or for chunks that are never changed after they are written.
 */
export class ChunkSink implements BinarySink {
  readonly chunks: Uint8Array[] = [];
  private lengthBytes = 0;

  write(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.lengthBytes += chunk.length;
  }

  /** Bytes kept so far. */
  get length(): number {
    return this.lengthBytes;
  }
}

/** The bytes in `chunks`, all together. */
export function chunksByteLength(chunks: readonly Uint8Array[]): number {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  return total;
}

/** One buffer holding `chunks` in order (a single copy; the only chunk itself when there is one). */
export function joinChunks(chunks: readonly Uint8Array[]): Uint8Array {
  return chunks.length === 1 ? chunks[0]! : concatBytes(...chunks);
}

/** A sink that forwards to several sinks. */
export class TeeSink implements BinarySink {
  constructor(private readonly sinks: readonly BinarySink[]) {}

  write(chunk: Uint8Array): void {
    for (const sink of this.sinks) sink.write(chunk);
  }
}
