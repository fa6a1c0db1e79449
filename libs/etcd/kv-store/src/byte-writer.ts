import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';

/** Receives encoded bytes chunk by chunk; a chunk is only valid during the call. */
export interface ByteSink {
  write(chunk: Uint8Array): void;
}

const BUFFER_BYTES = 64 * 1024;
const TWO_POW_32 = 0x1_0000_0000;

/**
 * A buffered binary encoder: unsigned LEB128 varints for safe integers, fixed little-endian
 * int64 for lease IDs, raw bytes from byte strings. Flushes full buffers into a sink, so the
 * same encoding can be collected (a snapshot) or hashed without being held (a state hash).
 */
export class ByteWriter {
  private readonly buffer = new Uint8Array(BUFFER_BYTES);
  private readonly view = new DataView(this.buffer.buffer);
  private position = 0;

  constructor(private readonly sink: ByteSink) {}

  private reserve(bytes: number): void {
    assert(bytes <= BUFFER_BYTES, 'byte-writer: reservation larger than the buffer');
    if (this.position + bytes > BUFFER_BYTES) this.flush();
  }

  writeByte(value: number): void {
    this.reserve(1);
    this.buffer[this.position++] = value;
  }

  /** Unsigned LEB128 of a safe non-negative integer (at most 8 bytes). */
  writeVarint(value: number): void {
    assert(Number.isSafeInteger(value) && value >= 0, 'byte-writer: varint must be a safe non-negative integer');
    this.reserve(8);
    const buffer = this.buffer;
    let rest = value;
    while (rest >= 0x80) {
      buffer[this.position++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    buffer[this.position++] = rest;
  }

  /** Unsigned LEB128 of a non-negative bigint below 2^64 (a protobuf int64 such as a lease ID). */
  writeVarint64(value: bigint): void {
    assert(value >= 0n && value < 1n << 64n, 'byte-writer: varint64 must be in [0, 2^64)');
    if (value <= BigInt(Number.MAX_SAFE_INTEGER)) return this.writeVarint(Number(value));
    this.reserve(10);
    let rest = value;
    while (rest >= 0x80n) {
      this.buffer[this.position++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.buffer[this.position++] = Number(rest);
  }

  /** A safe non-negative integer as 8 big-endian bytes (bbolt's revision keys). */
  writeUint64BigEndian(value: number): void {
    assert(Number.isSafeInteger(value) && value >= 0, 'byte-writer: uint64 must be a safe non-negative integer');
    this.reserve(8);
    this.view.setUint32(this.position, Math.floor(value / TWO_POW_32));
    this.view.setUint32(this.position + 4, value >>> 0);
    this.position += 8;
  }

  /** Two's-complement little-endian int64. */
  writeInt64(value: bigint): void {
    this.reserve(8);
    this.view.setBigInt64(this.position, value, true);
    this.position += 8;
  }

  /** A fixed 32-bit unsigned little-endian integer. */
  writeUint32(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value < TWO_POW_32, 'byte-writer: uint32 out of range');
    this.reserve(4);
    this.view.setUint32(this.position, value, true);
    this.position += 4;
  }

  /** The raw bytes of a byte string (any length). */
  writeByteString(text: ByteString): void {
    let offset = 0;
    while (offset < text.length) {
      if (this.position === BUFFER_BYTES) this.flush();
      const count = Math.min(text.length - offset, BUFFER_BYTES - this.position);
      const buffer = this.buffer;
      let position = this.position;
      for (let i = 0; i < count; i++) buffer[position++] = text.charCodeAt(offset + i);
      this.position = position;
      offset += count;
    }
  }

  /** A varint length followed by the bytes. */
  writeLengthPrefixed(text: ByteString): void {
    this.writeVarint(text.length);
    this.writeByteString(text);
  }

  flush(): void {
    if (this.position === 0) return;
    this.sink.write(this.buffer.subarray(0, this.position));
    this.position = 0;
  }
}

/** A sink that keeps copies of every chunk and joins them at the end. */
export class CollectingSink implements ByteSink {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;

  write(chunk: Uint8Array): void {
    this.chunks.push(new Uint8Array(chunk)); // a copy even of a Buffer (whose slice is a view)
    this.length += chunk.length;
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}

/** A sink that forwards to several sinks. */
export class TeeSink implements ByteSink {
  constructor(private readonly sinks: readonly ByteSink[]) {}

  write(chunk: Uint8Array): void {
    for (const sink of this.sinks) sink.write(chunk);
  }
}
