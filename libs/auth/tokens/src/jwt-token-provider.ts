import { SignJWT, type JSONWebKeySet } from 'jose';
import { assert } from '@ward/shared/errors';
import { TokenError } from './errors';
import { etcdClaims, type JwtIdentity } from './jwt-claims';
import { MAX_JWT_VERIFICATION_KEYS, checkJwtPolicy, type JwtPolicy } from './jwt-options';
import { verifyJwt } from './jwt-verify';
import { loadJwtKey, type JwtKey, type JwtKeyConfig } from './key-material';

export interface JwtTokenProviderOptions {
  /**
   * The key tokens are issued with (etcd's sign-method, priv-key, pub-key). With only a public key
   * the provider is verify-only: it accepts tokens and refuses to issue them (etcd's ErrVerifyOnly).
   */
  readonly primary: JwtKeyConfig;
  /** Further keys accepted for verification only: the previous signing key during a rotation, external issuers. */
  readonly verificationKeys?: readonly JwtKeyConfig[];
  readonly policy: JwtPolicy;
}

/**
 * etcd's JWT token provider on jose: issues `{exp, revision, username}` with header
 * `{alg[, kid], typ: "JWT"}` and verifies strictly (see verifyJwt). Stateless: password changes
 * and deletions do not revoke a JWT; the auth revision in it goes stale instead (etcd semantics).
 */
export class JwtTokenProvider {
  private constructor(
    private readonly keys: readonly JwtKey[],
    readonly policy: JwtPolicy,
  ) {
    assert(keys.length >= 1, 'a provider holds at least its primary key');
  }

  /** Loads and checks every key (startup-time errors: KEY_MISSING, KEY_MISMATCH, KEY_INVALID, METHOD_INVALID, OPTIONS_INVALID). */
  static async create(options: JwtTokenProviderOptions): Promise<JwtTokenProvider> {
    const policy = checkJwtPolicy(options.policy);
    const configs = [options.primary, ...(options.verificationKeys ?? [])];
    if (configs.length > MAX_JWT_VERIFICATION_KEYS) {
      throw new TokenError('ERR_AUTH_TOKEN_OPTIONS_INVALID', { detail: `at most ${MAX_JWT_VERIFICATION_KEYS} keys` });
    }
    const keys: JwtKey[] = [];
    for (const config of configs) keys.push(await loadJwtKey(config));
    const keyIds = keys.map((key) => key.keyId).filter((id) => id !== undefined);
    if (new Set(keyIds).size !== keyIds.length) throw new TokenError('ERR_AUTH_TOKEN_OPTIONS_INVALID', { detail: 'duplicate key id' });
    return new JwtTokenProvider(keys, policy);
  }

  /** The configured sign method of the primary key. */
  get signMethod(): string {
    return this.keys[0]!.alg;
  }

  /** True when the primary key has no private part (etcd's verify-only mode). */
  get verifyOnly(): boolean {
    return this.keys[0]!.signingKey === undefined;
  }

  /** `kid` of the primary key (undefined for HMAC keys without a configured id). */
  get keyId(): string | undefined {
    return this.keys[0]!.keyId;
  }

  /**
   * A token for `username` at auth `revision`, expiring ttl from now.
   * @throws TokenError ERR_AUTH_TOKEN_VERIFY_ONLY without a private key.
   */
  async sign(input: { readonly username: string; readonly revision: number }): Promise<string> {
    const key = this.keys[0]!;
    if (key.signingKey === undefined) throw new TokenError('ERR_AUTH_TOKEN_VERIFY_ONLY');
    if (!Number.isSafeInteger(input.revision) || input.revision < 0) throw new TypeError('sign: revision must be a non-negative safe integer');
    const expiresAtSeconds = Math.floor((this.policy.clock.nowMs() + this.policy.ttlMs) / 1000);
    const header = this.policy.includeKeyIdHeader && key.keyId !== undefined ? { alg: key.alg, kid: key.keyId, typ: 'JWT' } : { alg: key.alg, typ: 'JWT' };
    return new SignJWT(etcdClaims(input.username, input.revision, expiresAtSeconds)).setProtectedHeader(header).sign(key.signingKey);
  }

  /** The identity a token carries. @throws TokenError ERR_AUTH_TOKEN_INVALID with a `reason`. */
  verify(token: string): Promise<JwtIdentity> {
    return verifyJwt(token, this.keys, this.policy);
  }

  /** The public keys (asymmetric ones; never HMAC secrets) as a JWK Set, primary first. */
  jwks(): JSONWebKeySet {
    const keys = this.keys.flatMap((key) => (key.publicJwk === undefined ? [] : [{ ...key.publicJwk }]));
    for (const jwk of keys) assert(!('d' in jwk) && !('k' in jwk), 'JWKS holds public keys only');
    return { keys };
  }
}
