// Binary strings: one UTF-16 code unit in 0..255 per byte (Node's 'latin1'). V8 keeps such a
// string at one byte per character, and its order (code unit by code unit, a prefix first) is
// unsigned byte order, so formats that keep bytes as strings (kv-store's keys and values) compare
// and hash them natively.

/** Arguments per String.fromCharCode call: well below every engine's argument limit. */
const CHUNK_BYTES = 8192;

/** The binary string of `bytes` (a copy: later changes to `bytes` do not reach it). */
export function latin1FromBytes(bytes: Uint8Array): string {
  const length = bytes.length;
  if (length === 0) return '';
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

/**
 * Writes the bytes of the binary string `text[from, to)` into `target` at `offset`; returns the
 * offset after them. Code units above 255 keep their low byte (callers pass binary strings only).
 */
export function latin1IntoBytes(text: string, target: Uint8Array, offset: number, from = 0, to = text.length): number {
  let position = offset;
  for (let i = from; i < to; i++) target[position++] = text.charCodeAt(i);
  return position;
}
