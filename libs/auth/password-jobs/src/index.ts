export type { PasswordBytesVerifier, PasswordVerifier } from './password-verifier';
export { PASSWORD_ERROR_CODES, PasswordError, type PasswordErrorCode } from './password-error';
export {
  BCRYPT_DEFAULT_COST,
  BCRYPT_HASH_LENGTH_BYTES,
  BCRYPT_MAX_COST,
  BCRYPT_MAX_PASSWORD_BYTES,
  BCRYPT_MIN_COST,
  assertBcryptCost,
  bcryptHashCost,
  checkHashablePassword,
  checkedBcryptHash,
  isBcryptCost,
  passwordBytesForHashing,
  passwordBytesForVerifying,
  truncatePasswordForVerifying,
} from './bcrypt-rules';
export {
  KEY_ID_PATTERN,
  PASSWORD_JOB_NAMES,
  PASSWORD_JOB_SCHEMA_VERSION,
  PASSWORD_QUEUE_NAME,
  PLAINTEXT_BYTES,
  REQUEST_ID_BYTES,
  SEAL_NONCE_BYTES,
  SEAL_TAG_BYTES,
  base64UrlLength,
  checkRequestEnvelope,
  checkResultEnvelope,
  isPasswordJobName,
  sealAssociatedData,
  type Checked,
  type PasswordJobName,
  type PasswordRequest,
  type PasswordRequestEnvelope,
  type PasswordResult,
  type PasswordResultEnvelope,
} from './job-contract';
export { decodeRequestPlaintext, decodeResultPlaintext, encodeRequestPlaintext, encodeResultPlaintext } from './plaintext-layout';
