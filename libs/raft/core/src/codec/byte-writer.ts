import { assert } from '@ward/shared/errors';

const TWO_32 = 0x1_0000_0000;

/** Writes little-endian fields into a buffer sized up front (the codec computes exact sizes). */
export class ByteWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  private offset = 0;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }

  u8(value: number): void {
    this.view.setUint8(this.offset, value);
    this.offset += 1;
  }

  u32(value: number): void {
    this.view.setUint32(this.offset, value, true);
    this.offset += 4;
  }

  /** A safe non-negative integer as uint64. */
  u64(value: number): void {
    assert(Number.isSafeInteger(value) && value >= 0, `u64 field must be a non-negative safe integer, got ${value}`);
    this.view.setUint32(this.offset, value >>> 0, true);
    this.view.setUint32(this.offset + 4, Math.floor(value / TWO_32), true);
    this.offset += 8;
  }

  /** A bigint in [0, 2^64) as uint64. */
  big64(value: bigint): void {
    this.view.setBigUint64(this.offset, value, true);
    this.offset += 8;
  }

  /** u32 length, then the bytes. */
  bytesField(value: Uint8Array): void {
    this.u32(value.length);
    this.bytes.set(value, this.offset);
    this.offset += value.length;
  }

  /** Asserts the precomputed size was exact. */
  finish(): Uint8Array {
    assert(this.offset === this.bytes.length, `codec size mismatch: wrote ${this.offset} of ${this.bytes.length}`);
    return this.bytes;
  }
}
