// The password tier's failures as etcd's wire errors, for every service that checks passwords
// (the gateway and the token-service answer them alike).
import { PasswordError } from '@ward/auth/password-jobs';
import type { WireErrorName } from '@ward/etcd/wire-errors';

const PASSWORD_ERRORS: Readonly<Record<PasswordError['code'], WireErrorName>> = {
  // etcd ≥ 3.5: the bcrypt error is unmapped and reaches the client as Unknown with its text.
  ERR_AUTH_PASSWORD_TOO_LONG: 'PasswordTooLong',
  // Only reachable when hashing; verification of a malformed stored hash is `authentication failed`.
  ERR_AUTH_PASSWORD_HASH_MALFORMED: 'AuthFailed',
  // Admission control, a full pool or queue: etcd's `too many requests` (RESOURCE_EXHAUSTED).
  ERR_AUTH_PASSWORD_TIER_BUSY: 'TooManyRequests',
  ERR_AUTH_PASSWORD_TIER_TIMEOUT: 'Timeout',
  // The tier, or its Redis, cannot answer: `unhealthy cluster` (UNAVAILABLE), at once.
  ERR_AUTH_PASSWORD_TIER_FAILED: 'Unhealthy',
  ERR_AUTH_PASSWORD_TIER_CLOSED: 'Stopped',
};

/** The etcd error a password-tier failure is answered with; undefined for anything else. */
export function passwordErrorWireName(error: unknown): WireErrorName | undefined {
  return error instanceof PasswordError ? PASSWORD_ERRORS[error.code] : undefined;
}
