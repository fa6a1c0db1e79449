// ward's backup file, what `etcdctl snapshot save` receives from a ward cluster. Laid out as
// etcd's snapshot stream is checked by etcdctl: the content padded to a multiple of 512 bytes,
// followed by the SHA-256 of everything before it (so the size is n * 512 + 32).
//
//   +0   8  "WARDBKUP"
//   +8   4  format version (2; 1 is still read), little-endian u32
//   +12  4  header bytes (64)
//   +16  8  raft index the state was taken at (u64)
//   +24  8  raft term at that index (u64)
//   +32  8  key-space revision (u64)
//   +40  8  cluster id of the source cluster (u64)
//   +48  8  state length (u64)
//   +56  8  zero
//   +64  .. state: version 2, a member snapshot (membership/codec.ts, "WRNS": the source
//           cluster's member list and the applier's snapshot); version 1, the applier's
//           snapshot bytes alone (@ward/etcd/apply, "WAPL")
//   ..      zero padding up to the next multiple of 512
//   end-32  SHA-256 of every byte before it
import { createHash, type Hash } from 'node:crypto';
import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';
import { open } from 'node:fs/promises';
import { chunksByteLength, joinChunks } from '@ward/shared/binary';

const BACKUP_MAGIC = 'WARDBKUP';
const BACKUP_FORMAT_VERSION = 2;
/** Versions this build reads: 1 (state without the member list) and 2. */
const READABLE_BACKUP_VERSIONS: readonly number[] = [1, 2];
export const BACKUP_HEADER_BYTES = 64;
export const BACKUP_ALIGN_BYTES = 512;
export const BACKUP_CHECKSUM_BYTES = 32;
/** Largest state a backup may hold (the snapshot store's own limit). */
export const MAX_BACKUP_STATE_BYTES = MAX_SNAPSHOT_BYTES;

export interface BackupInfo {
  /** Raft index (applied) the state was taken at. */
  readonly index: number;
  readonly term: number;
  readonly revision: number;
  readonly clusterId: bigint;
}

export interface Backup extends BackupInfo {
  /** A member snapshot (version 2) or the applier's snapshot bytes (version 1). */
  readonly state: Uint8Array;
}

/** A file that is not a usable ward backup; `reason` says why. Nothing was written. */
export class BackupFileError extends Error {
  readonly code = 'ERR_BACKUP_FILE_INVALID';
  constructor(reason: string) {
    super(reason);
    this.name = 'BackupFileError';
  }
}

function safeU64(value: number, what: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${what} must be a non-negative safe integer`);
  return BigInt(value);
}

/** Size of the backup file of a state of `stateLength` bytes. */
export function backupFileBytes(stateLength: number): number {
  return Math.ceil((BACKUP_HEADER_BYTES + stateLength) / BACKUP_ALIGN_BYTES) * BACKUP_ALIGN_BYTES + BACKUP_CHECKSUM_BYTES;
}

function checkBackupShape(stateLength: number, pieceBytes: number): void {
  if (stateLength > MAX_BACKUP_STATE_BYTES) throw new RangeError(`state of ${stateLength} bytes exceeds ${MAX_BACKUP_STATE_BYTES}`);
  if (!Number.isSafeInteger(pieceBytes) || pieceBytes < 1) throw new TypeError('pieceBytes must be a positive integer');
}

/** The 64-byte header of the backup of a state of `stateLength` bytes. */
function backupHead(info: BackupInfo, stateLength: number): Buffer {
  const header = Buffer.alloc(BACKUP_HEADER_BYTES);
  header.write(BACKUP_MAGIC, 0, 'latin1');
  header.writeUInt32LE(BACKUP_FORMAT_VERSION, 8);
  header.writeUInt32LE(BACKUP_HEADER_BYTES, 12);
  header.writeBigUInt64LE(safeU64(info.index, 'index'), 16);
  header.writeBigUInt64LE(safeU64(info.term, 'term'), 24);
  header.writeBigUInt64LE(safeU64(info.revision, 'revision'), 32);
  header.writeBigUInt64LE(BigInt.asUintN(64, info.clusterId), 40);
  header.writeBigUInt64LE(BigInt(stateLength), 48);
  return header;
}

/** The zeros between a state of `stateLength` bytes and the checksum. */
function backupPadding(stateLength: number): Uint8Array {
  return new Uint8Array(backupFileBytes(stateLength) - BACKUP_CHECKSUM_BYTES - BACKUP_HEADER_BYTES - stateLength);
}

/** `part` in slices (uncopied) of at most `pieceBytes`, each added to `hash` as it is handed out. */
function* hashedSlices(part: Uint8Array, pieceBytes: number, hash: Hash): Generator<Uint8Array> {
  for (let offset = 0; offset < part.length; offset += pieceBytes) {
    const piece = part.subarray(offset, Math.min(part.length, offset + pieceBytes));
    hash.update(piece);
    yield piece;
  }
}

/**
 * The backup file in pieces of at most `pieceBytes`, in order, made as they are taken: the
 * header, the state's chunks (slices, uncopied), the padding, then the SHA-256 of all of it,
 * computed on the way. The file is never whole in memory; together the pieces make
 * `backupFileBytes(state length)` bytes.
 */
export function* backupFilePieces(info: BackupInfo, state: readonly Uint8Array[], pieceBytes: number): Generator<Uint8Array> {
  const stateLength = chunksByteLength(state);
  checkBackupShape(stateLength, pieceBytes);
  const hash = createHash('sha256');
  for (const part of [backupHead(info, stateLength), ...state, backupPadding(stateLength)]) yield* hashedSlices(part, pieceBytes, hash);
  yield hash.digest();
}

/**
 * The backup file of a state that is made as it is read (a streamed snapshot): as
 * backupFilePieces, but the state's length is given up front (the header holds it) and its
 * chunks come from `state`, each asked for once the previous one's pieces were taken (a chunk's
 * memory may be reused then). Throws, before handing out a byte too many, when the state runs
 * longer or shorter than `stateLength`; errors of `state` pass through.
 */
export async function* backupFileStream(info: BackupInfo, stateLength: number, state: AsyncIterable<Uint8Array>, pieceBytes: number): AsyncGenerator<Uint8Array> {
  checkBackupShape(stateLength, pieceBytes);
  const hash = createHash('sha256');
  yield* hashedSlices(backupHead(info, stateLength), pieceBytes, hash);
  let seen = 0;
  for await (const chunk of state) {
    seen += chunk.length;
    if (seen > stateLength) throw new RangeError(`the state ran past the ${stateLength} bytes its header announced`);
    yield* hashedSlices(chunk, pieceBytes, hash);
  }
  if (seen !== stateLength) throw new RangeError(`the state ended after ${seen} of the ${stateLength} bytes its header announced`);
  yield* hashedSlices(backupPadding(stateLength), pieceBytes, hash);
  yield hash.digest();
}

/** The whole file: header, state, padding, checksum. */
export function encodeBackup(backup: Backup): Buffer {
  return Buffer.concat([...backupFilePieces(backup, [backup.state], Number.MAX_SAFE_INTEGER)]);
}

/** Random access to a backup's bytes: its file, or bytes in memory. */
export interface BackupSource {
  readonly size: number;
  /**
   * The `length` bytes at `offset` (inside `size`), in a fresh array the caller may keep, or, given
   * `into` (at least `length` bytes), in its first `length` bytes (a view of it is returned).
   */
  read(offset: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
}

/** A backup held in memory as a source (a copy per read). */
export function bytesSource(bytes: Uint8Array): BackupSource {
  return {
    size: bytes.length,
    read: async (offset, length, into) => {
      const piece = into === undefined ? new Uint8Array(length) : into.subarray(0, length);
      piece.set(bytes.subarray(offset, offset + length));
      return piece;
    },
  };
}

/** A backup file as a source; close it when done. */
export async function openBackupFile(path: string): Promise<BackupSource & { close(): Promise<void> }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const read = async (offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> => {
      const piece = into === undefined ? new Uint8Array(length) : into.subarray(0, length);
      const { bytesRead } = await handle.read(piece, 0, length, offset);
      if (bytesRead !== length) throw new BackupFileError(`the file ended after ${offset + bytesRead} of its ${size} bytes while it was read`);
      return piece;
    };
    return { size, read, close: () => handle.close() };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** What a checked backup holds: its header's fields, the format version and its state's length (at BACKUP_HEADER_BYTES). */
export interface BackupLayout extends BackupInfo {
  /** 1: the applier's snapshot alone; 2: a member snapshot. */
  readonly version: number;
  readonly stateBytes: number;
}

/** Bytes read at a time when a backup is checked or its state read. */
export const BACKUP_READ_PIECE_BYTES = 1024 * 1024;

function u64(header: Buffer, offset: number, what: string): number {
  const value = header.readBigUInt64LE(offset);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new BackupFileError(`${what} ${value} is out of range`);
  return Number(value);
}

/** A backup's first bytes, once its magic and its size are checked (the checks that come before its checksum). */
export interface BackupHeader {
  readonly size: number;
  readonly bytes: Buffer;
}

/**
 * The backup's header, read and checked for the ward magic and a size of n * 512 + 32 bytes within
 * the largest state: what tells a foreign or truncated file apart before the checksum is read.
 */
export async function readBackupHeader(source: BackupSource): Promise<BackupHeader> {
  const { size } = source;
  const bytes = Buffer.from(await source.read(0, Math.min(size, BACKUP_HEADER_BYTES)));
  if (bytes.length < 8 || bytes.subarray(0, 8).toString('latin1') !== BACKUP_MAGIC) {
    throw new BackupFileError(`not a ward snapshot (no ${BACKUP_MAGIC} header; etcd's own snapshot files are not accepted)`);
  }
  if (size < BACKUP_ALIGN_BYTES + BACKUP_CHECKSUM_BYTES || (size - BACKUP_CHECKSUM_BYTES) % BACKUP_ALIGN_BYTES !== 0) {
    throw new BackupFileError(`truncated or damaged: ${size} bytes is not a multiple of ${BACKUP_ALIGN_BYTES} plus the ${BACKUP_CHECKSUM_BYTES}-byte SHA-256`);
  }
  if (size > backupFileBytes(MAX_BACKUP_STATE_BYTES)) throw new BackupFileError(`${size} bytes is larger than any ward snapshot`);
  return { size, bytes };
}

/**
 * The SHA-256 of everything before a backup's checksum, fed the file's bytes in order as a reader
 * goes through them (the header, then the state's pieces as they are decoded), so the file is read
 * once; `finish` reads and hashes what was not fed (the padding, or the rest after a reader stopped
 * early) and checks the result against the checksum.
 */
export class BackupDigest {
  private readonly hash = createHash('sha256');
  private fed = 0;

  /** The file's next bytes, from where the previous ones ended. */
  add(piece: Uint8Array): void {
    this.hash.update(piece);
    this.fed += piece.length;
  }

  /** Hashes the rest in pieces of `pieceBytes`; throws BackupFileError unless the whole matches the checksum. */
  async finish(source: BackupSource, pieceBytes = BACKUP_READ_PIECE_BYTES): Promise<void> {
    const padded = source.size - BACKUP_CHECKSUM_BYTES;
    while (this.fed < padded) this.add(await source.read(this.fed, Math.min(pieceBytes, padded - this.fed)));
    const stored = await source.read(padded, BACKUP_CHECKSUM_BYTES);
    if (!this.hash.digest().equals(stored)) throw new BackupFileError('SHA-256 checksum mismatch: the file is damaged');
  }
}

/**
 * The rest of a backup's header and its padding checked (version, header size, state length,
 * zeros up to the checksum): its layout. The checksum is not looked at here.
 */
export async function readBackupLayout(source: BackupSource, header: BackupHeader): Promise<BackupLayout> {
  const { bytes } = header;
  const padded = header.size - BACKUP_CHECKSUM_BYTES;
  const version = bytes.readUInt32LE(8);
  if (!READABLE_BACKUP_VERSIONS.includes(version)) throw new BackupFileError(`unsupported ward snapshot format version ${version} (this build reads ${READABLE_BACKUP_VERSIONS.join(' and ')})`);
  if (bytes.readUInt32LE(12) !== BACKUP_HEADER_BYTES) throw new BackupFileError(`header size ${bytes.readUInt32LE(12)} is not ${BACKUP_HEADER_BYTES}`);
  const stateBytes = u64(bytes, 48, 'state length');
  if (stateBytes > padded - BACKUP_HEADER_BYTES || stateBytes > MAX_BACKUP_STATE_BYTES) throw new BackupFileError(`state length ${stateBytes} does not fit the file`);
  const end = BACKUP_HEADER_BYTES + stateBytes;
  // Less than BACKUP_ALIGN_BYTES of zeros between the state and the checksum.
  const padding = await source.read(end, padded - end);
  if (Math.ceil(end / BACKUP_ALIGN_BYTES) * BACKUP_ALIGN_BYTES !== padded || padding.some((b) => b !== 0) || bytes.readBigUInt64LE(56) !== 0n) {
    throw new BackupFileError('padding is not as written: the file is damaged');
  }
  return { version, stateBytes, index: u64(bytes, 16, 'index'), term: u64(bytes, 24, 'term'), revision: u64(bytes, 32, 'revision'), clusterId: bytes.readBigUInt64LE(40) };
}

/**
 * Checks a backup (ward header, size, SHA-256, padding), reading it in pieces of `pieceBytes`: it
 * is never whole in memory. Throws BackupFileError naming the first problem. The state itself is
 * checked by restoring it (backupState).
 */
export async function verifyBackup(source: BackupSource, pieceBytes = BACKUP_READ_PIECE_BYTES): Promise<BackupLayout> {
  const header = await readBackupHeader(source);
  await new BackupDigest().finish(source, pieceBytes);
  return readBackupLayout(source, header);
}

/**
 * The state of a checked backup (verifyBackup), read in pieces of at most `pieceBytes`: fresh ones
 * (a consumer may keep them), or, given `into` (at least `pieceBytes` long), views of it, each valid
 * until the next is asked for.
 */
export async function* backupState(source: BackupSource, layout: BackupLayout, pieceBytes = BACKUP_READ_PIECE_BYTES, into?: Uint8Array): AsyncGenerator<Uint8Array> {
  const end = BACKUP_HEADER_BYTES + layout.stateBytes;
  for (let offset = BACKUP_HEADER_BYTES; offset < end; offset += pieceBytes) yield await source.read(offset, Math.min(pieceBytes, end - offset), into);
}

/** A backup in memory checked and read whole (verifyBackup, then backupState joined): for small ones. */
export async function decodeBackup(file: Uint8Array): Promise<Backup> {
  const source = bytesSource(file);
  const layout = await verifyBackup(source);
  const pieces: Uint8Array[] = [];
  for await (const piece of backupState(source, layout)) pieces.push(piece);
  return { index: layout.index, term: layout.term, revision: layout.revision, clusterId: layout.clusterId, state: joinChunks(pieces) };
}
