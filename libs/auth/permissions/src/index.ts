export { AuthStore, type AuthIdentity, type AuthStoreOptions, type UserAddInput } from './auth-store';
export { ROOT_ROLE, ROOT_USER } from './auth-state';
export { AUTH_ERROR_CODES, AuthError, isAuthError, type AuthErrorCode, type AuthErrorContext } from './errors';
export { DEFAULT_AUTH_LIMITS, resolveAuthLimits, type AuthLimits } from './limits';
export { compareNames } from './names';
export {
  PermissionType,
  isOpenEnded,
  isValidPermissionRange,
  type Access,
  type Permission,
} from './permission';
export { CoverageIndex, type CoveredInterval } from './coverage-index';
