import { describe, expect, it } from 'vitest';
import { parseExternalIssuers } from './external-issuers';

const ok = { issuer: 'https://idp', audience: 'ward', algorithms: ['ES256'], jwksUrl: 'https://idp/jwks.json' };

describe('parseExternalIssuers', () => {
  it('reads a valid file', () => {
    expect(parseExternalIssuers(JSON.stringify([ok, { issuer: 'b', audience: 'ward', algorithms: ['EdDSA'], keyFile: '/k.pem', keyId: 'k1' }]))).toEqual([
      ok,
      { issuer: 'b', audience: 'ward', algorithms: ['EdDSA'], keyFile: '/k.pem', keyId: 'k1' },
    ]);
  });

  it.each([
    ['not JSON', '{'],
    ['an empty list', '[]'],
    ['a symmetric algorithm (a shared secret is no outside trust)', JSON.stringify([{ ...ok, algorithms: ['HS256'] }])],
    ['alg none', JSON.stringify([{ ...ok, algorithms: ['none'] }])],
    ['both a URL and a file', JSON.stringify([{ ...ok, keyFile: '/k.pem' }])],
    ['neither a URL nor a file', JSON.stringify([{ issuer: 'a', audience: 'ward', algorithms: ['ES256'] }])],
    ['a non-http URL', JSON.stringify([{ ...ok, jwksUrl: 'file:///etc/passwd' }])],
    ['the same issuer twice', JSON.stringify([ok, ok])],
    ['a bad key id', JSON.stringify([{ ...ok, keyId: '../x' }])],
    ['too many issuers', JSON.stringify(Array.from({ length: 9 }, (_, i) => ({ ...ok, issuer: `i${i}` })))],
  ])('refuses %s', (_case, text) => {
    expect(() => parseExternalIssuers(text)).toThrow(/GATEWAY_JWT_EXTERNAL_ISSUERS_FILE/);
  });
});
