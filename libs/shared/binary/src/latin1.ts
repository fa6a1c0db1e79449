// Binary strings: one UTF-16 code unit in 0..255 per byte (Node's 'latin1'). V8 keeps such a
// string at one byte per character, and its order (code unit by code unit, a prefix first) is
// unsigned byte order, so formats that keep bytes as strings (kv-store's keys and values) compare
// and hash them natively.
//
// Under Node.js both directions run in its native latin1 codec (the one behind
// `buffer.toString('latin1')` and `buffer.write(text, 'latin1')`), called on any Uint8Array
// without wrapping it in a Buffer: one copy, no per-byte JavaScript. Against String.fromCharCode
// over the bytes and a charCodeAt loop, a 256-byte value converts about 10x faster either way and
// a 4 KiB one 35-100x; every key and value a member decodes (entries, snapshots) and encodes
// (snapshots, answers) goes through here. Elsewhere the portable code below does the same. Into
// bytes, a string of at most SHORT_COPY_CHARS (most keys) is copied by the loop even under Node.js:
// for 8 and 16 bytes the codec's call costs about three times the loop's copy (51 / 17 and 92 /
// 32 ns), at 24 they are even, and the codec is ahead from 32 on.

interface NativeLatin1 {
  latin1Slice(this: Uint8Array, start: number, end: number): string;
  latin1Write(this: Uint8Array, text: string, offset: number, length: number): number;
}

const nodeBuffer = (globalThis as { Buffer?: { prototype: Partial<NativeLatin1> } }).Buffer?.prototype;
const latin1Slice = typeof nodeBuffer?.latin1Slice === 'function' ? nodeBuffer.latin1Slice : undefined;
const latin1Write = typeof nodeBuffer?.latin1Write === 'function' ? nodeBuffer.latin1Write : undefined;

/** Strings copied into bytes by a loop rather than Node's codec (see the top of this file). */
const SHORT_COPY_CHARS = 16;

/** Arguments per String.fromCharCode call: well below every engine's argument limit. */
const CHUNK_BYTES = 8192;

/** latin1FromBytes without Node's codec. */
export function portableLatin1FromBytes(bytes: Uint8Array): string {
  const length = bytes.length;
  if (length <= CHUNK_BYTES) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  let out = '';
  for (let offset = 0; offset < length; offset += CHUNK_BYTES) {
    out += String.fromCharCode.apply(null, bytes.subarray(offset, Math.min(offset + CHUNK_BYTES, length)) as unknown as number[]);
  }
  return out;
}

/** latin1IntoBytes's copy without Node's codec (the range is checked by the caller). */
export function portableLatin1IntoBytes(text: string, target: Uint8Array, offset: number, from: number, to: number): void {
  let position = offset;
  for (let i = from; i < to; i++) target[position++] = text.charCodeAt(i);
}

/** The binary string of `bytes` (a copy: later changes to `bytes` do not reach it). */
export function latin1FromBytes(bytes: Uint8Array): string {
  if (bytes.length === 0) return '';
  return latin1Slice === undefined ? portableLatin1FromBytes(bytes) : latin1Slice.call(bytes, 0, bytes.length);
}

/**
 * Writes the bytes of the binary string `text[from, to)` into `target` at `offset`; returns the
 * offset after them. Code units above 255 keep their low byte (callers pass binary strings only).
 * `target` must have room for them: a range past its end is a RangeError, not a short write.
 */
export function latin1IntoBytes(text: string, target: Uint8Array, offset: number, from = 0, to = text.length): number {
  const count = to - from;
  if (count <= 0) return offset;
  if (offset < 0 || offset + count > target.length) throw new RangeError(`latin1IntoBytes: ${count} bytes at ${offset} do not fit ${target.length}`);
  if (latin1Write === undefined || count <= SHORT_COPY_CHARS) portableLatin1IntoBytes(text, target, offset, from, to);
  else latin1Write.call(target, from === 0 && to === text.length ? text : text.slice(from, to), offset, count);
  return offset + count;
}
