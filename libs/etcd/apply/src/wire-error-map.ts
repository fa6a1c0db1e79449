// The one table from domain error codes to etcd wire errors (etcd's toGRPCErrorMap), so a refused
// request is answered with etcd's exact gRPC code and text.

import { AuthError, type AuthErrorCode } from '@ward/auth/permissions';
import { KVError, KV_ERROR_WIRE_NAMES, type KVErrorCode } from '@ward/etcd/kv-store';
import { EtcdWireError, wireError, type WireErrorName } from '@ward/etcd/wire-errors';
import { ApplyError, type ApplyErrorCode } from './errors';

const AUTH_WIRE: Readonly<Record<AuthErrorCode, WireErrorName>> = {
  ERR_AUTH_ROOT_USER_NOT_EXIST: 'RootUserNotExist',
  ERR_AUTH_ROOT_ROLE_NOT_EXIST: 'RootRoleNotExist',
  ERR_AUTH_USER_ALREADY_EXIST: 'UserAlreadyExist',
  ERR_AUTH_USER_EMPTY: 'UserEmpty',
  ERR_AUTH_USER_NOT_FOUND: 'UserNotFound',
  ERR_AUTH_ROLE_ALREADY_EXIST: 'RoleAlreadyExist',
  ERR_AUTH_ROLE_NOT_FOUND: 'RoleNotFound',
  ERR_AUTH_ROLE_EMPTY: 'RoleEmpty',
  ERR_AUTH_PERMISSION_NOT_GIVEN: 'PermissionNotGiven',
  ERR_AUTH_FAILED: 'AuthFailed',
  ERR_AUTH_PERMISSION_DENIED: 'PermissionDenied',
  ERR_AUTH_ROLE_NOT_GRANTED: 'RoleNotGranted',
  ERR_AUTH_PERMISSION_NOT_GRANTED: 'PermissionNotGranted',
  ERR_AUTH_NOT_ENABLED: 'AuthNotEnabled',
  ERR_AUTH_INVALID_MGMT: 'InvalidAuthMgmt',
  ERR_AUTH_OLD_REVISION: 'AuthOldRevision',
  ERR_AUTH_NO_PASSWORD_USER: 'NoPasswordUser',
  // No etcd counterpart: a full store is closest to etcd's quota error.
  ERR_AUTH_LIMIT_EXCEEDED: 'NoSpace',
  // No etcd counterpart either (etcd takes any name, and 3.4.23 crashes above 32 KiB): a clear
  // InvalidArgument, not a quota error.
  ERR_AUTH_USER_NAME_TOO_LONG: 'UserNameTooLong',
  ERR_AUTH_ROLE_NAME_TOO_LONG: 'RoleNameTooLong',
  // Only snapshot restore raises it, never an applied request.
  ERR_AUTH_SNAPSHOT_INVALID: 'Corrupt',
};

// The key space's own table (kv-store's wire mapping), plus its one internal code.
const KV_WIRE: Readonly<Record<KVErrorCode, WireErrorName>> = {
  ...KV_ERROR_WIRE_NAMES,
  ERR_KV_SNAPSHOT_INVALID: 'Corrupt',
};

const APPLY_WIRE: Readonly<Record<ApplyErrorCode, WireErrorName>> = {
  ERR_APPLY_LEASE_EXIST: 'LeaseExist',
  ERR_APPLY_LEASE_NOT_FOUND: 'LeaseNotFound',
  ERR_APPLY_LEASE_TTL_TOO_LARGE: 'LeaseTTLTooLarge',
  ERR_APPLY_LEASE_LIMIT: 'NoSpace',
  ERR_APPLY_ENTRY_INVALID: 'Corrupt',
  ERR_APPLY_ENTRY_TOO_LARGE: 'RequestTooLarge',
  ERR_APPLY_SNAPSHOT_INVALID: 'Corrupt',
  ERR_APPLY_SIGNING_KEY_INVALID: 'SigningKeyInvalid',
  ERR_APPLY_SIGNING_KEY_CONFLICT: 'SigningKeyConflict',
  ERR_APPLY_SIGNING_KEY_REVOKED: 'SigningKeyRevoked',
  ERR_APPLY_SIGNING_KEY_NOT_FOUND: 'SigningKeyNotFound',
  ERR_APPLY_SIGNING_KEY_LIMIT: 'NoSpace',
};

/** The wire error for an auth store code (the apply layer's checks return codes, not errors). */
export function authWireError(code: AuthErrorCode): EtcdWireError {
  return wireError(AUTH_WIRE[code]);
}

/**
 * The wire error for an expected domain failure. Anything else — a TypeError, a failed assertion —
 * is a bug and is rethrown: it must stop the replica, not be answered.
 */
export function toWireError(error: unknown): EtcdWireError {
  if (error instanceof EtcdWireError) return error;
  if (error instanceof AuthError) return wireError(AUTH_WIRE[error.code], { cause: error });
  if (error instanceof KVError) return wireError(KV_WIRE[error.code as KVErrorCode], { cause: error });
  if (error instanceof ApplyError) return wireError(APPLY_WIRE[error.code], { cause: error });
  throw error;
}

/** The tables, for the catalogue test. */
export const WIRE_ERROR_TABLES = { auth: AUTH_WIRE, kv: KV_WIRE, apply: APPLY_WIRE } as const;
