import { chunksByteLength, joinChunks, spliceRuns, type Placed } from '@ward/shared/binary';
import { crc32c } from '@ward/shared/checksum';
import { FrameInvalidError } from './errors';

/**
 * Binary frames of the peer service (little-endian). Every frame starts with a version byte and
 * a kind byte and ends with a CRC-32C of all bytes before it.
 *
 * ```
 * batch     [1][1][0 0][count u32][clusterId u64][from u64][to u64] count × ([len u32][bytes]) [crc u32]
 * snapshot  [1][2][0 0][metaLen u32][clusterId u64][from u64][to u64][totalBytes u64][meta] [crc u32]
 * chunk     [1][3][0 0][seq u32][data ...] [crc u32]
 * trailer   [1][4][0 0][chunkCount u32][dataCrc u32] [crc u32]
 * ```
 *
 * A message stream carries batch frames; a snapshot stream carries one snapshot header, chunks
 * numbered from 0, and a trailer with the CRC-32C of the whole data.
 */
export const FRAME_VERSION = 1;
export const FrameKind = { Batch: 1, SnapshotHeader: 2, SnapshotChunk: 3, SnapshotTrailer: 4 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

export const BATCH_HEADER_BYTES = 32;
export const MESSAGE_PREFIX_BYTES = 4;
export const CHECKSUM_BYTES = 4;
const SNAPSHOT_HEADER_BYTES = 40;
const CHUNK_HEADER_BYTES = 8;
const TRAILER_BYTES = 16;
const UINT64_MAX = (1n << 64n) - 1n;

/** Who a frame is from and for. */
export interface FrameRoute {
  readonly clusterId: bigint;
  readonly from: bigint;
  readonly to: bigint;
}

export interface DecodedBatch extends FrameRoute {
  readonly messages: Uint8Array[];
}

export interface SnapshotHeader extends FrameRoute {
  readonly totalBytes: number;
  readonly metadata: Uint8Array;
}

export type SnapshotStreamFrame =
  | ({ readonly kind: 'header' } & SnapshotHeader)
  | { readonly kind: 'chunk'; readonly seq: number; readonly data: Uint8Array }
  | { readonly kind: 'trailer'; readonly chunkCount: number; readonly dataCrc: number };

/** Bytes a batch of messages with these lengths occupies. */
export function batchFrameBytes(messageBytesTotal: number, messageCount: number): number {
  return BATCH_HEADER_BYTES + messageCount * MESSAGE_PREFIX_BYTES + messageBytesTotal + CHECKSUM_BYTES;
}

function writeRoute(view: DataView, route: FrameRoute): void {
  for (const id of [route.clusterId, route.from, route.to]) {
    if (typeof id !== 'bigint' || id < 0n || id > UINT64_MAX) throw new TypeError(`member and cluster ids must be uint64 bigints, got ${String(id)}`);
  }
  view.setBigUint64(8, route.clusterId, true);
  view.setBigUint64(16, route.from, true);
  view.setBigUint64(24, route.to, true);
}

function seal(frame: Uint8Array): Uint8Array {
  const end = frame.length - CHECKSUM_BYTES;
  new DataView(frame.buffer, frame.byteOffset, frame.byteLength).setUint32(end, crc32c(frame, 0, 0, end), true);
  return frame;
}

/**
 * A message as one buffer, or as pieces that make it up back to back (a Raft append whose large
 * entry data is left uncopied).
 */
export type MessageBytes = Uint8Array | readonly Uint8Array[];

/** Bytes of a message, or of a frame's pieces together. */
export function byteLength(bytes: MessageBytes): number {
  return bytes instanceof Uint8Array ? bytes.length : chunksByteLength(bytes);
}

/**
 * A piece of a message at least this large goes into the frame uncopied (the writer names it in
 * its writev); smaller ones are copied into the frame's own buffer. A large entry then costs no
 * copy per message or frame, and small messages still go out in a single buffer.
 */
export const COPY_BELOW_BYTES = 4096;

/**
 * Encodes messages[start, end) as one batch frame, returned as pieces to be written back to back:
 * the frame's own buffer (header, length prefixes, small pieces, checksum) cut around the large
 * message pieces it leaves uncopied. Without a large piece the frame is one piece.
 */
export function encodeBatchPieces(route: FrameRoute, messages: readonly MessageBytes[], start = 0, end = messages.length): Uint8Array[] {
  let ownBytes = BATCH_HEADER_BYTES + (end - start) * MESSAGE_PREFIX_BYTES + CHECKSUM_BYTES;
  for (let i = start; i < end; i++) {
    const message = messages[i]!;
    if (message instanceof Uint8Array) ownBytes += message.length < COPY_BELOW_BYTES ? message.length : 0;
    else for (const piece of message) ownBytes += piece.length < COPY_BELOW_BYTES ? piece.length : 0;
  }
  const own = new Uint8Array(ownBytes);
  const view = new DataView(own.buffer, own.byteOffset, own.byteLength);
  own[0] = FRAME_VERSION;
  own[1] = FrameKind.Batch;
  view.setUint16(2, 0, true);
  view.setUint32(4, end - start, true);
  writeRoute(view, route);
  const placed: Placed[] = [];
  let offset = BATCH_HEADER_BYTES;
  const add = (piece: Uint8Array): void => {
    if (piece.length >= COPY_BELOW_BYTES) {
      placed.push({ at: offset, bytes: piece });
      return;
    }
    own.set(piece, offset);
    offset += piece.length;
  };
  for (let i = start; i < end; i++) {
    const message = messages[i]!;
    view.setUint32(offset, byteLength(message), true);
    offset += MESSAGE_PREFIX_BYTES;
    if (message instanceof Uint8Array) add(message);
    else for (const piece of message) add(piece);
  }
  const pieces = spliceRuns(own, placed);
  // The checksum covers every piece before it: all but the last piece's final four bytes.
  const last = pieces.length - 1;
  let crc = 0;
  for (let i = 0; i < last; i++) crc = crc32c(pieces[i]!, crc);
  view.setUint32(offset, crc32c(pieces[last]!, crc, 0, pieces[last]!.length - CHECKSUM_BYTES), true);
  return pieces;
}

/** Encodes messages[start, end) as one batch frame in one buffer. */
export function encodeBatch(route: FrameRoute, messages: readonly MessageBytes[], start = 0, end = messages.length): Uint8Array {
  return joinChunks(encodeBatchPieces(route, messages, start, end));
}

export interface BatchLimits {
  readonly maxMessageBytes: number;
  readonly maxBatchMessages: number;
}

/** Checks version, kind and checksum; returns a view of the frame. */
function openFrame(frame: Uint8Array, minBytes: number): DataView {
  if (!(frame instanceof Uint8Array)) throw new FrameInvalidError('frame is not binary');
  if (frame.length < minBytes + CHECKSUM_BYTES) throw new FrameInvalidError(`frame of ${frame.length} bytes is too short`);
  if (frame[0] !== FRAME_VERSION) throw new FrameInvalidError(`unsupported frame version ${frame[0]}`);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const end = frame.length - CHECKSUM_BYTES;
  if (view.getUint32(end, true) !== crc32c(frame, 0, 0, end)) throw new FrameInvalidError('frame checksum mismatch');
  return view;
}

/** A plain Uint8Array view (not a Buffer, even when the frame is one) of frame[start, start + length). */
function plainView(frame: Uint8Array, start: number, length: number): Uint8Array {
  return new Uint8Array(frame.buffer, frame.byteOffset + start, length);
}

function readRoute(view: DataView): FrameRoute {
  return { clusterId: view.getBigUint64(8, true), from: view.getBigUint64(16, true), to: view.getBigUint64(24, true) };
}

/**
 * Decodes a batch frame. Messages are views into the frame's buffer, which nothing else uses or
 * reuses. Throws FrameInvalidError on anything malformed or over a limit.
 */
export function decodeBatch(frame: Uint8Array, limits: BatchLimits): DecodedBatch {
  const view = openFrame(frame, BATCH_HEADER_BYTES);
  if (frame[1] !== FrameKind.Batch) throw new FrameInvalidError(`expected a batch frame, got kind ${frame[1]}`);
  const count = view.getUint32(4, true);
  if (count === 0 || count > limits.maxBatchMessages) throw new FrameInvalidError(`batch of ${count} messages is outside [1, ${limits.maxBatchMessages}]`);
  const end = frame.length - CHECKSUM_BYTES;
  const messages: Uint8Array[] = [];
  let offset = BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (offset + MESSAGE_PREFIX_BYTES > end) throw new FrameInvalidError(`batch ends inside message ${i}`);
    const length = view.getUint32(offset, true);
    if (length > limits.maxMessageBytes) throw new FrameInvalidError(`message of ${length} bytes exceeds ${limits.maxMessageBytes}`);
    offset += MESSAGE_PREFIX_BYTES;
    if (offset + length > end) throw new FrameInvalidError(`message ${i} runs past the end of the batch`);
    messages.push(plainView(frame, offset, length));
    offset += length;
  }
  if (offset !== end) throw new FrameInvalidError(`${end - offset} stray bytes after the last message`);
  return { ...readRoute(view), messages };
}

export function encodeSnapshotHeader(header: SnapshotHeader): Uint8Array {
  if (!Number.isSafeInteger(header.totalBytes) || header.totalBytes < 0) throw new TypeError(`totalBytes must be a safe non-negative integer, got ${header.totalBytes}`);
  const frame = new Uint8Array(SNAPSHOT_HEADER_BYTES + header.metadata.length + CHECKSUM_BYTES);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  frame[0] = FRAME_VERSION;
  frame[1] = FrameKind.SnapshotHeader;
  view.setUint16(2, 0, true);
  view.setUint32(4, header.metadata.length, true);
  writeRoute(view, header);
  view.setBigUint64(32, BigInt(header.totalBytes), true);
  frame.set(header.metadata, SNAPSHOT_HEADER_BYTES);
  return seal(frame);
}

export function encodeSnapshotChunk(seq: number, data: Uint8Array): Uint8Array {
  const frame = new Uint8Array(CHUNK_HEADER_BYTES + data.length + CHECKSUM_BYTES);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  frame[0] = FRAME_VERSION;
  frame[1] = FrameKind.SnapshotChunk;
  view.setUint16(2, 0, true);
  view.setUint32(4, seq, true);
  frame.set(data, CHUNK_HEADER_BYTES);
  return seal(frame);
}

export function encodeSnapshotTrailer(chunkCount: number, dataCrc: number): Uint8Array {
  const frame = new Uint8Array(TRAILER_BYTES);
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  frame[0] = FRAME_VERSION;
  frame[1] = FrameKind.SnapshotTrailer;
  view.setUint16(2, 0, true);
  view.setUint32(4, chunkCount, true);
  view.setUint32(8, dataCrc >>> 0, true);
  return seal(frame);
}

/** Decodes one frame of a snapshot stream; metadata and chunk data are views into the frame. */
export function decodeSnapshotFrame(frame: Uint8Array, maxMetadataBytes: number): SnapshotStreamFrame {
  const view = openFrame(frame, CHUNK_HEADER_BYTES);
  switch (frame[1]) {
    case FrameKind.SnapshotHeader: {
      if (frame.length < SNAPSHOT_HEADER_BYTES + CHECKSUM_BYTES) throw new FrameInvalidError('snapshot header is too short');
      const metadataBytes = view.getUint32(4, true);
      if (metadataBytes > maxMetadataBytes) throw new FrameInvalidError(`snapshot metadata of ${metadataBytes} bytes exceeds ${maxMetadataBytes}`);
      if (SNAPSHOT_HEADER_BYTES + metadataBytes + CHECKSUM_BYTES !== frame.length) throw new FrameInvalidError('snapshot header length mismatch');
      const totalBytes = view.getBigUint64(32, true);
      if (totalBytes > BigInt(Number.MAX_SAFE_INTEGER)) throw new FrameInvalidError('snapshot size is not a safe integer');
      const metadata = plainView(frame, SNAPSHOT_HEADER_BYTES, metadataBytes);
      return { kind: 'header', ...readRoute(view), totalBytes: Number(totalBytes), metadata };
    }
    case FrameKind.SnapshotChunk:
      return { kind: 'chunk', seq: view.getUint32(4, true), data: plainView(frame, CHUNK_HEADER_BYTES, frame.length - CHECKSUM_BYTES - CHUNK_HEADER_BYTES) };
    case FrameKind.SnapshotTrailer:
      if (frame.length !== TRAILER_BYTES) throw new FrameInvalidError('snapshot trailer length mismatch');
      return { kind: 'trailer', chunkCount: view.getUint32(4, true), dataCrc: view.getUint32(8, true) };
    default:
      throw new FrameInvalidError(`unexpected frame kind ${frame[1]} in a snapshot stream`);
  }
}
