import { CodedError } from '@ward/shared/errors';

/**
 * Every operating failure of the token library. The comments name etcd's error each stands for;
 * messages are etcd's texts where etcd has one (the gateway maps codes to wire errors: INVALID ⇒
 * `etcdserver: invalid auth token`, VERIFY_ONLY ⇒ Unknown with this text).
 */
export const TOKEN_ERROR_CODES = [
  'ERR_AUTH_TOKEN_INVALID', // ErrInvalidAuthToken (Unauthenticated)
  'ERR_AUTH_TOKEN_VERIFY_ONLY', // ErrVerifyOnly (unmapped: Unknown)
  'ERR_AUTH_TOKEN_OPTIONS_INVALID', // ErrInvalidAuthOpts (startup)
  'ERR_AUTH_TOKEN_METHOD_INVALID', // ErrInvalidAuthMethod (startup)
  'ERR_AUTH_TOKEN_KEY_MISSING', // ErrMissingKey (startup)
  'ERR_AUTH_TOKEN_KEY_MISMATCH', // ErrKeyMismatch (startup)
  'ERR_AUTH_TOKEN_KEY_INVALID', // ward: unreadable key, wrong key type or curve, weak key (startup)
] as const;

export type TokenErrorCode = (typeof TOKEN_ERROR_CODES)[number];

/** Why a presented token was refused (a closed vocabulary; all map to `invalid auth token`). */
export const TOKEN_INVALID_REASONS = [
  'too-long', // longer than maxTokenLengthChars: refused before parsing
  'malformed', // not a compact JWS, undecodable header or payload, unsupported crit
  'header-not-allowed', // jku, x5u, jwk or x5c in the header: keys are never taken from a token
  'alg-not-allowed', // `alg` is none, or no configured key uses it (pinning; HS/RS confusion)
  'unknown-key', // `kid` names no configured key
  'signature', // no candidate key verifies the signature
  'expired', // `exp` passed (beyond clock tolerance)
  'not-yet-valid', // `nbf` or `iat` in the future (beyond clock tolerance)
  'claim-missing', // `username`, `revision` or (when required) `exp` absent
  'claim-invalid', // a claim of the wrong type or range; `iss` or `aud` not the key's issuer
  'lifetime-too-long', // `exp` further ahead than maxLifetimeSeconds
] as const;

export type TokenInvalidReason = (typeof TOKEN_INVALID_REASONS)[number];

const MESSAGES: Readonly<Record<TokenErrorCode, string>> = {
  ERR_AUTH_TOKEN_INVALID: 'auth: invalid auth token',
  ERR_AUTH_TOKEN_VERIFY_ONLY: 'auth: token signing attempted with verify-only key',
  ERR_AUTH_TOKEN_OPTIONS_INVALID: 'auth: invalid auth options',
  ERR_AUTH_TOKEN_METHOD_INVALID: 'auth: invalid auth signature method',
  ERR_AUTH_TOKEN_KEY_MISSING: 'auth: missing key data',
  ERR_AUTH_TOKEN_KEY_MISMATCH: "auth: public and private keys don't match",
  ERR_AUTH_TOKEN_KEY_INVALID: 'auth: invalid key data',
};

export interface TokenErrorContext {
  /** For INVALID: why. */
  readonly reason?: TokenInvalidReason;
  /** For INVALID with a claim problem: which claim. */
  readonly claim?: string;
  /** For option and key errors: what was wrong (never key material). */
  readonly detail?: string;
  readonly cause?: unknown;
}

/**
 * A token or token-configuration failure. The token and key material are never carried.
 *
 * @example
 * ```ts
 * try { identity = await provider.verify(token) } catch (error) {
 *   if (error instanceof TokenError && error.code === 'ERR_AUTH_TOKEN_INVALID') return wireError('InvalidAuthToken');
 * }
 * ```
 */
export class TokenError extends CodedError<TokenErrorCode> {
  readonly reason: TokenInvalidReason | undefined;
  readonly claim: string | undefined;
  readonly detail: string | undefined;

  constructor(code: TokenErrorCode, context: TokenErrorContext = {}) {
    super(code, MESSAGES[code], context.cause === undefined ? undefined : { cause: context.cause });
    this.reason = context.reason;
    this.claim = context.claim;
    this.detail = context.detail;
  }
}

/** Shorthand for an ERR_AUTH_TOKEN_INVALID with its reason. */
export function invalidToken(reason: TokenInvalidReason, context: Omit<TokenErrorContext, 'reason'> = {}): TokenError {
  return new TokenError('ERR_AUTH_TOKEN_INVALID', { ...context, reason });
}
