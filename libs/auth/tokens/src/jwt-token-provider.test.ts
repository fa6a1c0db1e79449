import { createHash, generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { JwtTokenProvider, TokenError, type JwtKeyConfig } from './index';
import { headerOf, payloadOf, testKeyPem, testPolicy } from './testing';

const NOW_MS = 1_700_000_000_000;

function freshEcKey(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

async function errorOf(run: () => Promise<unknown>): Promise<TokenError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof TokenError) return error;
    throw error;
  }
  throw new Error('expected a TokenError');
}

describe('issuing', () => {
  it('issues etcd claims with exp = now + ttl and the configured alg', async () => {
    const clock = new ManualClock(NOW_MS + 999);
    const provider = await JwtTokenProvider.create({
      primary: { signMethod: 'ES256', privateKeyPem: testKeyPem('ec-P-256.pem') },
      policy: testPolicy(clock, { ttlMs: 120_000 }),
    });
    const token = await provider.sign({ username: 'alice', revision: 12 });
    expect(payloadOf(token)).toEqual({ exp: NOW_MS / 1000 + 120, revision: 12, username: 'alice' });
    expect(headerOf(token)).toEqual({ alg: 'ES256', typ: 'JWT' });
    expect(provider.signMethod).toBe('ES256');
    expect(provider.verifyOnly).toBe(false);
    expect(await provider.verify(token)).toMatchObject({ username: 'alice', revision: 12 });
  });

  it('refuses a bad revision (caller misuse)', async () => {
    const provider = await JwtTokenProvider.create({ primary: { signMethod: 'HS256', secret: Buffer.alloc(32, 3) }, policy: testPolicy(new ManualClock(NOW_MS)) });
    await expect(provider.sign({ username: 'a', revision: -1 })).rejects.toThrow(TypeError);
    await expect(provider.sign({ username: 'a', revision: 1.5 })).rejects.toThrow(TypeError);
  });
});

describe('verify-only mode (only a public key)', () => {
  it('accepts externally minted tokens and refuses to sign with etcd’s text', async () => {
    const clock = new ManualClock(NOW_MS);
    const external = await JwtTokenProvider.create({ primary: { signMethod: 'RS256', privateKeyPem: testKeyPem('rsa-2048.pem') }, policy: testPolicy(clock) });
    const verifier = await JwtTokenProvider.create({ primary: { signMethod: 'RS256', publicKeyPem: testKeyPem('rsa-2048.pub.pem') }, policy: testPolicy(clock) });
    expect(verifier.verifyOnly).toBe(true);
    expect(await verifier.verify(await external.sign({ username: 'ci-bot', revision: 7 }))).toMatchObject({ username: 'ci-bot', revision: 7 });
    const error = await errorOf(() => verifier.sign({ username: 'ci-bot', revision: 7 }));
    expect(error.code).toBe('ERR_AUTH_TOKEN_VERIFY_ONLY');
    expect(error.message).toBe('auth: token signing attempted with verify-only key');
  });

  it('accepts a certificate as the public key, as etcd does', async () => {
    const clock = new ManualClock(NOW_MS);
    const signer = await JwtTokenProvider.create({ primary: { signMethod: 'PS256', privateKeyPem: testKeyPem('rsa-2048.pem') }, policy: testPolicy(clock) });
    const verifier = await JwtTokenProvider.create({ primary: { signMethod: 'PS256', publicKeyPem: testKeyPem('rsa-2048.crt.pem') }, policy: testPolicy(clock) });
    expect((await verifier.verify(await signer.sign({ username: 'u', revision: 1 }))).username).toBe('u');
  });

  it('has no verify-only HMAC: a public key alone is not a secret (etcd: missing key data)', async () => {
    const error = await errorOf(() =>
      JwtTokenProvider.create({ primary: { signMethod: 'HS256', publicKeyPem: testKeyPem('rsa-2048.pub.pem') }, policy: testPolicy(new ManualClock(0)) }),
    );
    expect(error.code).toBe('ERR_AUTH_TOKEN_KEY_MISSING');
  });
});

describe('key rotation (kid)', () => {
  it('keeps accepting the previous key’s tokens while issuing with the new one', async () => {
    const clock = new ManualClock(NOW_MS);
    const oldKey = freshEcKey();
    const newKey = freshEcKey();
    const policy = testPolicy(clock, { includeKeyIdHeader: true });
    const before = await JwtTokenProvider.create({ primary: { signMethod: 'ES256', ...oldKey, keyId: 'k-2024' }, policy });
    const oldToken = await before.sign({ username: 'alice', revision: 3 });
    expect(headerOf(oldToken)['kid']).toBe('k-2024');

    const after = await JwtTokenProvider.create({
      primary: { signMethod: 'ES256', privateKeyPem: newKey.privateKeyPem, keyId: 'k-2025' },
      verificationKeys: [{ signMethod: 'ES256', publicKeyPem: oldKey.publicKeyPem, keyId: 'k-2024' }],
      policy,
    });
    const newToken = await after.sign({ username: 'alice', revision: 3 });
    expect(headerOf(newToken)['kid']).toBe('k-2025');
    expect(await after.verify(oldToken)).toMatchObject({ username: 'alice', keyId: 'k-2024' });
    expect(await after.verify(newToken)).toMatchObject({ username: 'alice', keyId: 'k-2025' });

    const retired = await JwtTokenProvider.create({ primary: { signMethod: 'ES256', privateKeyPem: newKey.privateKeyPem, keyId: 'k-2025' }, policy });
    expect((await errorOf(() => retired.verify(oldToken))).reason).toBe('unknown-key');
  });

  it('tries every key of the token’s alg when the token has no kid (etcd-minted tokens have none)', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = freshEcKey();
    const b = freshEcKey();
    const signerB = await JwtTokenProvider.create({ primary: { signMethod: 'ES256', privateKeyPem: b.privateKeyPem }, policy: testPolicy(clock) });
    const token = await signerB.sign({ username: 'bob', revision: 1 });
    expect(headerOf(token)['kid']).toBeUndefined();
    const both = await JwtTokenProvider.create({
      primary: { signMethod: 'ES256', privateKeyPem: a.privateKeyPem },
      verificationKeys: [{ signMethod: 'ES256', publicKeyPem: b.publicKeyPem }],
      policy: testPolicy(clock),
    });
    expect((await both.verify(token)).username).toBe('bob');
    const onlyA = await JwtTokenProvider.create({ primary: { signMethod: 'ES256', privateKeyPem: a.privateKeyPem }, policy: testPolicy(clock) });
    expect((await errorOf(() => onlyA.verify(token))).reason).toBe('signature');
  });

  it('pins each key to its own alg: an RS256 key listed for rotation does not accept RS512', async () => {
    const clock = new ManualClock(NOW_MS);
    const rs512 = await JwtTokenProvider.create({ primary: { signMethod: 'RS512', privateKeyPem: testKeyPem('rsa-2048.pem') }, policy: testPolicy(clock) });
    const mixed = await JwtTokenProvider.create({
      primary: { signMethod: 'ES256', privateKeyPem: testKeyPem('ec-P-256.pem') },
      verificationKeys: [{ signMethod: 'RS256', publicKeyPem: testKeyPem('rsa-2048.pub.pem') }],
      policy: testPolicy(clock),
    });
    expect((await errorOf(async () => mixed.verify(await rs512.sign({ username: 'x', revision: 1 })))).reason).toBe('alg-not-allowed');
  });

  it('refuses duplicate key ids and more than 16 keys', async () => {
    const policy = testPolicy(new ManualClock(NOW_MS));
    const key: JwtKeyConfig = { signMethod: 'ES256', publicKeyPem: testKeyPem('ec-P-256.pub.pem'), keyId: 'same' };
    expect((await errorOf(() => JwtTokenProvider.create({ primary: key, verificationKeys: [key], policy }))).code).toBe('ERR_AUTH_TOKEN_OPTIONS_INVALID');
    const many = Array.from({ length: 16 }, (_, i) => ({ ...key, keyId: `k${i}` }));
    expect((await errorOf(() => JwtTokenProvider.create({ primary: { ...key, keyId: 'p' }, verificationKeys: many, policy }))).code).toBe(
      'ERR_AUTH_TOKEN_OPTIONS_INVALID',
    );
  });
});

describe('JWKS', () => {
  it('publishes public keys only, with kid, alg and use, primary first; HMAC keys never', async () => {
    const clock = new ManualClock(NOW_MS);
    const provider = await JwtTokenProvider.create({
      primary: { signMethod: 'RS256', privateKeyPem: testKeyPem('rsa-2048.pem'), keyId: 'rsa-1' },
      verificationKeys: [
        { signMethod: 'ES384', publicKeyPem: testKeyPem('ec-P-384.pub.pem') },
        { signMethod: 'EdDSA', privateKeyPem: testKeyPem('ed25519.pem'), keyId: 'ed-1' },
        { signMethod: 'HS256', secret: Buffer.alloc(32, 9), keyId: 'hmac-1' },
      ],
      policy: testPolicy(clock),
    });
    const { keys } = provider.jwks();
    expect(keys.map((k) => [k.kid, k.alg, k.kty, k.use])).toEqual([
      ['rsa-1', 'RS256', 'RSA', 'sig'],
      [expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), 'ES384', 'EC', 'sig'],
      ['ed-1', 'EdDSA', 'OKP', 'sig'],
    ]);
    for (const jwk of keys) for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(jwk).not.toHaveProperty(secret);
  });

  it('lets an independent consumer (jose’s local JWK Set) verify issued tokens', async () => {
    const clock = new ManualClock(NOW_MS);
    const provider = await JwtTokenProvider.create({
      primary: { signMethod: 'ES512', privateKeyPem: testKeyPem('ec-P-521.pem') },
      policy: testPolicy(clock, { includeKeyIdHeader: true }),
    });
    const token = await provider.sign({ username: 'svc', revision: 2 });
    const { payload } = await jwtVerify(token, createLocalJWKSet(provider.jwks()), { currentDate: new Date(NOW_MS), algorithms: ['ES512'] });
    expect(payload['username']).toBe('svc');
  });

  it('derives the default kid as the RFC 7638 SHA-256 thumbprint', async () => {
    const provider = await JwtTokenProvider.create({ primary: { signMethod: 'ES256', publicKeyPem: testKeyPem('ec-P-256.pub.pem') }, policy: testPolicy(new ManualClock(0)) });
    const [jwk] = provider.jwks().keys;
    const canonical = JSON.stringify({ crv: jwk!.crv, kty: jwk!.kty, x: jwk!.x, y: jwk!.y });
    expect(provider.keyId).toBe(createHash('sha256').update(canonical).digest('base64url'));
  });
});
