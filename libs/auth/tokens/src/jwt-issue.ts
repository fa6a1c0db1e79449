// Tokens of a dedicated issuer: etcd's claims (username, revision, exp) — so every etcd member
// and ward gateway reads them — plus iss, aud, iat and jti, and the signing key's kid in the header.
import { SignJWT } from 'jose';
import { assert } from '@ward/shared/errors';
import { TokenError } from './errors';
import { etcdClaims } from './jwt-claims';
import type { JwtKey } from './key-material';

export interface IssuedTokenClaims {
  readonly username: string;
  readonly revision: number;
  readonly issuer: string;
  readonly audience: string;
  readonly issuedAtSeconds: number;
  readonly expiresAtSeconds: number;
  /** A unique id (random, from a strong source). */
  readonly jwtId: string;
}

/** Signs `claims` with `key`, header `{alg, kid, typ: "JWT"}`. @throws TokenError VERIFY_ONLY without a private key. */
export async function signIssuedToken(key: JwtKey, claims: IssuedTokenClaims): Promise<string> {
  if (key.signingKey === undefined) throw new TokenError('ERR_AUTH_TOKEN_VERIFY_ONLY');
  assert(key.keyId !== undefined, 'an issuer key has a kid');
  assert(Number.isSafeInteger(claims.issuedAtSeconds) && claims.issuedAtSeconds < claims.expiresAtSeconds, 'iat precedes exp');
  const payload = {
    ...etcdClaims(claims.username, claims.revision, claims.expiresAtSeconds),
    iss: claims.issuer,
    aud: claims.audience,
    iat: claims.issuedAtSeconds,
    jti: claims.jwtId,
  };
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid: key.keyId, typ: 'JWT' }).sign(key.signingKey);
}
