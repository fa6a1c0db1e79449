import { crc32c } from '@ward/shared/checksum';
import { readU64, writeU64 } from './record';

/**
 * Snapshot file layout (little-endian):
 *
 * ```
 * +0   8  magic "WARDSNAP"
 * +8   4  format version (1)
 * +12  4  checksum: CRC-32C of the data, continued over bytes +16..+40
 * +16  8  index of the last entry the snapshot covers
 * +24  8  term of that entry
 * +32  8  data length in bytes
 * +40  ... data (opaque)
 * ```
 *
 * Files are named `<term:16 hex>-<index:16 hex>.snap`, as etcd names them.
 */
export const SNAPSHOT_HEADER_BYTES = 40;
export const SNAPSHOT_FORMAT_VERSION = 1;
const MAGIC = new TextEncoder().encode('WARDSNAP');
const FIELDS_START = 16;

export interface SnapshotPosition {
  readonly index: number;
  readonly term: number;
}

const SNAPSHOT_NAME = /^([0-9a-f]{16})-([0-9a-f]{16})\.snap$/;

export function formatSnapshotName(position: SnapshotPosition): string {
  return `${position.term.toString(16).padStart(16, '0')}-${position.index.toString(16).padStart(16, '0')}.snap`;
}

export function parseSnapshotName(name: string): SnapshotPosition | undefined {
  const match = SNAPSHOT_NAME.exec(name);
  if (match === null) return undefined;
  const term = Number.parseInt(match[1]!, 16);
  const index = Number.parseInt(match[2]!, 16);
  if (!Number.isSafeInteger(term) || !Number.isSafeInteger(index)) return undefined;
  return { index, term };
}

/** The header for data of `dataBytes` whose CRC-32C is `dataCrc`. */
export function encodeSnapshotHeader(position: SnapshotPosition, dataBytes: number, dataCrc: number): Uint8Array {
  const header = new Uint8Array(SNAPSHOT_HEADER_BYTES);
  const view = new DataView(header.buffer);
  header.set(MAGIC, 0);
  view.setUint32(8, SNAPSHOT_FORMAT_VERSION, true);
  writeU64(view, 16, position.index);
  writeU64(view, 24, position.term);
  writeU64(view, 32, dataBytes);
  view.setUint32(12, crc32c(header, dataCrc, FIELDS_START, SNAPSHOT_HEADER_BYTES), true);
  return header;
}

export type SnapshotHeaderDecode =
  | { readonly ok: true; readonly position: SnapshotPosition; readonly dataBytes: number }
  | { readonly ok: false; readonly reason: string };

/** Reads a snapshot file's header: magic, version, position and data length (not the checksum). */
export function decodeSnapshotHeader(bytes: Uint8Array): SnapshotHeaderDecode {
  if (bytes.length < SNAPSHOT_HEADER_BYTES) return { ok: false, reason: `file of ${bytes.length} bytes is shorter than the header` };
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) return { ok: false, reason: 'not a snapshot file (bad magic)' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== SNAPSHOT_FORMAT_VERSION) return { ok: false, reason: `unsupported format version ${version}` };
  const index = readU64(view, 16);
  const term = readU64(view, 24);
  const dataBytes = readU64(view, 32);
  if (index === undefined || term === undefined || dataBytes === undefined) return { ok: false, reason: 'header field is not a safe integer' };
  return { ok: true, position: { index, term }, dataBytes };
}

/** True when `dataCrc`, the CRC-32C of a file's data, matches the checksum in its `header`. */
export function snapshotChecksumMatches(header: Uint8Array, dataCrc: number): boolean {
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  return crc32c(header, dataCrc, FIELDS_START, SNAPSHOT_HEADER_BYTES) === view.getUint32(12, true);
}

