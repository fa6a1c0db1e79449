export type { StorageErrorCode } from './errors';
export {
  STORAGE_ERROR_CODES,
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
export type { SnapshotPosition } from './snapshot-file';
export { SNAPSHOT_FORMAT_VERSION, SNAPSHOT_HEADER_BYTES } from './snapshot-file';
export type { SnapshotFileInfo, SnapshotReceipt, SnapshotStoreOptions, StoredSnapshot, VerifiedSnapshot } from './snapshot-store';
export { SnapshotStore } from './snapshot-store';
export type { BootReport, RaftStorageOptions, RecoveredState } from './raft-storage';
export { RAFT_STORAGE_DEFAULTS, RaftStorage } from './raft-storage';
export type { BootedRaft, RaftPersistenceOptions, SnapshotDataStream } from './raft-persistence';
export { RaftPersistence, memberWalMetadata } from './raft-persistence';
export { walMetricsHooks } from './wal-metrics';
