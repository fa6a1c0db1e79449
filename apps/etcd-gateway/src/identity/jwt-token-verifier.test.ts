// JWT refusals at the gateway: every forged, expired or confused token is `invalid auth token`.
import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { JwtTokenProvider } from '@ward/auth/tokens';
import { ManualClock } from '@ward/shared/clock';
import { isWireError } from '@ward/etcd/wire-errors';
import { JwtTokenIssuer } from '../authenticate/token-issuer';
import { IdentityResolver } from './identity-resolver';
import { JwtTokenVerifier } from './jwt-token-verifier';

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function rs256(privateKeyPem: string, header: object, payload: object): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKeyPem).toString('base64url')}`;
}

function hs256(secret: string | Buffer, header: object, payload: object): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const clock = new ManualClock(1_700_000_000_000);
let keys: { privateKeyPem: string; publicKeyPem: string };
let otherPrivatePem: string;
let provider: JwtTokenProvider;
let resolver: IdentityResolver;

const nowSeconds = (): number => Math.floor(clock.nowMs() / 1000);

beforeAll(async () => {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  keys = {
    privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
  otherPrivatePem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  provider = await JwtTokenProvider.create({
    primary: { signMethod: 'RS256', privateKeyPem: keys.privateKeyPem },
    policy: { ttlMs: 300_000, clockToleranceSeconds: 0, maxTokenLengthChars: 8192, requireExpiry: true, maxLifetimeSeconds: 86_400, includeKeyIdHeader: false, clock },
  });
  // Auth is enabled: an invalid token must fail, not be ignored.
  resolver = new IdentityResolver(new JwtTokenVerifier(provider), { authEnabled: async () => true });
});

async function refusal(token: string): Promise<unknown> {
  return resolver.identify({ token }).then(
    () => 'accepted',
    (error: unknown) => error,
  );
}

describe('JWT tokens at the gateway', () => {
  it('accepts a token the provider issued, with etcd claims as the identity', async () => {
    const token = await provider.sign({ username: 'alice', revision: 7 });
    expect(await resolver.identify({ token })).toMatchObject({ username: 'alice', authRevision: 7 });
    expect(await resolver.identify({ token: `Bearer ${token}`.slice('Bearer '.length) })).toMatchObject({ username: 'alice' });
  });

  it('accepts an externally minted token with the same key (etcd TestAuthJWTOnly shape)', async () => {
    const token = rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 'root', revision: 2, exp: nowSeconds() + 60 });
    expect(await resolver.identify({ token })).toMatchObject({ username: 'root', authRevision: 2 });
  });

  it.each([
    ['forged payload (signature of another payload)', () => {
      const good = rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 'bob', revision: 1, exp: nowSeconds() + 60 });
      const [header, , signature] = good.split('.');
      return `${header}.${b64({ username: 'root', revision: 1, exp: nowSeconds() + 60 })}.${signature}`;
    }],
    ['signed with another RSA key', () => rs256(otherPrivatePem, { alg: 'RS256', typ: 'JWT' }, { username: 'root', revision: 1, exp: nowSeconds() + 60 })],
    ['alg none, empty signature', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ username: 'root', revision: 1, exp: nowSeconds() + 60 })}.`],
    ['HS256 keyed with the RSA public key (key confusion)', () => hs256(keys.publicKeyPem, { alg: 'HS256', typ: 'JWT' }, { username: 'root', revision: 1, exp: nowSeconds() + 60 })],
    ['RS384 header on an RS256 key (alg switching)', () => rs256(keys.privateKeyPem, { alg: 'RS384', typ: 'JWT' }, { username: 'root', revision: 1, exp: nowSeconds() + 60 })],
    ['expired', () => rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 'root', revision: 1, exp: nowSeconds() - 1 })],
    ['without exp (ward requires it by default)', () => rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 'root', revision: 1 })],
    ['username not a string', () => rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 1, revision: 1, exp: nowSeconds() + 60 })],
    ['revision not a number', () => rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 'root', revision: '1', exp: nowSeconds() + 60 })],
    ['garbage', () => 'not.a.jwt'],
    ['empty', () => ''],
  ])('refuses %s with `invalid auth token`', async (_name, make) => {
    const error = await refusal(make());
    expect(isWireError(error, 'InvalidAuthToken')).toBe(true);
    expect((error as { grpcCode: number }).grpcCode).toBe(16);
  });

  it('a token the provider issued expires with the clock (exp is absolute)', async () => {
    const token = await provider.sign({ username: 'alice', revision: 7 });
    clock.advance(301_000);
    expect(isWireError(await refusal(token), 'InvalidAuthToken')).toBe(true);
  });

  it('verify-only mode: accepts tokens, refuses to issue with etcd ErrVerifyOnly (Unknown)', async () => {
    const verifyOnly = await JwtTokenProvider.create({
      primary: { signMethod: 'RS256', publicKeyPem: keys.publicKeyPem },
      policy: { ttlMs: 300_000, clockToleranceSeconds: 0, maxTokenLengthChars: 8192, requireExpiry: true, maxLifetimeSeconds: 86_400, includeKeyIdHeader: false, clock },
    });
    const minted = rs256(keys.privateKeyPem, { alg: 'RS256', typ: 'JWT' }, { username: 'u', revision: 4, exp: nowSeconds() + 60 });
    expect(await new JwtTokenVerifier(verifyOnly).verify(minted)).toMatchObject({ username: 'u', authRevision: 4 });
    const error = await new JwtTokenIssuer(verifyOnly).issue('u', 4).catch((e: unknown) => e);
    expect(isWireError(error, 'VerifyOnly')).toBe(true);
    expect((error as Error).message).toBe('auth: token signing attempted with verify-only key');
  });
});
