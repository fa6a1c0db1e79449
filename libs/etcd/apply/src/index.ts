export { COMPACTION_TURN_MS, CompactionTurns, type CompactionTarget, type CompactionTurnsOptions } from './compaction-turns';
export { Applier, DEFAULT_MAX_LEASES, type ApplierDecoder, DEFAULT_MAX_SIMPLE_TOKENS, DEFAULT_MAX_SIMPLE_TOKENS_PER_USER, type ApplierOptions, type LeaseQuery } from './applier';
export type { ApplierSnapshotTask, KeySpaceSection, SnapshotAroundKeySpace } from './applier-snapshot';
export {
  DEFAULT_MAX_ENTRY_BYTES,
  ENTRY_FORMAT_VERSION,
  OPERATION_TAGS,
  decodeApplyRequest,
  encodeApplyRequest,
  type EntryCodecOptions,
} from './codec/entry-codec';
export { APPLY_ERROR_CODES, ApplyError, type ApplyErrorCode } from './errors';
export { MAX_LEASE_TTL_SECONDS } from './lease-table';
export { MAX_PUBLIC_JWK_CHARS, MAX_REVOKED_KEY_IDS, MAX_SIGNING_KEYS, checkSigningKeyRecord, type SigningKeyRecord } from './key-directory';
export { BCRYPT_HASH_BYTES, isBcryptHash, toPasswordHash, type PasswordHash } from './password-hash';
export {
  ADMIN_OPERATIONS,
  type ApplyOperation,
  type ApplyOperationType,
  type ApplyRequest,
  type AuthenticateRequest,
  type CompactRequest,
  type LeaseGrantRequest,
  type LeaseRevokeRequest,
  type RequestHeader,
  type RoleGrantPermissionRequest,
  type RoleRevokePermissionRequest,
  type SigningKeyPublishRequest,
  type SimpleTokenExpireRequest,
  type UserAddRequest,
  type UserChangePasswordRequest,
} from './request';
export type { ApplyHeader, ApplyResponse, ApplyResult } from './response';
export { authWireError, toWireError } from './wire-error-map';
export { LEASE_GRANT_COST_BYTES, PUT_OVERHEAD_BYTES, quotaCostBytes } from './quota';
