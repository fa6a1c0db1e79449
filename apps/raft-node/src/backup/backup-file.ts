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
import { createHash } from 'node:crypto';
import { DEFAULT_MAX_SNAPSHOT_BYTES } from '@ward/raft/storage';

const BACKUP_MAGIC = 'WARDBKUP';
const BACKUP_FORMAT_VERSION = 2;
/** Versions this build reads: 1 (state without the member list) and 2. */
const READABLE_BACKUP_VERSIONS: readonly number[] = [1, 2];
export const BACKUP_HEADER_BYTES = 64;
export const BACKUP_ALIGN_BYTES = 512;
export const BACKUP_CHECKSUM_BYTES = 32;
/** Largest state a backup may hold (the snapshot store's own limit). */
export const MAX_BACKUP_STATE_BYTES = DEFAULT_MAX_SNAPSHOT_BYTES;

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

/** The whole file: header, state, padding, checksum. */
export function encodeBackup(backup: Backup): Buffer {
  if (backup.state.length > MAX_BACKUP_STATE_BYTES) throw new RangeError(`state of ${backup.state.length} bytes exceeds ${MAX_BACKUP_STATE_BYTES}`);
  const content = BACKUP_HEADER_BYTES + backup.state.length;
  const padded = Math.ceil(content / BACKUP_ALIGN_BYTES) * BACKUP_ALIGN_BYTES;
  const file = Buffer.alloc(padded + BACKUP_CHECKSUM_BYTES);
  file.write(BACKUP_MAGIC, 0, 'latin1');
  file.writeUInt32LE(BACKUP_FORMAT_VERSION, 8);
  file.writeUInt32LE(BACKUP_HEADER_BYTES, 12);
  file.writeBigUInt64LE(safeU64(backup.index, 'index'), 16);
  file.writeBigUInt64LE(safeU64(backup.term, 'term'), 24);
  file.writeBigUInt64LE(safeU64(backup.revision, 'revision'), 32);
  file.writeBigUInt64LE(BigInt.asUintN(64, backup.clusterId), 40);
  file.writeBigUInt64LE(BigInt(backup.state.length), 48);
  file.set(backup.state, BACKUP_HEADER_BYTES);
  createHash('sha256').update(file.subarray(0, padded)).digest().copy(file, padded);
  return file;
}

function u64(file: Uint8Array, offset: number, what: string): number {
  const value = Buffer.from(file.buffer, file.byteOffset, file.byteLength).readBigUInt64LE(offset);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new BackupFileError(`${what} ${value} is out of range`);
  return Number(value);
}

/**
 * Checks the file (ward header, size, SHA-256, padding) and returns its content. Throws
 * BackupFileError naming the first problem. The state itself is checked by restoring it.
 */
export function decodeBackup(file: Uint8Array): Backup {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (bytes.length < 8 || bytes.subarray(0, 8).toString('latin1') !== BACKUP_MAGIC) {
    throw new BackupFileError(`not a ward snapshot (no ${BACKUP_MAGIC} header; etcd's own snapshot files are not accepted)`);
  }
  if (bytes.length < BACKUP_ALIGN_BYTES + BACKUP_CHECKSUM_BYTES || (bytes.length - BACKUP_CHECKSUM_BYTES) % BACKUP_ALIGN_BYTES !== 0) {
    throw new BackupFileError(`truncated or damaged: ${bytes.length} bytes is not a multiple of ${BACKUP_ALIGN_BYTES} plus the ${BACKUP_CHECKSUM_BYTES}-byte SHA-256`);
  }
  const padded = bytes.length - BACKUP_CHECKSUM_BYTES;
  const expected = createHash('sha256').update(bytes.subarray(0, padded)).digest();
  if (!expected.equals(bytes.subarray(padded))) throw new BackupFileError('SHA-256 checksum mismatch: the file is damaged');
  const version = bytes.readUInt32LE(8);
  if (!READABLE_BACKUP_VERSIONS.includes(version)) throw new BackupFileError(`unsupported ward snapshot format version ${version} (this build reads ${READABLE_BACKUP_VERSIONS.join(' and ')})`);
  if (bytes.readUInt32LE(12) !== BACKUP_HEADER_BYTES) throw new BackupFileError(`header size ${bytes.readUInt32LE(12)} is not ${BACKUP_HEADER_BYTES}`);
  const length = u64(bytes, 48, 'state length');
  if (length > padded - BACKUP_HEADER_BYTES || length > MAX_BACKUP_STATE_BYTES) throw new BackupFileError(`state length ${length} does not fit the file`);
  const end = BACKUP_HEADER_BYTES + length;
  if (Math.ceil(end / BACKUP_ALIGN_BYTES) * BACKUP_ALIGN_BYTES !== padded || bytes.subarray(end, padded).some((b) => b !== 0) || bytes.readBigUInt64LE(56) !== 0n) {
    throw new BackupFileError('padding is not as written: the file is damaged');
  }
  return {
    index: u64(bytes, 16, 'index'),
    term: u64(bytes, 24, 'term'),
    revision: u64(bytes, 32, 'revision'),
    clusterId: bytes.readBigUInt64LE(40),
    state: new Uint8Array(bytes.subarray(BACKUP_HEADER_BYTES, end)),
  };
}
