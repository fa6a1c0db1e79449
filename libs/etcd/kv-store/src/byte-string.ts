// Byte strings: the store's internal form of keys and values. Each byte becomes one UTF-16 code
// unit in 0..255, so V8 keeps the string one byte per character (compact), and JavaScript's
// string order (code unit by code unit, a prefix first) is exactly etcd's unsigned byte order.
// Comparisons and hashing of keys then run natively instead of in a JavaScript byte loop.

/** A string whose every code unit is in 0..255, standing for those bytes. */
export type ByteString = string;

export const EMPTY_BYTE_STRING: ByteString = '';

/** Arguments per String.fromCharCode call: well below every engine's argument limit. */
const CHUNK_BYTES = 8192;

/** The byte string of `bytes` (a copy: later changes to `bytes` do not reach it). */
export function toByteString(bytes: Uint8Array): ByteString {
  const length = bytes.length;
  if (length === 0) return EMPTY_BYTE_STRING;
  if (length <= CHUNK_BYTES) {
    return String.fromCharCode.apply(null, bytes as unknown as number[]);
  }
  let out = '';
  for (let offset = 0; offset < length; offset += CHUNK_BYTES) {
    const chunk = bytes.subarray(offset, Math.min(offset + CHUNK_BYTES, length));
    out += String.fromCharCode.apply(null, chunk as unknown as number[]);
  }
  return out;
}

/** The bytes of a byte string, in a fresh array. */
export function fromByteString(text: ByteString): Uint8Array {
  const length = text.length;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Writes the bytes of `text` into `target` at `offset`; returns the offset after them. */
export function writeByteString(text: ByteString, target: Uint8Array, offset: number): number {
  const length = text.length;
  for (let i = 0; i < length; i++) target[offset + i] = text.charCodeAt(i);
  return offset + length;
}

/** The byte string of `bytes[start, end)` without an intermediate copy. */
export function byteStringOf(bytes: Uint8Array, start: number, end: number): ByteString {
  return toByteString(bytes.subarray(start, end));
}

/** The smallest byte string greater than `key` (etcd's `key + "\x00"`). */
export function successorKey(key: ByteString): ByteString {
  return key + '\u0000';
}
