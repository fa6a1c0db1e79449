import { CodedError } from '@ward/shared/errors';

/** Every code the storage library raises (documented in the library's README). */
export const STORAGE_ERROR_CODES = [
  'ERR_STORAGE_WAL_CORRUPT',
  'ERR_STORAGE_WAL_FAILED',
  'ERR_STORAGE_WAL_CLOSED',
  'ERR_STORAGE_WAL_QUEUE_FULL',
  'ERR_STORAGE_RECORD_TOO_LARGE',
  'ERR_STORAGE_METADATA_MISMATCH',
  'ERR_STORAGE_SNAPSHOT_CORRUPT',
  'ERR_STORAGE_SNAPSHOT_TOO_LARGE',
  'ERR_STORAGE_STATE_UNRECOVERABLE',
] as const;
export type StorageErrorCode = (typeof STORAGE_ERROR_CODES)[number];

/** Base class of the storage library's operating failures. */
export class StorageError<Code extends StorageErrorCode = StorageErrorCode> extends CodedError<Code> {}

/**
 * The write-ahead log is damaged somewhere other than a torn tail: the node must not start (a
 * committed prefix is never "repaired"). `file` and `offset` say where the first bad byte is.
 */
export class WalCorruptError extends StorageError<'ERR_STORAGE_WAL_CORRUPT'> {
  constructor(
    readonly file: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    super('ERR_STORAGE_WAL_CORRUPT', `write-ahead log corrupt in ${file} at byte offset ${offset}: ${reason}`);
  }
}

/**
 * A write, fsync, cut or rename of the log failed. After a failed fsync nothing in the page cache
 * can be trusted, so the log refuses every later append; restart the process to recover from disk.
 */
export class WalFailedError extends StorageError<'ERR_STORAGE_WAL_FAILED'> {
  constructor(
    readonly operation: string,
    readonly file: string,
    cause: unknown,
  ) {
    super('ERR_STORAGE_WAL_FAILED', `write-ahead log ${operation} failed on ${file}; the log is closed`, { cause });
  }
}

/** The log was closed (or failed earlier); nothing more is written. */
export class WalClosedError extends StorageError<'ERR_STORAGE_WAL_CLOSED'> {
  constructor() {
    super('ERR_STORAGE_WAL_CLOSED', 'write-ahead log is closed');
  }
}

/** More bytes are waiting for the disk than `maxQueuedBytes` allows; retry after some complete. */
export class WalQueueFullError extends StorageError<'ERR_STORAGE_WAL_QUEUE_FULL'> {
  constructor(
    readonly queuedBytes: number,
    readonly maxQueuedBytes: number,
  ) {
    super('ERR_STORAGE_WAL_QUEUE_FULL', `write-ahead log queue holds ${queuedBytes} bytes, limit ${maxQueuedBytes}`);
  }
}

/** A record, or one append call, exceeds the configured size limit. */
export class RecordTooLargeError extends StorageError<'ERR_STORAGE_RECORD_TOO_LARGE'> {
  constructor(
    readonly sizeBytes: number,
    readonly limitBytes: number,
    readonly what: string,
  ) {
    super('ERR_STORAGE_RECORD_TOO_LARGE', `${what} of ${sizeBytes} bytes exceeds the limit of ${limitBytes} bytes`);
  }
}

/** The directory holds a log written with different metadata (another member or cluster). */
export class MetadataMismatchError extends StorageError<'ERR_STORAGE_METADATA_MISMATCH'> {
  constructor(
    readonly file: string,
    readonly offset: number,
  ) {
    super('ERR_STORAGE_METADATA_MISMATCH', `write-ahead log metadata in ${file} at byte offset ${offset} differs from the expected metadata`);
  }
}

/** A snapshot file fails its format or checksum checks. */
export class SnapshotCorruptError extends StorageError<'ERR_STORAGE_SNAPSHOT_CORRUPT'> {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super('ERR_STORAGE_SNAPSHOT_CORRUPT', `snapshot ${file} is unusable: ${reason}`);
  }
}

/** A snapshot is larger than `maxSnapshotBytes`. */
export class SnapshotTooLargeError extends StorageError<'ERR_STORAGE_SNAPSHOT_TOO_LARGE'> {
  constructor(
    readonly sizeBytes: number,
    readonly limitBytes: number,
  ) {
    super('ERR_STORAGE_SNAPSHOT_TOO_LARGE', `snapshot of ${sizeBytes} bytes exceeds the limit of ${limitBytes} bytes`);
  }
}

/**
 * Snapshots and log together cannot rebuild the state: for example the log's first entry is past
 * the newest usable snapshot, so entries in between are gone. The member must be replaced.
 */
export class StateUnrecoverableError extends StorageError<'ERR_STORAGE_STATE_UNRECOVERABLE'> {
  constructor(readonly reason: string) {
    super('ERR_STORAGE_STATE_UNRECOVERABLE', `storage cannot be recovered: ${reason}`);
  }
}
