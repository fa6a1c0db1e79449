// Turns configured key material into verified, algorithm-bound keys. PEM parsing goes through
// node:crypto, which reads every form etcd's golang-jwt accepts (PKCS#8, PKCS#1 RSA and SEC1 EC
// private keys; SPKI and PKCS#1 RSA public keys; X.509 certificates as public keys); jose then
// imports each key bound to exactly one algorithm.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, importJWK, importPKCS8, importSPKI, type CryptoKey, type JWK } from 'jose';
import { assert } from '@ward/shared/errors';
import { TokenError } from './errors';
import { KEY_ID_PATTERN } from './key-id';
import { isJwtSignMethod, keyRequirementOf, type JwtSignMethod, type KeyRequirement } from './sign-method';

/** Largest PEM text or HMAC secret accepted (a 16384-bit RSA key in PEM is about 12 KiB). */
export const MAX_KEY_MATERIAL_BYTES = 64 * 1024;

/** One key as configured (etcd: `sign-method`, `priv-key`, `pub-key`). */
export interface JwtKeyConfig {
  readonly signMethod: string;
  /** PEM private key: PKCS#8, PKCS#1 (RSA) or SEC1 (EC). */
  readonly privateKeyPem?: string;
  /** PEM public key (SPKI or PKCS#1 RSA) or an X.509 certificate. */
  readonly publicKeyPem?: string;
  /** HMAC secret for HS*: etcd uses the raw bytes of the `priv-key` file. */
  readonly secret?: Uint8Array;
  /** `kid`; defaults to the RFC 7638 thumbprint of the public key (asymmetric keys only). */
  readonly keyId?: string;
  /** Tokens this key verifies must carry this `iss` (an external issuer's, or the token-service's). */
  readonly expectedIssuer?: string;
  /** … and list this `aud`. */
  readonly expectedAudience?: string;
}

/** A usable key: what it may do is fixed here, once. */
export interface JwtKey {
  readonly alg: JwtSignMethod;
  readonly keyId: string | undefined;
  /** Absent for a verify-only key. */
  readonly signingKey: CryptoKey | undefined;
  readonly verifyingKey: CryptoKey;
  /** The public JWK for JWKS (asymmetric keys only; never secret material). */
  readonly publicJwk: JWK | undefined;
  readonly expectedIssuer?: string;
  readonly expectedAudience?: string;
}

function keyError(code: 'ERR_AUTH_TOKEN_KEY_INVALID' | 'ERR_AUTH_TOKEN_KEY_MISSING' | 'ERR_AUTH_TOKEN_KEY_MISMATCH', detail: string, cause?: unknown): TokenError {
  return new TokenError(code, { detail, cause });
}

/** Loads and checks one configured key. */
export async function loadJwtKey(config: JwtKeyConfig): Promise<JwtKey> {
  if (!isJwtSignMethod(config.signMethod)) throw new TokenError('ERR_AUTH_TOKEN_METHOD_INVALID', { detail: 'unknown sign method' });
  if (config.keyId !== undefined && !KEY_ID_PATTERN.test(config.keyId)) {
    throw new TokenError('ERR_AUTH_TOKEN_OPTIONS_INVALID', { detail: 'keyId must match [A-Za-z0-9._-]{1,64}' });
  }
  const alg = config.signMethod;
  const requirement = keyRequirementOf(alg);
  const key = requirement.family === 'hmac' ? await loadHmacKey(alg, requirement.minSecretBytes, config) : await loadAsymmetricKey(alg, requirement, config);
  const expected = {
    ...(config.expectedIssuer === undefined ? {} : { expectedIssuer: config.expectedIssuer }),
    ...(config.expectedAudience === undefined ? {} : { expectedAudience: config.expectedAudience }),
  };
  return { ...key, ...expected };
}

async function loadHmacKey(alg: JwtSignMethod, minSecretBytes: number, config: JwtKeyConfig): Promise<JwtKey> {
  // etcd ignores pub-key for HMAC and needs the secret (priv-key file bytes).
  if (config.secret === undefined || config.secret.length === 0) throw keyError('ERR_AUTH_TOKEN_KEY_MISSING', 'HMAC methods need a secret');
  if (config.secret.length > MAX_KEY_MATERIAL_BYTES) throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', 'secret too large');
  if (config.secret.length < minSecretBytes) {
    throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${alg} needs a secret of at least ${minSecretBytes} bytes`);
  }
  const jwk: JWK = { kty: 'oct', k: Buffer.from(config.secret).toString('base64url') };
  const key = (await importJWK(jwk, alg, { extractable: false })) as CryptoKey;
  return { alg, keyId: config.keyId, signingKey: key, verifyingKey: key, publicJwk: undefined };
}

async function loadAsymmetricKey(alg: JwtSignMethod, requirement: KeyRequirement, config: JwtKeyConfig): Promise<JwtKey> {
  if (config.privateKeyPem === undefined && config.publicKeyPem === undefined) {
    throw keyError('ERR_AUTH_TOKEN_KEY_MISSING', 'neither a private nor a public key was given');
  }
  const privateKey = config.privateKeyPem === undefined ? undefined : parsePem(config.privateKeyPem, 'private');
  const givenPublicKey = config.publicKeyPem === undefined ? undefined : parsePem(config.publicKeyPem, 'public');
  const publicKey = givenPublicKey ?? createPublicKey(privateKey!);
  checkKeyFits(publicKey, requirement, alg);
  if (privateKey !== undefined && givenPublicKey !== undefined) {
    const derived = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
    if (!derived.equals(givenPublicKey.export({ type: 'spki', format: 'der' }))) {
      throw keyError('ERR_AUTH_TOKEN_KEY_MISMATCH', 'the public key is not the private key’s');
    }
  }
  const spkiPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const verifyingKey = await importSPKI(spkiPem, alg, { extractable: false });
  const signingKey =
    privateKey === undefined ? undefined : await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), alg, { extractable: false });
  const exported = publicKey.export({ format: 'jwk' }) as JWK;
  const keyId = config.keyId ?? (await calculateJwkThumbprint(exported, 'sha256'));
  const publicJwk: JWK = { ...exported, kid: keyId, alg, use: 'sig' };
  assert(publicJwk.d === undefined, 'a public JWK carries no private part');
  return { alg, keyId, signingKey, verifyingKey, publicJwk };
}

function parsePem(pem: string, kind: 'private' | 'public'): KeyObject {
  if (pem.length > MAX_KEY_MATERIAL_BYTES) throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${kind} key PEM too large`);
  try {
    const key = kind === 'private' ? createPrivateKey({ key: pem, format: 'pem' }) : createPublicKey({ key: pem, format: 'pem' });
    if (kind === 'public' && key.type !== 'public') throw new Error('not a public key');
    return key;
  } catch (error) {
    throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${kind} key PEM is unreadable`, error);
  }
}

function checkKeyFits(publicKey: KeyObject, requirement: KeyRequirement, alg: JwtSignMethod): void {
  const details = publicKey.asymmetricKeyDetails ?? {};
  const type = publicKey.asymmetricKeyType;
  switch (requirement.family) {
    case 'rsa':
      if (type !== 'rsa') throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${alg} needs an RSA key, got ${String(type)}`);
      if ((details.modulusLength ?? 0) < requirement.minModulusBits) {
        throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${alg} needs an RSA key of at least ${requirement.minModulusBits} bits`);
      }
      return;
    case 'ec':
      if (type !== 'ec' || details.namedCurve !== requirement.nodeCurve) {
        throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${alg} needs an EC key on ${requirement.nodeCurve}`);
      }
      return;
    case 'ed25519':
      if (type !== 'ed25519') throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', `${alg} needs an Ed25519 key, got ${String(type)}`);
      return;
    case 'hmac':
      assert(false, 'HMAC keys are loaded by loadHmacKey');
  }
}

/** Members of a JWK that only a private or secret key has: a published key carrying one is refused. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * A verify-only key from a published public JWK (a key directory, an issuer's JWKS). The key is
 * bound to `alg`, which must be asymmetric and fit the JWK (an RSA JWK cannot verify EdDSA);
 * its kid is `keyId`.
 */
export async function loadPublicJwk(config: {
  readonly signMethod: string;
  readonly jwk: unknown;
  readonly keyId: string;
  readonly expectedIssuer?: string;
  readonly expectedAudience?: string;
}): Promise<JwtKey> {
  if (!isJwtSignMethod(config.signMethod)) throw new TokenError('ERR_AUTH_TOKEN_METHOD_INVALID', { detail: 'unknown sign method' });
  if (!KEY_ID_PATTERN.test(config.keyId)) throw new TokenError('ERR_AUTH_TOKEN_OPTIONS_INVALID', { detail: 'keyId must match [A-Za-z0-9._-]{1,64}' });
  const alg = config.signMethod;
  const requirement = keyRequirementOf(alg);
  if (requirement.family === 'hmac') throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', 'a published key is asymmetric');
  if (typeof config.jwk !== 'object' || config.jwk === null || Array.isArray(config.jwk)) throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', 'JWK is not an object');
  const given = config.jwk as Record<string, unknown>;
  for (const name of PRIVATE_JWK_MEMBERS) if (name in given) throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', 'a published JWK carries no private part');
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: given as never, format: 'jwk' });
  } catch (error) {
    throw keyError('ERR_AUTH_TOKEN_KEY_INVALID', 'JWK is unreadable', error);
  }
  checkKeyFits(publicKey, requirement, alg);
  const verifyingKey = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), alg, { extractable: false });
  const exported = publicKey.export({ format: 'jwk' }) as JWK;
  return {
    alg,
    keyId: config.keyId,
    signingKey: undefined,
    verifyingKey,
    publicJwk: { ...exported, kid: config.keyId, alg, use: 'sig' },
    ...(config.expectedIssuer === undefined ? {} : { expectedIssuer: config.expectedIssuer }),
    ...(config.expectedAudience === undefined ? {} : { expectedAudience: config.expectedAudience }),
  };
}
