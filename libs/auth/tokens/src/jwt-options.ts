import type { Clock } from '@ward/shared/clock';
import { TokenError } from './errors';

/** etcd's JWT `ttl` default (`DefaultTTL`, 5 minutes). */
export const DEFAULT_JWT_TTL_MS = 5 * 60 * 1000;
/** Suggested clock tolerance between a minting and a verifying host. */
export const DEFAULT_JWT_CLOCK_TOLERANCE_SECONDS = 30;
/** Suggested token length bound: etcd-style tokens are a few hundred characters (RSA-4096: ~900). */
export const DEFAULT_JWT_MAX_TOKEN_LENGTH_CHARS = 8 * 1024;
/** Suggested bound on how far ahead `exp` may be (externally minted tokens included). */
export const DEFAULT_JWT_MAX_LIFETIME_SECONDS = 24 * 3600;
/** Verification keys held at once (rotation and external issuers). */
export const MAX_JWT_VERIFICATION_KEYS = 16;

/** How tokens are issued and checked. Every field is explicit: no library default applies. */
export interface JwtPolicy {
  /** Lifetime of issued tokens (`exp` = floor((now + ttl) / 1 s), as Go's `Unix()`); ≥ 1 s. */
  readonly ttlMs: number;
  /** Leeway for `exp` and `nbf` when verifying, in seconds (0..300). */
  readonly clockToleranceSeconds: number;
  /** Longer tokens are refused before any parsing (256..65536). */
  readonly maxTokenLengthChars: number;
  /**
   * Refuse tokens without `exp`. etcd accepts them (golang-jwt does not require it), which makes
   * an externally minted token without `exp` valid forever; ward refuses them unless told not to.
   */
  readonly requireExpiry: boolean;
  /** Refuse tokens whose `exp` is more than this ahead of now (+ tolerance). ≥ ttl. */
  readonly maxLifetimeSeconds: number;
  /** Put the signing key's `kid` in issued headers (etcd's header is just alg and typ). */
  readonly includeKeyIdHeader: boolean;
  /** Time for `exp` when signing and for every time check when verifying. */
  readonly clock: Clock;
}

function optionsError(detail: string): TokenError {
  return new TokenError('ERR_AUTH_TOKEN_OPTIONS_INVALID', { detail });
}

function checkRange(name: string, value: number, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw optionsError(`${name} must be an integer in [${min}, ${max}]`);
}

/** Checks a policy's fields and their relations (fails; never falls back to defaults). */
export function checkJwtPolicy(policy: JwtPolicy): JwtPolicy {
  checkRange('ttlMs', policy.ttlMs, 1000, 365 * 24 * 3600 * 1000);
  checkRange('clockToleranceSeconds', policy.clockToleranceSeconds, 0, 300);
  checkRange('maxTokenLengthChars', policy.maxTokenLengthChars, 256, 65_536);
  checkRange('maxLifetimeSeconds', policy.maxLifetimeSeconds, 1, 10 * 365 * 24 * 3600);
  if (policy.maxLifetimeSeconds * 1000 < policy.ttlMs) throw optionsError('maxLifetimeSeconds must cover ttlMs');
  if (policy.maxLifetimeSeconds <= policy.clockToleranceSeconds) throw optionsError('maxLifetimeSeconds must exceed clockToleranceSeconds');
  return Object.freeze({ ...policy });
}
