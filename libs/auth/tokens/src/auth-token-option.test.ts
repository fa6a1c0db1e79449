import { describe, expect, it } from 'vitest';
import { TokenError, jwtKeyConfigFromOption, parseAuthTokenOption, parseGoDurationMs, type TokenErrorCode } from './index';

function codeOf(flag: string): TokenErrorCode | undefined {
  try {
    parseAuthTokenOption(flag);
  } catch (error) {
    if (error instanceof TokenError) return error.code;
    throw error;
  }
  return undefined;
}

describe('parseAuthTokenOption (etcd --auth-token)', () => {
  it("parses the option string etcd's own integration tests use", () => {
    expect(parseAuthTokenOption('jwt,pub-key=/k/pub.pem,priv-key=/k/priv.pem,sign-method=RS256,ttl=2s')).toEqual({
      type: 'jwt',
      signMethod: 'RS256',
      privateKeyPath: '/k/priv.pem',
      publicKeyPath: '/k/pub.pem',
      ttlMs: 2000,
      unknownOptions: [],
    });
  });

  it('defaults the JWT ttl to 5 minutes and lists unknown options for a warning', () => {
    const option = parseAuthTokenOption('jwt,sign-method=HS256,priv-key=/s,colour=blue');
    expect(option).toMatchObject({ type: 'jwt', ttlMs: 300_000, publicKeyPath: undefined, unknownOptions: ['colour'] });
  });

  it('knows simple and the empty (nop) type', () => {
    expect(parseAuthTokenOption('simple')).toEqual({ type: 'simple', unknownOptions: [] });
    expect(parseAuthTokenOption('')).toEqual({ type: 'none', unknownOptions: [] });
  });

  it.each<[string, string, TokenErrorCode]>([
    ['an unknown type', 'oauth', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['an option without =', 'jwt,sign-method', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['a value containing =', 'jwt,sign-method=RS256,priv-key=/a=b', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['a duplicate option', 'jwt,sign-method=RS256,sign-method=ES256', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['a missing sign-method', 'jwt,priv-key=/k', 'ERR_AUTH_TOKEN_METHOD_INVALID'],
    ['an unknown sign-method', 'jwt,sign-method=HS1', 'ERR_AUTH_TOKEN_METHOD_INVALID'],
    ['an unparsable ttl', 'jwt,sign-method=RS256,ttl=5 minutes', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['a zero ttl', 'jwt,sign-method=RS256,ttl=0s', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['a negative ttl', 'jwt,sign-method=RS256,ttl=-5m', 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
    ['an oversized flag', `jwt,sign-method=RS256,priv-key=${'x'.repeat(5000)}`, 'ERR_AUTH_TOKEN_OPTIONS_INVALID'],
  ])('refuses %s', (_name, flag, code) => {
    expect(codeOf(flag)).toBe(code);
  });

  it('builds the key configuration from files: raw priv-key bytes are the HMAC secret', async () => {
    const files = new Map([
      ['/secret', Uint8Array.of(0, 1, 2, 255)],
      ['/priv.pem', new TextEncoder().encode('PRIVATE PEM')],
      ['/pub.pem', new TextEncoder().encode('PUBLIC PEM')],
    ]);
    const read = async (path: string): Promise<Uint8Array> => files.get(path)!;
    const hs = parseAuthTokenOption('jwt,sign-method=HS256,priv-key=/secret,pub-key=/pub.pem');
    const rs = parseAuthTokenOption('jwt,sign-method=RS256,priv-key=/priv.pem,pub-key=/pub.pem');
    if (hs.type !== 'jwt' || rs.type !== 'jwt') throw new Error('expected jwt options');
    expect(await jwtKeyConfigFromOption(hs, read)).toEqual({ signMethod: 'HS256', secret: Uint8Array.of(0, 1, 2, 255) });
    expect(await jwtKeyConfigFromOption(rs, read)).toEqual({ signMethod: 'RS256', privateKeyPem: 'PRIVATE PEM', publicKeyPem: 'PUBLIC PEM' });
  });
});

describe('parseGoDurationMs', () => {
  it.each<[string, number]>([
    ['5m', 300_000],
    ['2s', 2000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['300ms', 300],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['1500μs', 1.5],
    ['2000000ns', 2],
    ['0', 0],
    ['-1s', -1000],
    ['+1s', 1000],
    ['.5s', 500],
    ['1.s', 1000],
  ])('%s = %s ms', (text, ms) => {
    expect(parseGoDurationMs(text)).toBeCloseTo(ms, 9);
  });

  it.each(['', '5', 's', '1d', '1 s', '1s ', '--1s', '.s', '1s2', 'x'.repeat(100), '1S'])('refuses %j', (text) => {
    expect(parseGoDurationMs(text)).toBeUndefined();
  });
});
