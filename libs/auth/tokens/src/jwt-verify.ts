// Strict verification: the token's `alg` selects only keys bound to that algorithm (so `none`,
// and an HS256 token "signed" with an RSA public key, find no key at all); `kid`, when present,
// selects exactly one key; time comes from the injected clock with an explicit tolerance.
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type ProtectedHeaderParameters } from 'jose';
import { invalidToken, type TokenError, type TokenInvalidReason } from './errors';
import { readEtcdClaims, type JwtIdentity } from './jwt-claims';
import type { JwtPolicy } from './jwt-options';
import type { JwtKey } from './key-material';
import { KEY_ID_PATTERN } from './key-id';

/** Header parameters that would bring their own key or a URL to fetch one: refused, never used. */
export const FORBIDDEN_JWT_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Verifies an untrusted token against the configured keys. Throws TokenError INVALID (with a reason). */
export async function verifyJwt(token: unknown, keys: readonly JwtKey[], policy: JwtPolicy): Promise<JwtIdentity> {
  if (typeof token !== 'string') throw invalidToken('malformed');
  if (token.length > policy.maxTokenLengthChars) throw invalidToken('too-long');
  if (!COMPACT_JWS.test(token)) throw invalidToken('malformed');
  const header = readHeader(token);
  const candidates = candidateKeys(header, keys);
  for (const key of candidates) {
    const identity = await verifyWithKey(token, key, policy);
    if (identity !== undefined) return identity;
  }
  throw invalidToken('signature');
}

function readHeader(token: string): ProtectedHeaderParameters {
  try {
    return decodeProtectedHeader(token);
  } catch (error) {
    throw invalidToken('malformed', { cause: error });
  }
}

function candidateKeys(header: ProtectedHeaderParameters, keys: readonly JwtKey[]): readonly JwtKey[] {
  if (typeof header.alg !== 'string') throw invalidToken('malformed');
  for (const name of FORBIDDEN_JWT_HEADERS) if (name in header) throw invalidToken('header-not-allowed');
  const sameAlg = keys.filter((key) => key.alg === header.alg);
  if (sameAlg.length === 0) throw invalidToken('alg-not-allowed');
  if (header.kid === undefined) return sameAlg;
  if (typeof header.kid !== 'string') throw invalidToken('malformed');
  if (!KEY_ID_PATTERN.test(header.kid)) throw invalidToken('unknown-key');
  const named = sameAlg.filter((key) => key.keyId === header.kid);
  if (named.length === 0) throw invalidToken('unknown-key');
  return named;
}

/** The identity, or undefined when this key's signature check fails (the next key may match). */
async function verifyWithKey(token: string, key: JwtKey, policy: JwtPolicy): Promise<JwtIdentity | undefined> {
  let payload: Record<string, unknown>;
  try {
    const result = await jwtVerify(token, key.verifyingKey, {
      algorithms: [key.alg],
      currentDate: new Date(policy.clock.nowMs()),
      clockTolerance: policy.clockToleranceSeconds,
      requiredClaims: policy.requireExpiry ? ['exp'] : [],
      ...(key.expectedIssuer === undefined ? {} : { issuer: key.expectedIssuer }),
      ...(key.expectedAudience === undefined ? {} : { audience: key.expectedAudience }),
    });
    payload = result.payload;
  } catch (error) {
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) return undefined;
    throw fromJoseError(error);
  }
  const nowSeconds = policy.clock.nowMs() / 1000;
  if (typeof payload.iat === 'number' && payload.iat > nowSeconds + policy.clockToleranceSeconds) throw invalidToken('not-yet-valid', { claim: 'iat' });
  const { username, revision } = readEtcdClaims(payload);
  const expiresAtSeconds = typeof payload.exp === 'number' ? payload.exp : undefined;
  const latestExpirySeconds = Math.floor(policy.clock.nowMs() / 1000) + policy.maxLifetimeSeconds + policy.clockToleranceSeconds;
  if (expiresAtSeconds !== undefined && expiresAtSeconds > latestExpirySeconds) throw invalidToken('lifetime-too-long');
  return { username, revision, expiresAtSeconds, keyId: key.keyId };
}

function fromJoseError(error: unknown): TokenError {
  if (!(error instanceof joseErrors.JOSEError)) throw error; // not about the token: a bug; let it surface
  if (error instanceof joseErrors.JWTExpired) return invalidToken('expired', { claim: 'exp', cause: error });
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const reason: TokenInvalidReason =
      error.claim === 'nbf' && error.reason === 'check_failed' ? 'not-yet-valid' : error.reason === 'missing' ? 'claim-missing' : 'claim-invalid';
    return invalidToken(reason, { claim: error.claim, cause: error });
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return invalidToken('alg-not-allowed', { cause: error });
  return invalidToken('malformed', { cause: error });
}
