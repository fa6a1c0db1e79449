import { crc32c } from '@ward/shared/checksum';
import { assert } from '@ward/shared/errors';

/**
 * Frame layout (all little-endian, every frame starts and ends on an 8-byte boundary):
 *
 * ```
 * +0  u32  bodyBytes   type byte + checksum + payload (5 + payload length)
 * +4  u8   padBytes    zero bytes after the body up to the next 8-byte boundary (0..7)
 * +5  u8   FRAME_MAGIC format marker; a zero word (all 8 bytes 0) marks the end of the data
 * +6  u16  headerCheck low 16 bits of CRC-32C of bytes +0..+5
 * +8  u32  crc         CRC-32C of type + payload, seeded with the previous record's crc
 * +12 u8   type        RecordType
 * +13 ...  payload, then padBytes zero bytes
 * ```
 *
 * The 8-byte length word never straddles a disk sector, so a crash leaves it either written or
 * zero; the header check tells a flipped length apart from a torn write.
 */
export const LENGTH_WORD_BYTES = 8;
export const BODY_PREFIX_BYTES = 5;
export const FRAME_OVERHEAD_BYTES = LENGTH_WORD_BYTES + BODY_PREFIX_BYTES;
export const FRAME_MAGIC = 0xa5;
const CRC_OFFSET = 8;
const TYPE_OFFSET = 12;
const PAYLOAD_OFFSET = 13;

/** Bytes a record with a payload of `payloadBytes` occupies on disk, padding included. */
export function frameSizeBytes(payloadBytes: number): number {
  return (FRAME_OVERHEAD_BYTES + payloadBytes + 7) & ~7;
}

function headerCheck(bytes: Uint8Array, offset: number): number {
  return crc32c(bytes, 0, offset, offset + 6) & 0xffff;
}

/**
 * Encodes one frame at `offset` of `target` (which must have room for it) and returns the
 * record's crc, the seed of the next record. The record's payload is `payload`, followed by
 * `payloadTail` when given (an entry's data, copied here once instead of into a payload first).
 */
export function writeFrame(target: Uint8Array, offset: number, type: number, payload: Uint8Array, previousCrc: number, payloadTail?: Uint8Array): number {
  const payloadBytes = payload.length + (payloadTail?.length ?? 0);
  const size = frameSizeBytes(payloadBytes);
  assert(offset % 8 === 0, `frame offset ${offset} is not 8-byte aligned`);
  assert(offset + size <= target.length, `frame of ${size} bytes does not fit at ${offset} of ${target.length}`);
  const view = new DataView(target.buffer, target.byteOffset, target.byteLength);
  const bodyBytes = BODY_PREFIX_BYTES + payloadBytes;
  view.setUint32(offset, bodyBytes, true);
  view.setUint8(offset + 4, size - LENGTH_WORD_BYTES - bodyBytes);
  view.setUint8(offset + 5, FRAME_MAGIC);
  view.setUint16(offset + 6, headerCheck(target, offset), true);
  view.setUint8(offset + TYPE_OFFSET, type);
  target.set(payload, offset + PAYLOAD_OFFSET);
  if (payloadTail !== undefined) target.set(payloadTail, offset + PAYLOAD_OFFSET + payload.length);
  target.fill(0, offset + PAYLOAD_OFFSET + payloadBytes, offset + size);
  const crc = crc32c(target, previousCrc, offset + TYPE_OFFSET, offset + PAYLOAD_OFFSET + payloadBytes);
  view.setUint32(offset + CRC_OFFSET, crc, true);
  return crc;
}

/** What is found at an offset of a segment. */
export type FrameRead =
  /** A well-formed header; the body's crc still has to be checked against the chain. */
  | {
      readonly kind: 'frame';
      readonly type: number;
      readonly storedCrc: number;
      readonly bodyStart: number;
      readonly bodyEnd: number;
      readonly payloadStart: number;
      readonly next: number;
    }
  /** An all-zero length word: the end of the written data (preallocated space follows). */
  | { readonly kind: 'end' }
  /** The file ends inside the length word or inside the frame it announces. */
  | { readonly kind: 'short'; readonly frameEnd: number }
  /** A non-zero length word that fails its check or announces an impossible size. */
  | { readonly kind: 'badHeader'; readonly reason: string };

/** Reads the frame header at `offset` (8-byte aligned) of a segment's bytes. */
export function readFrame(bytes: Uint8Array, offset: number, maxPayloadBytes: number): FrameRead {
  assert(offset % 8 === 0, `frame offset ${offset} is not 8-byte aligned`);
  if (offset + LENGTH_WORD_BYTES > bytes.length) {
    return isZero(bytes, offset, bytes.length) ? { kind: 'end' } : { kind: 'short', frameEnd: offset + LENGTH_WORD_BYTES };
  }
  if (isZero(bytes, offset, offset + LENGTH_WORD_BYTES)) return { kind: 'end' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bodyBytes = view.getUint32(offset, true);
  const padBytes = view.getUint8(offset + 4);
  if (view.getUint8(offset + 5) !== FRAME_MAGIC || view.getUint16(offset + 6, true) !== headerCheck(bytes, offset)) {
    return { kind: 'badHeader', reason: 'record length word fails its check' };
  }
  if (bodyBytes < BODY_PREFIX_BYTES || bodyBytes - BODY_PREFIX_BYTES > maxPayloadBytes) {
    return { kind: 'badHeader', reason: `record body of ${bodyBytes} bytes is outside the allowed size` };
  }
  const next = offset + frameSizeBytes(bodyBytes - BODY_PREFIX_BYTES);
  if (padBytes !== next - offset - LENGTH_WORD_BYTES - bodyBytes) return { kind: 'badHeader', reason: `record padding ${padBytes} does not match its length` };
  if (next > bytes.length) return { kind: 'short', frameEnd: next };
  return {
    kind: 'frame',
    type: view.getUint8(offset + TYPE_OFFSET),
    storedCrc: view.getUint32(offset + CRC_OFFSET, true),
    bodyStart: offset + LENGTH_WORD_BYTES,
    bodyEnd: offset + LENGTH_WORD_BYTES + bodyBytes,
    payloadStart: offset + PAYLOAD_OFFSET,
    next,
  };
}

/** The crc a frame's body should carry given the previous record's crc. */
export function computeFrameCrc(bytes: Uint8Array, frame: { payloadStart: number; bodyEnd: number }, previousCrc: number): number {
  return crc32c(bytes, previousCrc, frame.payloadStart - 1, frame.bodyEnd);
}

/** True when bytes[start, end) are all zero. */
export function isZero(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}

const ZERO_CHUNK = Buffer.alloc(64 * 1024);

/** Offset just past the last non-zero byte of bytes[start, end), or `start` when all are zero. */
export function endOfNonZero(bytes: Uint8Array, start: number, end: number): number {
  let i = end;
  // Whole zero chunks from the end first, compared natively (memcmp): the unused rest of a
  // preallocated segment is skipped in milliseconds rather than a word at a time.
  while (i - start >= ZERO_CHUNK.length && Buffer.from(bytes.buffer, bytes.byteOffset + i - ZERO_CHUNK.length, ZERO_CHUNK.length).equals(ZERO_CHUNK)) {
    i -= ZERO_CHUNK.length;
  }
  // Bytes until `i` is 4-byte aligned in memory, then whole words (a mostly-zero 64 MiB segment
  // is scanned quickly), then the bytes of the last non-zero word.
  while (i > start && ((bytes.byteOffset + i) & 3) !== 0) {
    if (bytes[i - 1] !== 0) return i;
    i--;
  }
  const wordStart = start + ((4 - ((bytes.byteOffset + start) & 3)) & 3);
  if (i - wordStart >= 4) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + wordStart, (i - wordStart) >>> 2);
    let w = words.length;
    while (w > 0 && words[w - 1] === 0) w--;
    i = wordStart + w * 4;
  }
  while (i > start && bytes[i - 1] === 0) i--;
  return i;
}
