import type { WireErrorName } from '@ward/etcd/wire-errors';
import { EtcdWireError } from '@ward/etcd/wire-errors';
import type { KVError, KVErrorCode } from './errors';

/** Codes that are never sent to a client: restore failures are a replica's own problem. */
export type InternalKVErrorCode = 'ERR_KV_SNAPSHOT_INVALID';

/**
 * The etcd wire error of each client-facing key-space error (etcd's toGRPCErrorMap rows for
 * mvcc.ErrCompacted, mvcc.ErrFutureRev, lease.ErrLeaseNotFound, errors.ErrKeyNotFound, plus the
 * rpctypes errors v3rpc/key.go raises directly).
 */
export const KV_ERROR_WIRE_NAMES: Readonly<Record<Exclude<KVErrorCode, InternalKVErrorCode>, WireErrorName>> = Object.freeze({
  ERR_KV_EMPTY_KEY: 'EmptyKey',
  ERR_KV_KEY_NOT_FOUND: 'KeyNotFound',
  ERR_KV_VALUE_PROVIDED: 'ValueProvided',
  ERR_KV_LEASE_PROVIDED: 'LeaseProvided',
  ERR_KV_TOO_MANY_OPS: 'TooManyOps',
  ERR_KV_DUPLICATE_KEY: 'DuplicateKey',
  ERR_KV_INVALID_SORT_OPTION: 'InvalidSortOption',
  ERR_KV_COMPACTED: 'Compacted',
  ERR_KV_FUTURE_REVISION: 'FutureRev',
  ERR_KV_LEASE_NOT_FOUND: 'LeaseNotFound',
});

/**
 * The etcd wire error for a key-space error (exact gRPC code and text), or `undefined` for an
 * internal one, which the edge reports as an internal error.
 */
export function toWireError(error: KVError): EtcdWireError | undefined {
  if (error.code === 'ERR_KV_SNAPSHOT_INVALID') return undefined;
  return new EtcdWireError(KV_ERROR_WIRE_NAMES[error.code], { cause: error });
}
