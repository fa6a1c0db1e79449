// Every way a presented token must be refused, one test each. Forged tokens are built by hand
// with node:crypto (not with the code under test).
import { createHmac, createPrivateKey, generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { JwtTokenProvider, TokenError, type TokenInvalidReason } from './index';
import { b64json, testKeyPem, testPolicy } from './testing';

const NOW_MS = 1_700_000_000_000;
const NOW_S = NOW_MS / 1000;
const RSA_PEM = testKeyPem('rsa-2048.pem');
const RSA_PUB_PEM = testKeyPem('rsa-2048.pub.pem');

/** A compact JWS signed (RSASSA-PKCS1-v1_5 or HMAC) by node:crypto. */
function forge(header: Record<string, unknown>, payload: unknown, key: { rsaPem?: string; hmac?: Uint8Array }): string {
  const input = `${b64json(header)}.${typeof payload === 'string' ? Buffer.from(payload).toString('base64url') : b64json(payload)}`;
  const alg = String(header['alg']);
  const bits = alg.slice(2);
  let signature: Buffer;
  if (key.hmac !== undefined) signature = createHmac(`sha${bits}`, key.hmac).update(input).digest();
  else signature = nodeSign(`sha${bits}`, Buffer.from(input), createPrivateKey(key.rsaPem!));
  return `${input}.${signature.toString('base64url')}`;
}

const claims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ exp: NOW_S + 300, revision: 4, username: 'alice', ...overrides });
const RS256 = { alg: 'RS256', typ: 'JWT' };

let clock: ManualClock;
let rsProvider: JwtTokenProvider;

beforeAll(async () => {
  clock = new ManualClock(NOW_MS);
  rsProvider = await JwtTokenProvider.create({
    primary: { signMethod: 'RS256', privateKeyPem: RSA_PEM },
    policy: testPolicy(clock, { clockToleranceSeconds: 5, maxLifetimeSeconds: 3600, maxTokenLengthChars: 2048 }),
  });
});

async function reasonOf(provider: JwtTokenProvider, token: unknown): Promise<TokenInvalidReason | undefined> {
  try {
    await provider.verify(token as string);
  } catch (error) {
    if (error instanceof TokenError && error.code === 'ERR_AUTH_TOKEN_INVALID') {
      expect(error.message).toBe('auth: invalid auth token');
      if (typeof token === 'string' && token.length > 20) expect(error.message).not.toContain(token.slice(-20));
      return error.reason;
    }
    throw error;
  }
  return undefined;
}

describe('a correctly signed token passes (the baseline every rejection differs from)', () => {
  it('is accepted', async () => {
    clock.advance(0);
    const identity = await rsProvider.verify(forge(RS256, claims(), { rsaPem: RSA_PEM }));
    expect(identity).toMatchObject({ username: 'alice', revision: 4, expiresAtSeconds: NOW_S + 300 });
  });
});

describe('algorithm pinning', () => {
  it('rejects alg "none" (unsecured JWT)', async () => {
    const token = `${b64json({ alg: 'none', typ: 'JWT' })}.${b64json(claims())}.`;
    expect(await reasonOf(rsProvider, token)).toBe('alg-not-allowed');
  });

  it('rejects "None" and other spellings of none', async () => {
    const token = `${b64json({ alg: 'None' })}.${b64json(claims())}.`;
    expect(await reasonOf(rsProvider, token)).toBe('alg-not-allowed');
  });

  it('rejects HS256 signed with the RS256 public key as HMAC secret (key confusion)', async () => {
    const token = forge({ alg: 'HS256', typ: 'JWT' }, claims(), { hmac: Buffer.from(RSA_PUB_PEM) });
    expect(await reasonOf(rsProvider, token)).toBe('alg-not-allowed');
  });

  it('rejects an RS256 token at an HS256-configured provider', async () => {
    const hsProvider = await JwtTokenProvider.create({ primary: { signMethod: 'HS256', secret: Buffer.alloc(32, 1) }, policy: testPolicy(clock) });
    expect(await reasonOf(hsProvider, forge(RS256, claims(), { rsaPem: RSA_PEM }))).toBe('alg-not-allowed');
  });

  it('rejects RS512 signed by the right key when RS256 is configured', async () => {
    expect(await reasonOf(rsProvider, forge({ alg: 'RS512', typ: 'JWT' }, claims(), { rsaPem: RSA_PEM }))).toBe('alg-not-allowed');
  });

  it('rejects a header without alg', async () => {
    expect(await reasonOf(rsProvider, `${b64json({ typ: 'JWT' })}.${b64json(claims())}.c2ln`)).toBe('malformed');
  });
});

describe('signatures', () => {
  it('rejects a token signed with another key of the same algorithm', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(await reasonOf(rsProvider, forge(RS256, claims(), { rsaPem: other }))).toBe('signature');
  });

  it('rejects a token whose payload was changed after signing', async () => {
    const [header, , signature] = forge(RS256, claims(), { rsaPem: RSA_PEM }).split('.');
    const tampered = `${header}.${b64json(claims({ username: 'root' }))}.${signature}`;
    expect(await reasonOf(rsProvider, tampered)).toBe('signature');
  });

  it('rejects a token with an empty signature', async () => {
    const [header, payload] = forge(RS256, claims(), { rsaPem: RSA_PEM }).split('.');
    expect(await reasonOf(rsProvider, `${header}.${payload}.`)).toBe('signature');
  });
});

describe('time', () => {
  const token = (): string => forge(RS256, claims({ exp: NOW_S + 300 }), { rsaPem: RSA_PEM });

  it('rejects an expired token (beyond the clock tolerance)', async () => {
    const t = token();
    const late = new ManualClock(NOW_MS + 306_000);
    const provider = await JwtTokenProvider.create({ primary: { signMethod: 'RS256', publicKeyPem: RSA_PUB_PEM }, policy: testPolicy(late, { clockToleranceSeconds: 5 }) });
    expect(await reasonOf(provider, t)).toBe('expired');
  });

  it('accepts a token expired by less than the clock tolerance, and the tolerance is explicit', async () => {
    const t = token();
    const late = new ManualClock(NOW_MS + 304_000);
    const tolerant = await JwtTokenProvider.create({ primary: { signMethod: 'RS256', publicKeyPem: RSA_PUB_PEM }, policy: testPolicy(late, { clockToleranceSeconds: 5 }) });
    const strict = await JwtTokenProvider.create({ primary: { signMethod: 'RS256', publicKeyPem: RSA_PUB_PEM }, policy: testPolicy(late, { clockToleranceSeconds: 0 }) });
    expect((await tolerant.verify(t)).username).toBe('alice');
    expect(await reasonOf(strict, t)).toBe('expired');
  });

  it('rejects a token that is not yet valid (nbf beyond the tolerance)', async () => {
    expect(await reasonOf(rsProvider, forge(RS256, claims({ nbf: NOW_S + 60 }), { rsaPem: RSA_PEM }))).toBe('not-yet-valid');
    expect((await rsProvider.verify(forge(RS256, claims({ nbf: NOW_S + 3 }), { rsaPem: RSA_PEM }))).username).toBe('alice');
  });

  it('rejects a token whose exp lies beyond maxLifetimeSeconds', async () => {
    expect(await reasonOf(rsProvider, forge(RS256, claims({ exp: NOW_S + 3600 + 60 }), { rsaPem: RSA_PEM }))).toBe('lifetime-too-long');
  });

  it('uses only the injected clock (a token valid by the wall clock is expired by the clock given)', async () => {
    const wallNowS = Math.floor(Date.now() / 1000);
    const t = forge(RS256, claims({ exp: wallNowS + 300 }), { rsaPem: RSA_PEM });
    const future = new ManualClock((wallNowS + 10_000) * 1000);
    const provider = await JwtTokenProvider.create({ primary: { signMethod: 'RS256', publicKeyPem: RSA_PUB_PEM }, policy: testPolicy(future) });
    expect(await reasonOf(provider, t)).toBe('expired');
  });
});

describe('claims', () => {
  const cases: [string, Record<string, unknown>, TokenInvalidReason][] = [
    ['username missing', { exp: NOW_S + 300, revision: 4 }, 'claim-missing'],
    ['revision missing', { exp: NOW_S + 300, username: 'alice' }, 'claim-missing'],
    ['exp missing (required by default)', { revision: 4, username: 'alice' }, 'claim-missing'],
    ['username a number', claims({ username: 42 }), 'claim-invalid'],
    ['username null', claims({ username: null }), 'claim-invalid'],
    ['revision a string', claims({ revision: '4' }), 'claim-invalid'],
    ['revision negative', claims({ revision: -1 }), 'claim-invalid'],
    ['revision fractional', claims({ revision: 1.5 }), 'claim-invalid'],
    ['revision beyond 2^53', claims({ revision: 2 ** 60 }), 'claim-invalid'],
    ['exp a string', claims({ exp: String(NOW_S + 300) }), 'claim-invalid'],
    ['nbf a string', claims({ nbf: 'soon' }), 'claim-invalid'],
  ];
  it.each(cases)('rejects a token with %s', async (_name, payload, reason) => {
    expect(await reasonOf(rsProvider, forge(RS256, payload, { rsaPem: RSA_PEM }))).toBe(reason);
  });

  it('accepts a token without exp only when told to (etcd compatibility)', async () => {
    const lenient = await JwtTokenProvider.create({
      primary: { signMethod: 'RS256', publicKeyPem: RSA_PUB_PEM },
      policy: testPolicy(clock, { requireExpiry: false }),
    });
    const t = forge(RS256, { revision: 4, username: 'alice' }, { rsaPem: RSA_PEM });
    expect(await lenient.verify(t)).toMatchObject({ username: 'alice', expiresAtSeconds: undefined });
  });

  it('accepts an empty username as etcd does (the request then fails with user name is empty)', async () => {
    expect((await rsProvider.verify(forge(RS256, claims({ username: '' }), { rsaPem: RSA_PEM }))).username).toBe('');
  });

  it('rejects a payload that is not a JSON object', async () => {
    expect(await reasonOf(rsProvider, forge(RS256, '[1,2,3]', { rsaPem: RSA_PEM }))).toBe('malformed');
    expect(await reasonOf(rsProvider, forge(RS256, 'not json', { rsaPem: RSA_PEM }))).toBe('malformed');
  });
});

describe('shape and size', () => {
  it('rejects a token longer than maxTokenLengthChars before parsing it', async () => {
    const padded = forge(RS256, claims({ pad: 'x'.repeat(3000) }), { rsaPem: RSA_PEM });
    expect(await reasonOf(rsProvider, padded)).toBe('too-long');
    expect(await reasonOf(rsProvider, 'a'.repeat(10_000_000))).toBe('too-long');
  });

  it.each([
    ['empty', ''],
    ['two parts', 'abc.def'],
    ['four parts', 'a.b.c.d'],
    ['non-base64url characters', 'ey+J.ey/J.sig'],
    ['a simple token', 'qLVEbLmctfpktPPy.51'],
    ['header not JSON', `${Buffer.from('nope').toString('base64url')}.${b64json(claims())}.c2ln`],
    ['header a JSON array', `${b64json([1])}.${b64json(claims())}.c2ln`],
    ['Bearer prefix left on', `Bearer ${'e'.repeat(10)}.e.e`],
  ])('rejects %s as malformed', async (_name, token) => {
    expect(await reasonOf(rsProvider, token)).toBe('malformed');
  });

  it('rejects a non-string input', async () => {
    expect(await reasonOf(rsProvider, undefined)).toBe('malformed');
    expect(await reasonOf(rsProvider, { token: 'x' })).toBe('malformed');
  });

  it('rejects a critical header extension it does not understand', async () => {
    expect(await reasonOf(rsProvider, forge({ ...RS256, crit: ['exp-x'], 'exp-x': 1 }, claims(), { rsaPem: RSA_PEM }))).toBe('malformed');
  });
});

describe('key ids', () => {
  it('rejects a kid that names no configured key', async () => {
    expect(await reasonOf(rsProvider, forge({ ...RS256, kid: 'who-knows' }, claims(), { rsaPem: RSA_PEM }))).toBe('unknown-key');
  });

  it('rejects a kid that is not a string', async () => {
    expect(await reasonOf(rsProvider, forge({ ...RS256, kid: 7 }, claims(), { rsaPem: RSA_PEM }))).toBe('malformed');
  });

  it('accepts the configured key by its kid (the RFC 7638 thumbprint by default)', async () => {
    const kid = rsProvider.keyId;
    expect(kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await rsProvider.verify(forge({ ...RS256, kid }, claims(), { rsaPem: RSA_PEM }))).keyId).toBe(kid);
  });
});

describe('headers that would bring their own key are refused, never followed', () => {
  it.each(['jku', 'x5u', 'jwk', 'x5c'])('rejects a correctly signed token carrying %s', async (name) => {
    const value = name === 'jwk' ? { kty: 'RSA', n: 'AQAB', e: 'AQAB' } : name === 'x5c' ? ['MIIB'] : 'http://127.0.0.1:1/keys';
    expect(await reasonOf(rsProvider, forge({ ...RS256, [name]: value }, claims(), { rsaPem: RSA_PEM }))).toBe('header-not-allowed');
  });

  it.each([
    ['an oversized kid', 'k'.repeat(65)],
    ['a path in the kid', '../../etc/passwd'],
    ['a quote in the kid', "x' OR '1'='1"],
    ['a NUL in the kid', 'a\u0000b'],
  ])('rejects %s without looking it up', async (_case, kid) => {
    expect(await reasonOf(rsProvider, forge({ ...RS256, kid }, claims(), { rsaPem: RSA_PEM }))).toBe('unknown-key');
  });

  it('rejects an iat in the future beyond the tolerance, accepts one within it', async () => {
    expect(await reasonOf(rsProvider, forge(RS256, claims({ iat: NOW_S + 60 }), { rsaPem: RSA_PEM }))).toBe('not-yet-valid');
    expect(await reasonOf(rsProvider, forge(RS256, claims({ iat: NOW_S + 4 }), { rsaPem: RSA_PEM }))).toBeUndefined();
  });
});

describe('issuer keys: iss, aud and the algorithm they are bound to', () => {
  it('a key with an expected issuer and audience refuses tokens for others; EdDSA/ES256 confusion finds no key', async () => {
    const { loadJwtKey, generateJwtKeyPem, signIssuedToken, verifyJwt } = await import('./index');
    const key = await loadJwtKey({ signMethod: 'EdDSA', privateKeyPem: generateJwtKeyPem('EdDSA').privateKeyPem, keyId: 'ed', expectedIssuer: 'https://issuer', expectedAudience: 'ward' });
    const policy = testPolicy(clock, { clockToleranceSeconds: 5, maxLifetimeSeconds: 3600 });
    const sign = (issuer: string, audience: string) =>
      signIssuedToken(key, { username: 'alice', revision: 4, issuer, audience, issuedAtSeconds: NOW_S, expiresAtSeconds: NOW_S + 60, jwtId: 'j' });
    expect(await verifyJwt(await sign('https://issuer', 'ward'), [key], policy)).toMatchObject({ username: 'alice' });
    for (const token of [await sign('https://elsewhere', 'ward'), await sign('https://issuer', 'other')]) {
      await expect(verifyJwt(token, [key], policy)).rejects.toMatchObject({ reason: 'claim-invalid' });
    }
    const es = generateJwtKeyPem('ES256');
    const esToken = forgeEs256({ alg: 'ES256', kid: 'ed', typ: 'JWT' }, claims({ iss: 'https://issuer', aud: 'ward' }), es.privateKeyPem);
    await expect(verifyJwt(esToken, [key], policy)).rejects.toMatchObject({ reason: 'alg-not-allowed' });
  });
});

/** An ES256 JWS made with node:crypto (IEEE P1363 signature, as JWS wants). */
function forgeEs256(header: Record<string, unknown>, payload: unknown, pem: string): string {
  const input = `${b64json(header)}.${b64json(payload)}`;
  const signature = nodeSign('sha256', Buffer.from(input), { key: createPrivateKey(pem), dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
