import { CodecError } from '../errors';

const TWO_32 = 0x1_0000_0000;
/** Largest high word of a safe integer (2^53 - 1 >> 32). */
const MAX_SAFE_HIGH = 0x1f_ffff;

/** Reads little-endian fields with bounds checks; every failure is a CodecError. */
export class ByteReader {
  private readonly view: DataView;
  private offset = 0;

  constructor(
    private readonly bytes: Uint8Array,
    readonly what: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(reason: string): never {
    throw new CodecError(this.what, this.offset, reason);
  }

  private need(count: number, field: string): void {
    if (this.bytes.length - this.offset < count) this.fail(`truncated ${field}: need ${count} bytes, have ${this.bytes.length - this.offset}`);
  }

  remaining(): number {
    return this.bytes.length - this.offset;
  }

  u8(field: string): number {
    this.need(1, field);
    return this.view.getUint8(this.offset++);
  }

  u32(field: string): number {
    this.need(4, field);
    const value = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return value;
  }

  /** A uint64 that must fit a safe integer (indexes, terms). */
  u64(field: string): number {
    this.need(8, field);
    const low = this.view.getUint32(this.offset, true);
    const high = this.view.getUint32(this.offset + 4, true);
    if (high > MAX_SAFE_HIGH) this.fail(`${field} exceeds 2^53 - 1`);
    this.offset += 8;
    return high * TWO_32 + low;
  }

  big64(field: string): bigint {
    this.need(8, field);
    const value = this.view.getBigUint64(this.offset, true);
    this.offset += 8;
    return value;
  }

  /** u32 length then bytes, copied (decoded values never alias the input). */
  bytesField(field: string, maxBytes: number): Uint8Array {
    const length = this.u32(`${field} length`);
    if (length > maxBytes) this.fail(`${field} of ${length} bytes exceeds the limit of ${maxBytes}`);
    this.need(length, field);
    // Not bytes.slice: on a Node Buffer slice is a view, not a copy.
    const out = new Uint8Array(this.bytes.subarray(this.offset, this.offset + length));
    this.offset += length;
    return out;
  }

  /** A count that must not exceed `max` nor what the remaining bytes could hold. */
  count(field: string, max: number, minItemBytes: number): number {
    const n = this.u32(`${field} count`);
    if (n > max) this.fail(`${field} count ${n} exceeds the limit of ${max}`);
    if (n * minItemBytes > this.remaining()) this.fail(`${field} count ${n} exceeds the remaining input`);
    return n;
  }

  end(): void {
    if (this.offset !== this.bytes.length) this.fail(`${this.bytes.length - this.offset} trailing bytes`);
  }
}
