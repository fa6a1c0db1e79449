import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { JwtTokenProvider, TokenError, type JwtKeyConfig, type JwtPolicy, type TokenErrorCode } from './index';
import { testKeyPem, testPolicy } from './testing';

async function codeOf(primary: JwtKeyConfig, policy: JwtPolicy = testPolicy(new ManualClock(0))): Promise<TokenErrorCode | undefined> {
  try {
    await JwtTokenProvider.create({ primary, policy });
  } catch (error) {
    if (error instanceof TokenError) {
      expect(error.message).not.toContain('PRIVATE KEY');
      return error.code;
    }
    throw error;
  }
  return undefined;
}

const pem = (key: { export(options: { type: 'pkcs8'; format: 'pem' }): string | Buffer }): string =>
  key.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('key loading (etcd startup errors)', () => {
  it('accepts every PEM form etcd accepts: PKCS#8, PKCS#1 RSA, SEC1 EC, SPKI, certificates', async () => {
    for (const primary of [
      { signMethod: 'RS256', privateKeyPem: testKeyPem('rsa-2048.pem') },
      { signMethod: 'RS256', privateKeyPem: testKeyPem('rsa-2048.pkcs1.pem') },
      { signMethod: 'ES256', privateKeyPem: testKeyPem('ec-P-256.sec1.pem') },
      { signMethod: 'ES256', publicKeyPem: testKeyPem('ec-P-256.pub.pem') },
      { signMethod: 'RS384', publicKeyPem: testKeyPem('rsa-2048.crt.pem') },
      { signMethod: 'RS256', privateKeyPem: testKeyPem('rsa-2048.pkcs1.pem'), publicKeyPem: testKeyPem('rsa-2048.crt.pem') },
    ]) {
      expect(await codeOf(primary)).toBeUndefined();
    }
  });

  it.each<[string, JwtKeyConfig, TokenErrorCode]>([
    ['an unknown sign method', { signMethod: 'RS1024', privateKeyPem: testKeyPem('rsa-2048.pem') }, 'ERR_AUTH_TOKEN_METHOD_INVALID'],
    ['a lower-case method name', { signMethod: 'rs256', privateKeyPem: testKeyPem('rsa-2048.pem') }, 'ERR_AUTH_TOKEN_METHOD_INVALID'],
    ['alg none as method', { signMethod: 'none' }, 'ERR_AUTH_TOKEN_METHOD_INVALID'],
    ['no key at all', { signMethod: 'RS256' }, 'ERR_AUTH_TOKEN_KEY_MISSING'],
    ['HMAC without a secret', { signMethod: 'HS512' }, 'ERR_AUTH_TOKEN_KEY_MISSING'],
    ['HMAC with an empty secret', { signMethod: 'HS256', secret: new Uint8Array(0) }, 'ERR_AUTH_TOKEN_KEY_MISSING'],
    ['an HS256 secret under 32 bytes', { signMethod: 'HS256', secret: new Uint8Array(31).fill(1) }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['an HS512 secret under 64 bytes', { signMethod: 'HS512', secret: new Uint8Array(48).fill(1) }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['an unreadable PEM', { signMethod: 'RS256', privateKeyPem: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n' }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['an EC key for RS256', { signMethod: 'RS256', privateKeyPem: testKeyPem('ec-P-256.pem') }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['a P-384 key for ES256', { signMethod: 'ES256', privateKeyPem: testKeyPem('ec-P-384.pem') }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['an RSA key for EdDSA', { signMethod: 'EdDSA', publicKeyPem: testKeyPem('rsa-2048.pub.pem') }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['a 1024-bit RSA key', { signMethod: 'RS256', privateKeyPem: pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey) }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['a P-521 private key given as the ES256 public key', { signMethod: 'ES256', publicKeyPem: testKeyPem('ec-P-521.pem') }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['an oversized PEM', { signMethod: 'RS256', privateKeyPem: 'x'.repeat(70_000) }, 'ERR_AUTH_TOKEN_KEY_INVALID'],
    ['a key id with a space', { signMethod: 'ES256', publicKeyPem: testKeyPem('ec-P-256.pub.pem'), keyId: 'a b' }, 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
  ])('refuses %s', async (_name, primary, code) => {
    expect(await codeOf(primary)).toBe(code);
  });

  it('refuses a public key that is not the private key’s (etcd ErrKeyMismatch)', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(await codeOf({ signMethod: 'ES256', privateKeyPem: testKeyPem('ec-P-256.pem'), publicKeyPem: other })).toBe('ERR_AUTH_TOKEN_KEY_MISMATCH');
  });
});

describe('policy validation (fail, never fall back)', () => {
  const primary: JwtKeyConfig = { signMethod: 'HS256', secret: new Uint8Array(32).fill(2) };
  it.each<[string, Partial<JwtPolicy>]>([
    ['ttl under a second', { ttlMs: 999 }],
    ['negative tolerance', { clockToleranceSeconds: -1 }],
    ['tolerance over 5 minutes', { clockToleranceSeconds: 301 }],
    ['a tiny max token length', { maxTokenLengthChars: 100 }],
    ['a max token length over 64 KiB', { maxTokenLengthChars: 70_000 }],
    ['max lifetime below the ttl', { ttlMs: 600_000, maxLifetimeSeconds: 300 }],
    ['max lifetime not above the tolerance', { clockToleranceSeconds: 60, maxLifetimeSeconds: 60, ttlMs: 60_000 }],
  ])('refuses %s', async (_name, overrides) => {
    expect(await codeOf(primary, testPolicy(new ManualClock(0), overrides))).toBe('ERR_AUTH_TOKEN_OPTIONS_INVALID');
  });
});
