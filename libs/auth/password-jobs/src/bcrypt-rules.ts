// bcrypt facts shared by every implementation of the tier (numbers from Go's x/crypto/bcrypt,
// which etcd uses, and the OpenBSD algorithm the `bcrypt` package implements).
import { PasswordError } from './password-error';

export const BCRYPT_MIN_COST = 4;
export const BCRYPT_MAX_COST = 31;
/** etcd's `--bcrypt-cost` default (`bcrypt.DefaultCost`). */
export const BCRYPT_DEFAULT_COST = 10;
/** bcrypt reads at most this many key bytes. */
export const BCRYPT_MAX_PASSWORD_BYTES = 72;
/** `$2b$10$` + 22 salt characters + 31 hash characters. */
export const BCRYPT_HASH_LENGTH_BYTES = 60;

const HASH_PATTERN = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/** True for an integer cost in [4, 31]. */
export function isBcryptCost(cost: number): boolean {
  return Number.isInteger(cost) && cost >= BCRYPT_MIN_COST && cost <= BCRYPT_MAX_COST;
}

/** Throws TypeError unless `cost` is an integer in [4, 31] (fail; never fall back to 10). */
export function assertBcryptCost(cost: number, what: string): void {
  if (!isBcryptCost(cost)) {
    throw new TypeError(`${what}: bcrypt cost must be an integer in [${BCRYPT_MIN_COST}, ${BCRYPT_MAX_COST}], got ${String(cost)}`);
  }
}

/**
 * The cost of a well-formed bcrypt hash (ASCII bytes, versions 2a/2b/2y, cost 4..31), or undefined.
 */
export function bcryptHashCost(hash: Uint8Array): number | undefined {
  if (hash.length !== BCRYPT_HASH_LENGTH_BYTES) return undefined;
  let text = '';
  for (const byte of hash) {
    if (byte > 0x7e || byte < 0x21) return undefined;
    text += String.fromCharCode(byte);
  }
  const match = HASH_PATTERN.exec(text);
  if (match === null) return undefined;
  const cost = Number(match[1]);
  return isBcryptCost(cost) ? cost : undefined;
}

/** The hash as a string after checking it; throws PasswordError HASH_MALFORMED otherwise. */
export function checkedBcryptHash(hash: Uint8Array): string {
  if (bcryptHashCost(hash) === undefined) throw new PasswordError('ERR_AUTH_PASSWORD_HASH_MALFORMED');
  return String.fromCharCode(...hash);
}

/**
 * A copy of the password bytes to hash (the caller's bytes are never changed: Authenticate may
 * check the same password again); throws TOO_LONG above 72 bytes, as current x/crypto does.
 */
export function passwordBytesForHashing(password: Uint8Array): Uint8Array {
  return checkHashablePassword(password.slice());
}

/** `bytes` itself when at most 72 bytes; otherwise zeroes it and throws PasswordError TOO_LONG. */
export function checkHashablePassword(bytes: Uint8Array): Uint8Array {
  if (bytes.length > BCRYPT_MAX_PASSWORD_BYTES) {
    bytes.fill(0);
    throw new PasswordError('ERR_AUTH_PASSWORD_TOO_LONG', { limit: BCRYPT_MAX_PASSWORD_BYTES });
  }
  return bytes;
}

/**
 * A copy of the password bytes to verify, cut to the 72 bytes bcrypt reads (the caller's bytes are
 * never changed). Same result as Go's CompareHashAndPassword, and it sidesteps the 8-bit length
 * wrap of old `$2a$` implementations.
 */
export function passwordBytesForVerifying(password: Uint8Array): Uint8Array {
  return truncatePasswordForVerifying(password.slice());
}

/** The first 72 bytes of `bytes` (a copy when cut; the original is then zeroed). */
export function truncatePasswordForVerifying(bytes: Uint8Array): Uint8Array {
  if (bytes.length <= BCRYPT_MAX_PASSWORD_BYTES) return bytes;
  const cut = bytes.slice(0, BCRYPT_MAX_PASSWORD_BYTES);
  bytes.fill(0);
  return cut;
}
