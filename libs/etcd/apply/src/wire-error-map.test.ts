import { describe, expect, it } from 'vitest';
import { AUTH_ERROR_CODES, AuthError } from '@ward/auth/permissions';
import { KV_ERROR_CODES, KVCompactedError } from '@ward/etcd/kv-store';
import { GrpcStatus, WIRE_ERROR_NAMES } from '@ward/etcd/wire-errors';
import { AssertionFailure } from '@ward/shared/errors';
import { APPLY_ERROR_CODES, ApplyError } from './errors';
import { WIRE_ERROR_TABLES, toWireError } from './wire-error-map';

describe('domain error → etcd wire error table', () => {
  it('maps every auth, key-space and apply code to a catalogue entry', () => {
    expect(Object.keys(WIRE_ERROR_TABLES.auth).sort()).toEqual([...AUTH_ERROR_CODES].sort());
    expect(Object.keys(WIRE_ERROR_TABLES.kv).sort()).toEqual([...KV_ERROR_CODES].sort());
    expect(Object.keys(WIRE_ERROR_TABLES.apply).sort()).toEqual([...APPLY_ERROR_CODES].sort());
    for (const table of Object.values(WIRE_ERROR_TABLES)) {
      for (const name of Object.values(table)) expect(WIRE_ERROR_NAMES).toContain(name);
    }
  });

  it('maps each auth error to the etcd error of the same meaning, with etcd’s code and text', () => {
    const denied = toWireError(new AuthError('ERR_AUTH_PERMISSION_DENIED'));
    expect([denied.grpcCode, denied.message]).toEqual([GrpcStatus.PERMISSION_DENIED, 'etcdserver: permission denied']);
    const old = toWireError(new AuthError('ERR_AUTH_OLD_REVISION'));
    expect([old.grpcCode, old.message]).toEqual([GrpcStatus.INVALID_ARGUMENT, 'etcdserver: revision of auth store is old']);
    const noPassword = toWireError(new AuthError('ERR_AUTH_NO_PASSWORD_USER'));
    expect([noPassword.grpcCode, noPassword.message]).toEqual([GrpcStatus.UNKNOWN, 'auth: authentication failed, password was given for no password user']);
    const compacted = toWireError(new KVCompactedError(1, 5));
    expect(compacted.wireName).toBe('Compacted');
    expect(toWireError(new ApplyError('ERR_APPLY_LEASE_EXIST', 'x')).message).toBe('etcdserver: lease already exists');
  });

  it('answers a name over the limit as a clear InvalidArgument, not as a full database', () => {
    const user = toWireError(new AuthError('ERR_AUTH_USER_NAME_TOO_LONG'));
    expect([user.grpcCode, user.message]).toEqual([GrpcStatus.INVALID_ARGUMENT, 'etcdserver: user name is too long']);
    const role = toWireError(new AuthError('ERR_AUTH_ROLE_NAME_TOO_LONG'));
    expect([role.grpcCode, role.message]).toEqual([GrpcStatus.INVALID_ARGUMENT, 'etcdserver: role name is too long']);
  });

  it('rethrows what is not an expected domain failure (a bug must stop the replica)', () => {
    expect(() => toWireError(new TypeError('bug'))).toThrow(TypeError);
    expect(() => toWireError(new AssertionFailure('broken'))).toThrow(AssertionFailure);
  });
});

describe('apply error catalogue', () => {
  it('README documents every apply code and no other', async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const documented = new Set([...readme.matchAll(/`(ERR_APPLY_[A-Z_]+)`/g)].map((m) => m[1]));
    expect(documented).toEqual(new Set(APPLY_ERROR_CODES));
  });
});
