import { latin1FromBytes, latin1IntoBytes } from '@ward/shared/binary';

// Byte strings: the store's internal form of keys and values. Each byte becomes one UTF-16 code
// unit in 0..255 (shared/binary's latin1 strings), so V8 keeps the string one byte per character
// (compact), and JavaScript's string order (code unit by code unit, a prefix first) is exactly
// etcd's unsigned byte order. Comparisons and hashing of keys then run natively instead of in a
// JavaScript byte loop.

/** A string whose every code unit is in 0..255, standing for those bytes. */
export type ByteString = string;

export const EMPTY_BYTE_STRING: ByteString = '';

/** The byte string of `bytes` (a copy: later changes to `bytes` do not reach it). */
export const toByteString: (bytes: Uint8Array) => ByteString = latin1FromBytes;

/** The bytes of a byte string, in a fresh array. */
export function fromByteString(text: ByteString): Uint8Array {
  const out = new Uint8Array(text.length);
  latin1IntoBytes(text, out, 0);
  return out;
}

/** Writes the bytes of `text` into `target` at `offset`; returns the offset after them. */
export function writeByteString(text: ByteString, target: Uint8Array, offset: number): number {
  return latin1IntoBytes(text, target, offset);
}

/** The smallest byte string greater than `key` (etcd's `key + "\x00"`). */
export function successorKey(key: ByteString): ByteString {
  return key + '\u0000';
}
