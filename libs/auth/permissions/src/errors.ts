import { CodedError } from '@ward/shared/errors';

/**
 * Every operating failure of the auth store. Each code stands for one etcd auth error (named in the
 * comment) so that the etcd apply layer can map it to the exact wire error in one table.
 */
export const AUTH_ERROR_CODES = [
  'ERR_AUTH_ROOT_USER_NOT_EXIST', // ErrRootUserNotExist
  'ERR_AUTH_ROOT_ROLE_NOT_EXIST', // ErrRootRoleNotExist
  'ERR_AUTH_USER_ALREADY_EXIST', // ErrUserAlreadyExist
  'ERR_AUTH_USER_EMPTY', // ErrUserEmpty
  'ERR_AUTH_USER_NOT_FOUND', // ErrUserNotFound
  'ERR_AUTH_ROLE_ALREADY_EXIST', // ErrRoleAlreadyExist
  'ERR_AUTH_ROLE_NOT_FOUND', // ErrRoleNotFound
  'ERR_AUTH_ROLE_EMPTY', // ErrRoleEmpty
  'ERR_AUTH_PERMISSION_NOT_GIVEN', // ErrPermissionNotGiven
  'ERR_AUTH_FAILED', // ErrAuthFailed
  'ERR_AUTH_PERMISSION_DENIED', // ErrPermissionDenied
  'ERR_AUTH_ROLE_NOT_GRANTED', // ErrRoleNotGranted
  'ERR_AUTH_PERMISSION_NOT_GRANTED', // ErrPermissionNotGranted
  'ERR_AUTH_NOT_ENABLED', // ErrAuthNotEnabled
  'ERR_AUTH_INVALID_MGMT', // ErrInvalidAuthMgmt
  'ERR_AUTH_OLD_REVISION', // ErrAuthOldRevision
  'ERR_AUTH_NO_PASSWORD_USER', // ErrNoPasswordUser
  'ERR_AUTH_LIMIT_EXCEEDED', // ward: a configured store limit (no etcd counterpart)
  'ERR_AUTH_USER_NAME_TOO_LONG', // ward: a user name over maxNameBytes (no etcd counterpart)
  'ERR_AUTH_ROLE_NAME_TOO_LONG', // ward: a role name over maxNameBytes (no etcd counterpart)
  'ERR_AUTH_SNAPSHOT_INVALID', // ward: snapshot bytes that do not decode to a valid store
] as const;

export type AuthErrorCode = (typeof AUTH_ERROR_CODES)[number];

/** Context carried as fields, never inside the message (names may be sensitive in logs). */
export interface AuthErrorContext {
  readonly user?: string;
  readonly role?: string;
  /** For ERR_AUTH_LIMIT_EXCEEDED: which limit. */
  readonly limit?: string;
  readonly cause?: unknown;
}

const MESSAGES: Readonly<Record<AuthErrorCode, string>> = {
  ERR_AUTH_ROOT_USER_NOT_EXIST: 'root user does not exist',
  ERR_AUTH_ROOT_ROLE_NOT_EXIST: 'root user does not have root role',
  ERR_AUTH_USER_ALREADY_EXIST: 'user name already exists',
  ERR_AUTH_USER_EMPTY: 'user name is empty',
  ERR_AUTH_USER_NOT_FOUND: 'user name not found',
  ERR_AUTH_ROLE_ALREADY_EXIST: 'role name already exists',
  ERR_AUTH_ROLE_NOT_FOUND: 'role name not found',
  ERR_AUTH_ROLE_EMPTY: 'role name is empty',
  ERR_AUTH_PERMISSION_NOT_GIVEN: 'permission not given',
  ERR_AUTH_FAILED: 'authentication failed, invalid user ID or password',
  ERR_AUTH_PERMISSION_DENIED: 'permission denied',
  ERR_AUTH_ROLE_NOT_GRANTED: 'role is not granted to the user',
  ERR_AUTH_PERMISSION_NOT_GRANTED: 'permission is not granted to the role',
  ERR_AUTH_NOT_ENABLED: 'authentication is not enabled',
  ERR_AUTH_INVALID_MGMT: 'invalid auth management',
  ERR_AUTH_OLD_REVISION: 'revision in header is old',
  ERR_AUTH_NO_PASSWORD_USER: 'authentication failed, password was given for no password user',
  ERR_AUTH_LIMIT_EXCEEDED: 'auth store limit exceeded',
  ERR_AUTH_USER_NAME_TOO_LONG: 'user name is too long',
  ERR_AUTH_ROLE_NAME_TOO_LONG: 'role name is too long',
  ERR_AUTH_SNAPSHOT_INVALID: 'auth store snapshot is invalid',
};

/**
 * An expected failure of an auth store operation or check.
 *
 * @example
 * ```ts
 * try { store.userAdd({ name: 'alice', passwordHash }) } catch (error) {
 *   if (error instanceof AuthError && error.code === 'ERR_AUTH_USER_ALREADY_EXIST') { ... }
 * }
 * ```
 */
export class AuthError extends CodedError<AuthErrorCode> {
  readonly user: string | undefined;
  readonly role: string | undefined;
  readonly limit: string | undefined;

  constructor(code: AuthErrorCode, context: AuthErrorContext = {}) {
    super(code, `auth: ${MESSAGES[code]}`, context.cause === undefined ? undefined : { cause: context.cause });
    this.user = context.user;
    this.role = context.role;
    this.limit = context.limit;
  }
}

/** True when `value` is an AuthError, optionally with the given code. */
export function isAuthError(value: unknown, code?: AuthErrorCode): value is AuthError {
  return value instanceof AuthError && (code === undefined || value.code === code);
}
