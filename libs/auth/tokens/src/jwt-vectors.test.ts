// Conformance vectors: tokens minted by a real etcd 3.4.23 (testdata/etcd-3.4.23, see
// PROVENANCE.md) must verify, and for the deterministic methods (HMAC, RSASSA-PKCS1-v1_5) ward
// must mint byte-identical tokens from the same inputs. Randomised methods (PS*, ES*) and EdDSA
// are checked against node:crypto, independently of jose.
import { createPublicKey, verify as nodeVerify, sign as nodeSign, createPrivateKey, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { JwtTokenProvider, jwtKeyConfigFromOption, parseAuthTokenOption } from './index';
import { etcdVectors, headerOf, payloadOf, readTestKeyFile, testKeyPath, testKeyPem, testPolicy } from './testing';

const { username, tokens } = etcdVectors();

async function providerFor(vector: (typeof tokens)[number], clock: ManualClock): Promise<JwtTokenProvider> {
  const flag = [
    'jwt',
    `sign-method=${vector.signMethod}`,
    `priv-key=${testKeyPath(vector.privateKeyFile)}`,
    ...(vector.publicKeyFile === null ? [] : [`pub-key=${testKeyPath(vector.publicKeyFile)}`]),
    'ttl=5m',
  ].join(',');
  const option = parseAuthTokenOption(flag);
  if (option.type !== 'jwt') throw new Error('expected a jwt option');
  const primary = await jwtKeyConfigFromOption(option, readTestKeyFile);
  return JwtTokenProvider.create({ primary, policy: testPolicy(clock, { ttlMs: option.ttlMs }) });
}

describe('tokens minted by etcd 3.4.23', () => {
  it('cover all twelve sign methods etcd 3.4 knows', () => {
    expect(tokens.map((t) => t.signMethod).sort()).toEqual(
      ['ES256', 'ES384', 'ES512', 'HS256', 'HS384', 'HS512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512'].sort(),
    );
  });

  it.each(tokens)('$signMethod: verifies to the user and auth revision etcd put in it', async (vector) => {
    const exp = payloadOf(vector.token)['exp'] as number;
    const clock = new ManualClock((exp - 60) * 1000);
    const provider = await providerFor(vector, clock);
    const identity = await provider.verify(vector.token);
    expect(identity).toEqual({ username, revision: payloadOf(vector.token)['revision'], expiresAtSeconds: exp, keyId: provider.keyId });
    expect(headerOf(vector.token)).toEqual({ alg: vector.signMethod, typ: 'JWT' });
  });

  it.each(tokens.filter((t) => /^(HS|RS)/.test(t.signMethod)))('$signMethod: ward mints the byte-identical token', async (vector) => {
    const claims = payloadOf(vector.token);
    const clock = new ManualClock((claims['exp'] as number) * 1000 - 300_000);
    const provider = await providerFor(vector, clock);
    expect(await provider.sign({ username, revision: claims['revision'] as number })).toBe(vector.token);
  });

  it.each(tokens.filter((t) => /^(PS|ES)/.test(t.signMethod)))('$signMethod: ward’s token verifies with node:crypto', async (vector) => {
    const clock = new ManualClock(1_800_000_000_000);
    const provider = await providerFor(vector, clock);
    const token = await provider.sign({ username: 'bob', revision: 9 });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const bits = Number(vector.signMethod.slice(2));
    const publicKey = createPublicKey(testKeyPem(vector.privateKeyFile));
    const ok = nodeVerify(
      `sha${bits}`,
      Buffer.from(`${header}.${payload}`),
      vector.signMethod.startsWith('PS')
        ? { key: publicKey, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: bits / 8 }
        : { key: publicKey, dsaEncoding: 'ieee-p1363' },
      Buffer.from(signature, 'base64url'),
    );
    expect(ok).toBe(true);
    expect(payloadOf(token)).toEqual({ exp: 1_800_000_300, revision: 9, username: 'bob' });
    expect(Object.keys(payloadOf(token))).toEqual(['exp', 'revision', 'username']);
  });
});

describe('EdDSA (etcd 3.6+) and HMAC computed independently', () => {
  it('EdDSA: the same bytes node:crypto signs (Ed25519 is deterministic)', async () => {
    const clock = new ManualClock(1_700_000_000_500);
    const provider = await JwtTokenProvider.create({
      primary: { signMethod: 'EdDSA', privateKeyPem: testKeyPem('ed25519.pem') },
      policy: testPolicy(clock),
    });
    const token = await provider.sign({ username: 'alice', revision: 3 });
    const signingInput = `${Buffer.from('{"alg":"EdDSA","typ":"JWT"}').toString('base64url')}.${Buffer.from(
      '{"exp":1700000300,"revision":3,"username":"alice"}',
    ).toString('base64url')}`;
    const expected = nodeSign(null, Buffer.from(signingInput), createPrivateKey(testKeyPem('ed25519.pem'))).toString('base64url');
    expect(token).toBe(`${signingInput}.${expected}`);
    expect((await provider.verify(token)).username).toBe('alice');
  });

  it('HS256 with a kid header: the same bytes a hand-rolled HMAC gives', async () => {
    const secret = Buffer.alloc(32, 7);
    const clock = new ManualClock(1_000_000_000_000);
    const provider = await JwtTokenProvider.create({
      primary: { signMethod: 'HS256', secret, keyId: 'hs-1' },
      policy: testPolicy(clock, { includeKeyIdHeader: true }),
    });
    const signingInput = `${Buffer.from('{"alg":"HS256","kid":"hs-1","typ":"JWT"}').toString('base64url')}.${Buffer.from(
      '{"exp":1000000300,"revision":0,"username":"root"}',
    ).toString('base64url')}`;
    const mac = createHmac('sha256', secret).update(signingInput).digest('base64url');
    expect(await provider.sign({ username: 'root', revision: 0 })).toBe(`${signingInput}.${mac}`);
  });
});
