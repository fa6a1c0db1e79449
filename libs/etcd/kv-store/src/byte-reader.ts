import type { ByteString } from './byte-string';
import { byteStringOf } from './byte-string';
import { KVSnapshotInvalidError } from './errors';

/** Longest LEB128 varint of a safe integer. */
const MAX_VARINT_BYTES = 8;

/**
 * A bounds-checked decoder for ByteWriter's encoding. Every malformed input (truncation, an
 * overlong or unsafe varint) raises KVSnapshotInvalidError with the offset; nothing else throws.
 */
export class ByteReader {
  private position = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get offset(): number {
    return this.position;
  }

  get remaining(): number {
    return this.bytes.length - this.position;
  }

  fail(reason: string): never {
    throw new KVSnapshotInvalidError(reason, this.position);
  }

  private need(count: number, what: string): void {
    if (this.bytes.length - this.position < count) this.fail(`truncated ${what}`);
  }

  readByte(what: string): number {
    this.need(1, what);
    return this.bytes[this.position++]!;
  }

  readVarint(what: string): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      const byte = this.readByte(what);
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) {
        if (!Number.isSafeInteger(value)) this.fail(`${what} is not a safe integer`);
        if (i > 0 && byte === 0) this.fail(`${what} is not minimally encoded`);
        return value;
      }
      scale *= 0x80;
    }
    return this.fail(`${what} varint too long`);
  }

  readInt64(what: string): bigint {
    this.need(8, what);
    const value = this.view.getBigInt64(this.position, true);
    this.position += 8;
    return value;
  }

  readUint32(what: string): number {
    this.need(4, what);
    const value = this.view.getUint32(this.position, true);
    this.position += 4;
    return value;
  }

  readByteString(length: number, what: string): ByteString {
    this.need(length, what);
    const text = byteStringOf(this.bytes, this.position, this.position + length);
    this.position += length;
    return text;
  }

  readLengthPrefixed(what: string): ByteString {
    return this.readByteString(this.readVarint(`${what} length`), what);
  }
}
