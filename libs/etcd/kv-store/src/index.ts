// @ward/etcd/kv-store: etcd's MVCC key space, pure and deterministic.
export type {
  Compare,
  CompareResult,
  CompareTarget,
  CompactResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  EventType,
  KVStoreOptions,
  KeyValue,
  LeaseId,
  LeaseLookup,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  ReadEventsRequest,
  ReadEventsResponse,
  RequestOp,
  ResponseOp,
  SortOrder,
  SortTarget,
  TxnRequest,
  TxnResponse,
  WatchEvent,
  KeySpaceFormat,
} from './types';
export {
  ANY_LEASE_EXISTS,
  DEFAULT_EVENT_HISTORY_MAX_EVENTS,
  DEFAULT_MAX_TXN_OPS,
  DEFAULT_MAX_TXN_OPS_TOTAL,
  KEY_SPACE_FORMAT_LATEST,
  NO_LEASE,
} from './types';
export type { KVErrorCode } from './errors';
export {
  KV_ERROR_CODES,
  KVCompactedError,
  KVDuplicateKeyError,
  KVEmptyKeyError,
  KVError,
  KVFutureRevisionError,
  KVInvalidSortOptionError,
  KVKeyNotFoundError,
  KVLeaseNotFoundError,
  KVLeaseProvidedError,
  KVSnapshotInvalidError,
  KVTooManyOpsError,
  KVValueProvidedError,
} from './errors';
export { KVStore, type KVStoreDecoder } from './kv-store';
export { KeySpaceSnapshotTask, SNAPSHOT_CHUNK_BYTES, SNAPSHOT_DEFAULT_STEP, type KeySpaceDecoding, type SnapshotStepResult, type SnapshotStreamOptions } from './snapshot';
export { HASH_KV_DEFAULT_STEP, HashKvTask } from './hash-kv';
export type { TxnLimits } from './request-validate';
export {
  MAX_TXN_NESTING_DEPTH,
  isTxnReadOnly,
  validateDeleteRangeRequest,
  validatePutRequest,
  validateRangeRequest,
  validateTxnRequest,
} from './request-validate';
export type { InternalKVErrorCode } from './wire-mapping';
export { KV_ERROR_WIRE_NAMES, toWireError } from './wire-mapping';
