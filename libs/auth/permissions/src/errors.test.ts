import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUTH_ERROR_CODES, AuthError, isAuthError } from './errors';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

describe('auth error catalogue', () => {
  it('documents every code and documents no code that does not exist', () => {
    const documented = new Set([...readme.matchAll(/`(ERR_AUTH_[A-Z_]+)`/g)].map((m) => m[1]));
    expect(documented).toEqual(new Set(AUTH_ERROR_CODES));
  });

  it('carries context as fields, never in the message', () => {
    const error = new AuthError('ERR_AUTH_ROLE_NOT_FOUND', { user: 'alice', role: 'secret-role' });
    expect(error.role).toBe('secret-role');
    expect(error.message).not.toContain('secret-role');
    expect(isAuthError(error, 'ERR_AUTH_ROLE_NOT_FOUND')).toBe(true);
    expect(isAuthError(error, 'ERR_AUTH_USER_NOT_FOUND')).toBe(false);
  });
});
