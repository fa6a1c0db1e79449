import { describe, expect, it } from 'vitest';
import { PasswordError } from '@ward/auth/password-jobs';
import { TokenError } from '@ward/auth/tokens';
import { ApiMappingError } from '@ward/etcd/api-mapping';
import { wireError } from '@ward/etcd/wire-errors';
import { statusOf } from './error-mapping';

describe('statusOf: the one mapping to what a client sees', () => {
  it.each([
    ['an etcd wire error passes through', wireError('PermissionDenied'), 7, 'etcdserver: permission denied'],
    ['api-mapping field errors are InvalidArgument', new ApiMappingError('RangeRequest.limit', 'not a decimal integer'), 3, 'invalid RangeRequest.limit: not a decimal integer'],
    ['an invalid token', new TokenError('ERR_AUTH_TOKEN_INVALID', { reason: 'signature' }), 16, 'etcdserver: invalid auth token'],
    ['verify-only signing', new TokenError('ERR_AUTH_TOKEN_VERIFY_ONLY'), 2, 'auth: token signing attempted with verify-only key'],
    ['a password over 72 bytes', new PasswordError('ERR_AUTH_PASSWORD_TOO_LONG'), 2, 'bcrypt: password length exceeds 72 bytes'],
    ['the password tier is full', new PasswordError('ERR_AUTH_PASSWORD_TIER_BUSY', { limit: 10 }), 8, 'etcdserver: too many requests'],
    ['the password tier timed out', new PasswordError('ERR_AUTH_PASSWORD_TIER_TIMEOUT'), 14, 'etcdserver: request timed out'],
    ['the password tier failed', new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED'), 14, 'etcdserver: unhealthy cluster'],
  ])('%s', (_case, error, code, details) => {
    expect(statusOf(error)).toEqual({ code, details, unmapped: false });
  });

  it('anything else is INTERNAL with a fixed text: no path, secret or stack reaches a client', () => {
    const status = statusOf(new Error('ECONNREFUSED /var/run/secret password=hunter2'));
    expect(status).toEqual({ code: 13, details: 'internal error', unmapped: true });
    expect(statusOf(new TokenError('ERR_AUTH_TOKEN_KEY_MISSING'))).toMatchObject({ code: 13, unmapped: true });
    expect(statusOf('a string')).toMatchObject({ code: 13, unmapped: true });
  });
});
