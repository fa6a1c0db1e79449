// Byte-string helpers shared by every scope that handles etcd keys (raw bytes, compared
// lexicographically as etcd does) and by code that must stay free of Node's Buffer.

interface TextCodecs {
  TextEncoder: new () => { encode(input: string): Uint8Array };
  TextDecoder: new (label?: string, options?: { fatal?: boolean }) => { decode(input: Uint8Array): string };
}

const codecs = globalThis as unknown as TextCodecs;
const encoder = new codecs.TextEncoder();
const decoder = new codecs.TextDecoder('utf-8');

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** A string from UTF-8 bytes (invalid sequences become U+FFFD). */
export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Lexicographic unsigned comparison, as etcd and Go's bytes.Compare order keys: -1, 0 or 1. */
export function compareBytes(a: Uint8Array, b: Uint8Array): -1 | 0 | 1 {
  const length = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.length === b.length) return 0;
  return a.length < b.length ? -1 : 1;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const HEX = '0123456789abcdef';

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    out += HEX[byte >>> 4]! + HEX[byte & 0x0f]!;
  }
  return out;
}

export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new TypeError('fromHex: input must be an even-length hexadecimal string');
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * The smallest key greater than every key with this prefix (etcd's `GetPrefixRangeEnd`):
 * increment the last byte below 0xff and cut after it; an all-0xff (or empty) prefix has no
 * such key, which etcd writes as the single byte 0x00 ("to the end of the key space").
 * Always a fresh array: `prefix` may be a Node Buffer, whose `slice` is a view, not a copy.
 */
export function prefixRangeEnd(prefix: Uint8Array): Uint8Array {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i]! < 0xff) {
      const end = new Uint8Array(i + 1);
      end.set(prefix.subarray(0, i + 1));
      end[i] = prefix[i]! + 1;
      return end;
    }
  }
  return new Uint8Array([0]);
}

/**
 * `bytes` cut at `cuts` (positions in any order; duplicates and those past the end are ignored):
 * the pieces in order, views of `bytes`, together all of it (an empty piece where two cuts meet
 * the ends).
 */
export function splitBytes(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((cut) => Math.min(Math.max(cut, 0), bytes.length)))].sort((x, y) => x - y);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, cut));
    from = cut;
  }
  return pieces;
}
