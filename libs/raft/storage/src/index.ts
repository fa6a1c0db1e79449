export type { StorageErrorCode } from './errors';
export {
  MetadataMismatchError,
  RecordTooLargeError,
  SnapshotCorruptError,
  SnapshotTooLargeError,
  StateUnrecoverableError,
  StorageError,
  WalClosedError,
  WalCorruptError,
  WalFailedError,
  WalQueueFullError,
} from './errors';
export type { WalEntry, WalHardState, WalRecord, WalSnapshotMarker } from './record';
export type { Preallocation, WalHooks, WalOptions } from './wal-options';
export { WAL_LIMITS } from './wal-options';
export type { WalReplayState } from './wal-replay';
export type { WalRepairReport } from './wal-open';
export type { WalAppendOptions, WalOpenResult, WalStats } from './wal';
export { Wal } from './wal';
