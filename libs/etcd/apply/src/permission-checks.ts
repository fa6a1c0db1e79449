// The apply-time decision table (spec/etcd-auth.md §3.5 and §6, etcd 3.7 semantics): which
// permission each key-space operation needs. Each check returns the auth store's error code for the
// first failing requirement, or null. Nothing here changes state.

import type { AuthErrorCode, AuthIdentity, AuthStore } from '@ward/auth/permissions';
import type { DeleteRangeRequest, KVStore, LeaseId, PutRequest, RangeRequest, RequestOp, TxnRequest } from '@ward/etcd/kv-store';
import type { LeaseTable } from './lease-table';

const SINGLE_KEY = new Uint8Array(0);

/** What a check reads: the auth store, the key space (lease attachments) and the lessor. */
export interface CheckContext {
  readonly auth: AuthStore;
  readonly kv: KVStore;
  readonly leases: LeaseTable;
  readonly identity: AuthIdentity;
}

/** Range: READ on `[key, rangeEnd)`. */
export function checkRange(context: CheckContext, request: RangeRequest): AuthErrorCode | null {
  return context.auth.checkAccess(context.identity, 'read', request.key, request.rangeEnd ?? SINGLE_KEY);
}

/**
 * Put: WRITE on the key; then, when it names an existing lease, WRITE on every key already attached
 * to that lease unless the caller is an admin (etcd's checkLeasePuts: a user who could not revoke
 * the lease must not attach to it); then READ on the key when prev_kv is asked for.
 */
export function checkPut(context: CheckContext, request: PutRequest): AuthErrorCode | null {
  const write = context.auth.checkAccess(context.identity, 'write', request.key, SINGLE_KEY);
  if (write !== null) return write;
  const lease = checkLeaseKeys(context, request.lease ?? 0n);
  if (lease !== null) return lease;
  if (request.prevKv === true) return context.auth.checkAccess(context.identity, 'read', request.key, SINGLE_KEY);
  return null;
}

/** DeleteRange: WRITE on the range; READ on it too when prev_kv is asked for. */
export function checkDeleteRange(context: CheckContext, request: DeleteRangeRequest): AuthErrorCode | null {
  const rangeEnd = request.rangeEnd ?? SINGLE_KEY;
  const write = context.auth.checkAccess(context.identity, 'write', request.key, rangeEnd);
  if (write !== null) return write;
  if (request.prevKv === true) return context.auth.checkAccess(context.identity, 'read', request.key, rangeEnd);
  return null;
}

/**
 * Txn: READ on every compare's range, then every operation of BOTH branches whatever the outcome,
 * each by its own rule, nested txns at any depth (depth is bounded by request validation, which
 * runs first). The first failure refuses the whole txn.
 */
export function checkTxn(context: CheckContext, request: TxnRequest): AuthErrorCode | null {
  for (const compare of request.compare) {
    const read = context.auth.checkAccess(context.identity, 'read', compare.key, compare.rangeEnd ?? SINGLE_KEY);
    if (read !== null) return read;
  }
  return checkOps(context, request.success) ?? checkOps(context, request.failure);
}

function checkOps(context: CheckContext, ops: readonly RequestOp[]): AuthErrorCode | null {
  for (const op of ops) {
    const error = checkOp(context, op);
    if (error !== null) return error;
  }
  return null;
}

function checkOp(context: CheckContext, op: RequestOp): AuthErrorCode | null {
  switch (op.type) {
    case 'range':
      return checkRange(context, op.request);
    case 'put':
      return checkPut(context, op.request);
    case 'deleteRange':
      return checkDeleteRange(context, op.request);
    case 'txn':
      return checkTxn(context, op.request);
  }
}

/**
 * etcd's checkLeasePuts: nothing to check for no lease or an unknown one (the key space then
 * answers `lease not found`); admins pass; others need WRITE on each attached key.
 */
export function checkLeaseKeys(context: CheckContext, lease: LeaseId): AuthErrorCode | null {
  return checkAttachedKeys(context, lease, 'write');
}

/**
 * The lessor's queries, answered outside the log (spec §3.5, etcd 3.7): a user while auth is on;
 * then, for a keep-alive (`write`) or a time-to-live listing keys (`read`), admin or that access
 * on every key attached to the lease. An unknown lease passes (the lessor answers not found).
 */
export function checkLeaseAccess(context: CheckContext, lease: LeaseId, access: 'read' | 'write' | 'none'): AuthErrorCode | null {
  const authenticated = checkAuthenticated(context);
  if (authenticated !== null || access === 'none') return authenticated;
  return checkAttachedKeys(context, lease, access);
}

/** Admin, or `access` on every key attached to `lease`; no lease or an unknown one passes. */
function checkAttachedKeys(context: CheckContext, lease: LeaseId, access: 'read' | 'write'): AuthErrorCode | null {
  if (lease === 0n || !context.leases.leaseExists(lease)) return null;
  if (context.auth.isAdminPermitted(context.identity.username) === null) return null;
  for (const key of context.kv.leaseKeys(lease)) {
    const error = context.auth.checkAccess(context.identity, access, key, SINGLE_KEY);
    if (error !== null) return error;
  }
  return null;
}

/** LeaseLeases: a user; admin, or READ on every key of every lease (one unreadable key refuses all). */
export function checkLeaseList(context: CheckContext): AuthErrorCode | null {
  const authenticated = checkAuthenticated(context);
  if (authenticated !== null) return authenticated;
  if (context.auth.isAdminPermitted(context.identity.username) === null) return null;
  for (const lease of context.leases.ids()) {
    for (const key of context.kv.leaseKeys(lease)) {
      const error = context.auth.checkAccess(context.identity, 'read', key, SINGLE_KEY);
      if (error !== null) return error;
    }
  }
  return null;
}

/** Compact needs an admin (etcd 3.4.42+/3.5.28+/3.6.9+/3.7). */
export function checkCompact(context: CheckContext): AuthErrorCode | null {
  return context.auth.isAdminPermitted(context.identity.username);
}

/** "Authenticated": while auth is on, a request must carry a user (LeaseGrant). */
export function checkAuthenticated(context: CheckContext): AuthErrorCode | null {
  if (!context.auth.enabled) return null;
  return context.identity.username === '' || context.identity.authRevision === 0 ? 'ERR_AUTH_USER_EMPTY' : null;
}
