import { describe, expect, it } from 'vitest';
import { TOKEN_ERROR_CODES, TokenError } from './index';

describe('TokenError', () => {
  it("carries etcd's texts for the errors etcd sends or refuses to start with", () => {
    const texts = Object.fromEntries(TOKEN_ERROR_CODES.map((code) => [code, new TokenError(code).message]));
    expect(texts).toEqual({
      ERR_AUTH_TOKEN_INVALID: 'auth: invalid auth token',
      ERR_AUTH_TOKEN_VERIFY_ONLY: 'auth: token signing attempted with verify-only key',
      ERR_AUTH_TOKEN_OPTIONS_INVALID: 'auth: invalid auth options',
      ERR_AUTH_TOKEN_METHOD_INVALID: 'auth: invalid auth signature method',
      ERR_AUTH_TOKEN_KEY_MISSING: 'auth: missing key data',
      ERR_AUTH_TOKEN_KEY_MISMATCH: "auth: public and private keys don't match",
      ERR_AUTH_TOKEN_KEY_INVALID: 'auth: invalid key data',
    });
    expect(new TokenError('ERR_AUTH_TOKEN_INVALID', { reason: 'expired' }).reason).toBe('expired');
  });
});
