import { CodedError } from '@ward/shared/errors';

/** Every operating failure of the password tier, whichever implementation answers. */
export const PASSWORD_ERROR_CODES = [
  // etcd: unmapped bcrypt error, sent as gRPC Unknown with this exact text.
  'ERR_AUTH_PASSWORD_TOO_LONG',
  // A stored hash that is not a bcrypt hash (etcd: CompareHashAndPassword fails ⇒ ErrAuthFailed).
  'ERR_AUTH_PASSWORD_HASH_MALFORMED',
  // Too many requests outstanding (bounded queue/pool): shed load rather than queue without end.
  'ERR_AUTH_PASSWORD_TIER_BUSY',
  // No answer within the request timeout.
  'ERR_AUTH_PASSWORD_TIER_TIMEOUT',
  // The tier answered with a failure (job failed after its retries, undecodable result).
  'ERR_AUTH_PASSWORD_TIER_FAILED',
  // The verifier was closed.
  'ERR_AUTH_PASSWORD_TIER_CLOSED',
] as const;

export type PasswordErrorCode = (typeof PASSWORD_ERROR_CODES)[number];

const MESSAGES: Readonly<Record<PasswordErrorCode, string>> = {
  // The exact text etcd sends (x/crypto's ErrPasswordTooLong), so the gateway can pass it through.
  ERR_AUTH_PASSWORD_TOO_LONG: 'bcrypt: password length exceeds 72 bytes',
  ERR_AUTH_PASSWORD_HASH_MALFORMED: 'password: stored hash is not a bcrypt hash',
  ERR_AUTH_PASSWORD_TIER_BUSY: 'password: too many outstanding requests',
  ERR_AUTH_PASSWORD_TIER_TIMEOUT: 'password: request timed out',
  ERR_AUTH_PASSWORD_TIER_FAILED: 'password: request failed',
  ERR_AUTH_PASSWORD_TIER_CLOSED: 'password: verifier is closed',
};

/**
 * An expected failure of hashing or verification. Never carries a password or a hash; context
 * (a limit, a reason word) goes in fields.
 *
 * @example
 * ```ts
 * try { await verifier.hash(password) } catch (error) {
 *   if (hasCode(error, 'ERR_AUTH_PASSWORD_TOO_LONG')) return wireError('PasswordTooLong');
 * }
 * ```
 */
export class PasswordError extends CodedError<PasswordErrorCode> {
  /** A short machine-readable reason (e.g. `expired`, `payload-invalid`), never a secret. */
  readonly reason: string | undefined;
  /** The limit that was hit, for BUSY and TIMEOUT. */
  readonly limit: number | undefined;

  constructor(code: PasswordErrorCode, context: { reason?: string; limit?: number; cause?: unknown } = {}) {
    super(code, MESSAGES[code], context.cause === undefined ? undefined : { cause: context.cause });
    this.reason = context.reason;
    this.limit = context.limit;
  }
}
