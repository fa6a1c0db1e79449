import { CodedError } from '@ward/shared/errors';
import type { LeaseId } from './types';

/**
 * Every code the key space raises. Each maps to exactly one etcd wire error (docs/errors.md);
 * the gRPC edge translates them with `@ward/etcd/wire-errors`.
 */
export type KVErrorCode =
  | 'ERR_KV_EMPTY_KEY'
  | 'ERR_KV_KEY_NOT_FOUND'
  | 'ERR_KV_VALUE_PROVIDED'
  | 'ERR_KV_LEASE_PROVIDED'
  | 'ERR_KV_TOO_MANY_OPS'
  | 'ERR_KV_DUPLICATE_KEY'
  | 'ERR_KV_INVALID_SORT_OPTION'
  | 'ERR_KV_COMPACTED'
  | 'ERR_KV_FUTURE_REVISION'
  | 'ERR_KV_LEASE_NOT_FOUND'
  | 'ERR_KV_SNAPSHOT_INVALID';

/** Every KVErrorCode, for exhaustive tables (the error catalogue test walks it). */
export const KV_ERROR_CODES: readonly KVErrorCode[] = Object.freeze([
  'ERR_KV_EMPTY_KEY',
  'ERR_KV_KEY_NOT_FOUND',
  'ERR_KV_VALUE_PROVIDED',
  'ERR_KV_LEASE_PROVIDED',
  'ERR_KV_TOO_MANY_OPS',
  'ERR_KV_DUPLICATE_KEY',
  'ERR_KV_INVALID_SORT_OPTION',
  'ERR_KV_COMPACTED',
  'ERR_KV_FUTURE_REVISION',
  'ERR_KV_LEASE_NOT_FOUND',
  'ERR_KV_SNAPSHOT_INVALID',
]);

/**
 * Base class of the key space's expected failures.
 *
 * @example
 * ```ts
 * try { store.range({ key, revision: 3 }) } catch (error) {
 *   if (error instanceof KVError && error.code === 'ERR_KV_COMPACTED') { ... }
 *   if (error instanceof KVCompactedError) console.log(error.compactRevision);
 * }
 * ```
 */
export class KVError<Code extends KVErrorCode = KVErrorCode> extends CodedError<Code> {}

/** A Range, Put, DeleteRange or Compare without a key (etcd: `key is not provided`). */
export class KVEmptyKeyError extends KVError<'ERR_KV_EMPTY_KEY'> {
  constructor() {
    super('ERR_KV_EMPTY_KEY', 'key is not provided');
  }
}

/**
 * A put with ignore_value / ignore_lease on a key that does not exist, or a Txn operation with
 * no request set (etcd: `key not found`).
 */
export class KVKeyNotFoundError extends KVError<'ERR_KV_KEY_NOT_FOUND'> {
  constructor(readonly reason: 'ignore-flag-on-missing-key' | 'empty-request-op') {
    super('ERR_KV_KEY_NOT_FOUND', 'key not found');
  }
}

/** ignore_value together with a non-empty value (etcd: `value is provided`). */
export class KVValueProvidedError extends KVError<'ERR_KV_VALUE_PROVIDED'> {
  constructor() {
    super('ERR_KV_VALUE_PROVIDED', 'value is provided');
  }
}

/** ignore_lease together with a non-zero lease (etcd: `lease is provided`). */
export class KVLeaseProvidedError extends KVError<'ERR_KV_LEASE_PROVIDED'> {
  constructor() {
    super('ERR_KV_LEASE_PROVIDED', 'lease is provided');
  }
}

/** A txn over the operation limit (etcd: `too many operations in txn request`). */
export class KVTooManyOpsError extends KVError<'ERR_KV_TOO_MANY_OPS'> {
  constructor(
    readonly operations: number,
    readonly limit: number,
  ) {
    super('ERR_KV_TOO_MANY_OPS', 'too many operations in txn request');
  }
}

/** A txn writing one key twice, or putting a key it also deletes (etcd's checkIntervals). */
export class KVDuplicateKeyError extends KVError<'ERR_KV_DUPLICATE_KEY'> {
  constructor(readonly key: Uint8Array) {
    super('ERR_KV_DUPLICATE_KEY', 'duplicate key given in txn request');
  }
}

/** A sort order or sort target outside etcd's enums (etcd: `invalid sort option`). */
export class KVInvalidSortOptionError extends KVError<'ERR_KV_INVALID_SORT_OPTION'> {
  constructor(readonly option: 'sortOrder' | 'sortTarget') {
    super('ERR_KV_INVALID_SORT_OPTION', 'invalid sort option');
  }
}

/** A read or compaction at a revision compaction has removed (etcd's mvcc.ErrCompacted). */
export class KVCompactedError extends KVError<'ERR_KV_COMPACTED'> {
  constructor(
    readonly revision: number,
    readonly compactRevision: number,
  ) {
    super('ERR_KV_COMPACTED', 'mvcc: required revision has been compacted');
  }
}

/** A read or compaction beyond the current revision (etcd's mvcc.ErrFutureRev). */
export class KVFutureRevisionError extends KVError<'ERR_KV_FUTURE_REVISION'> {
  constructor(
    readonly revision: number,
    readonly currentRevision: number,
  ) {
    super('ERR_KV_FUTURE_REVISION', 'mvcc: required revision is a future revision');
  }
}

/** A put naming a lease the lessor does not know (etcd's lease.ErrLeaseNotFound). */
export class KVLeaseNotFoundError extends KVError<'ERR_KV_LEASE_NOT_FOUND'> {
  constructor(readonly lease: LeaseId) {
    super('ERR_KV_LEASE_NOT_FOUND', 'lease not found');
  }
}

/** Snapshot bytes that are truncated, corrupt, or of an unknown format. */
export class KVSnapshotInvalidError extends KVError<'ERR_KV_SNAPSHOT_INVALID'> {
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {
    super('ERR_KV_SNAPSHOT_INVALID', 'invalid key-space snapshot');
  }
}
