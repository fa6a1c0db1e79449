// spec/etcd-auth.md §2.1 (per-RPC checks and their order), §2.0 (admin gate), §3.4 (the decision
// function) and the store's limits.
import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { AuthStore } from './auth-store';
import { AuthError, type AuthErrorCode } from './errors';
import { PermissionType } from './permission';

const NONE = new Uint8Array(0);

function codeOf(run: () => unknown): AuthErrorCode | 'ok' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
}

function enabledStore(): AuthStore {
  const store = new AuthStore();
  store.userAdd({ name: 'root', passwordHash: NONE, noPassword: true });
  store.userGrantRole('root', 'root');
  store.roleAdd('test-role');
  store.roleGrantPermission('test-role', { permType: PermissionType.READWRITE, key: utf8('foo'), rangeEnd: NONE });
  store.userAdd({ name: 'test-user', passwordHash: utf8('hash') });
  store.userGrantRole('test-user', 'test-role');
  store.authEnable();
  return store;
}

describe('enable and disable', () => {
  it('refuses to enable without a root user, or with a root user lacking the root role', () => {
    const store = new AuthStore();
    expect(codeOf(() => store.authEnable())).toBe('ERR_AUTH_ROOT_USER_NOT_EXIST');
    store.userAdd({ name: 'root', passwordHash: NONE });
    expect(codeOf(() => store.authEnable())).toBe('ERR_AUTH_ROOT_ROLE_NOT_EXIST');
    store.userGrantRole('root', 'root');
    expect(codeOf(() => store.authEnable())).toBe('ok');
    expect(codeOf(() => store.authEnable())).toBe('ok');
    expect(store.enabled).toBe(true);
  });

  it('applies root protections only while enabled; afterwards AuthEnable fails', () => {
    const store = enabledStore();
    expect(codeOf(() => store.userDelete('root'))).toBe('ERR_AUTH_INVALID_MGMT');
    expect(codeOf(() => store.userRevokeRole('root', 'root'))).toBe('ERR_AUTH_INVALID_MGMT');
    expect(codeOf(() => store.roleDelete('root'))).toBe('ERR_AUTH_INVALID_MGMT'); // even though no root role object exists
    store.authDisable();
    expect(codeOf(() => store.roleDelete('root'))).toBe('ERR_AUTH_ROLE_NOT_FOUND');
    expect(codeOf(() => store.userRevokeRole('root', 'root'))).toBe('ok');
    expect(codeOf(() => store.authEnable())).toBe('ERR_AUTH_ROOT_ROLE_NOT_EXIST');
    expect(codeOf(() => store.userDelete('root'))).toBe('ok');
    expect(codeOf(() => store.authEnable())).toBe('ERR_AUTH_ROOT_USER_NOT_EXIST');
  });
});

describe('users and roles (§2.1)', () => {
  it('only UserAdd/RoleAdd reject empty names; elsewhere "" is just not found', () => {
    const store = enabledStore();
    expect(codeOf(() => store.userGet(''))).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(codeOf(() => store.userDelete(''))).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(codeOf(() => store.roleGet(''))).toBe('ERR_AUTH_ROLE_NOT_FOUND');
    expect(codeOf(() => store.roleAdd('test-role'))).toBe('ERR_AUTH_ROLE_ALREADY_EXIST');
  });

  it('UserGrantRole checks the user before the role; the virtual root needs no role object', () => {
    const store = enabledStore();
    expect(codeOf(() => store.userGrantRole('nobody', 'no-role'))).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(codeOf(() => store.userGrantRole('test-user', 'no-role'))).toBe('ERR_AUTH_ROLE_NOT_FOUND');
    expect(codeOf(() => store.userGrantRole('test-user', 'root'))).toBe('ok');
    expect(store.isAdminPermitted('test-user')).toBeNull();
    expect(store.roleList()).toEqual(['test-role']);
    expect(codeOf(() => store.roleGet('root'))).toBe('ERR_AUTH_ROLE_NOT_FOUND');
  });

  it('UserRevokeRole: user first, then "not granted" without looking the role up', () => {
    const store = enabledStore();
    expect(codeOf(() => store.userRevokeRole('nobody', 'test-role'))).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(codeOf(() => store.userRevokeRole('test-user', 'never-existed'))).toBe('ERR_AUTH_ROLE_NOT_GRANTED');
  });

  it('RoleDelete strips the role from every holder and from their permissions', () => {
    const store = enabledStore();
    store.userAdd({ name: 'other', passwordHash: NONE });
    store.userGrantRole('other', 'test-role');
    store.roleDelete('test-role');
    expect(store.userGet('test-user')).toEqual([]);
    expect(store.userGet('other')).toEqual([]);
    const at = { username: 'test-user', authRevision: store.revision };
    expect(store.checkAccess(at, 'read', utf8('foo'), NONE)).toBe('ERR_AUTH_PERMISSION_DENIED');
    store.roleAdd('test-role');
    store.userGrantRole('test-user', 'test-role');
    expect(store.checkAccess({ ...at, authRevision: store.revision }, 'read', utf8('foo'), NONE)).toBe('ERR_AUTH_PERMISSION_DENIED');
  });

  it('RoleRevokePermission needs an exact (key, range end) match and ignores the type', () => {
    const store = enabledStore();
    expect(codeOf(() => store.roleRevokePermission('test-role', utf8('foo'), utf8('fop')))).toBe('ERR_AUTH_PERMISSION_NOT_GRANTED');
    expect(codeOf(() => store.roleRevokePermission('no-role', utf8('foo'), NONE))).toBe('ERR_AUTH_ROLE_NOT_FOUND');
    expect(codeOf(() => store.roleRevokePermission('test-role', utf8('foo'), NONE))).toBe('ok');
    expect(store.roleGet('test-role')).toEqual([]);
  });

  it('RoleGrantPermission checks perm, then range, then role', () => {
    const store = enabledStore();
    expect(codeOf(() => store.roleGrantPermission('no-role', null))).toBe('ERR_AUTH_PERMISSION_NOT_GIVEN');
    expect(codeOf(() => store.roleGrantPermission('no-role', { permType: 0, key: NONE, rangeEnd: NONE }))).toBe('ERR_AUTH_INVALID_MGMT');
    expect(codeOf(() => store.roleGrantPermission('no-role', { permType: 0, key: utf8('a'), rangeEnd: NONE }))).toBe('ERR_AUTH_ROLE_NOT_FOUND');
  });

  it('role permissions are listed sorted by key', () => {
    const store = enabledStore();
    for (const key of ['m', 'a', 'z']) store.roleGrantPermission('test-role', { permType: 0, key: utf8(key), rangeEnd: NONE });
    expect(store.roleGet('test-role').map((p) => new TextDecoder().decode(p.key))).toEqual(['a', 'foo', 'm', 'z']);
  });

  it('a no-password user stores no hash, even after a password change', () => {
    const store = enabledStore();
    store.userAdd({ name: 'np', passwordHash: utf8('ignored'), noPassword: true });
    store.userChangePassword('np', utf8('also-ignored'));
    expect(codeOf(() => store.passwordCheckInput('np'))).toBe('ERR_AUTH_NO_PASSWORD_USER');
    expect(AuthStore.restore(store.snapshot()).snapshot()).toEqual(store.snapshot());
    expect(new TextDecoder().decode(store.snapshot())).not.toContain('ignored');
  });

  it('lists users and roles in UTF-8 byte order, not UTF-16 order', () => {
    const store = new AuthStore();
    for (const name of ['\u{1F600}', '\uFF5E', 'b', 'a']) store.userAdd({ name, passwordHash: NONE });
    expect(store.userList()).toEqual(['a', 'b', '\uFF5E', '\u{1F600}']);
  });

  it('refuses names that UTF-8 cannot represent exactly', () => {
    expect(() => new AuthStore().userAdd({ name: 'bad\ud800', passwordHash: NONE })).toThrow(TypeError);
    expect(() => new AuthStore().roleAdd('\udc00')).toThrow(TypeError);
  });
});

describe('the decision function (§3.4) and the self rules (§2.1)', () => {
  it('allows everything while disabled; then empty user, old revision, unknown user, root, ranges', () => {
    const store = enabledStore();
    const key = utf8('foo');
    const current = store.revision;
    expect(store.checkAccess({ username: 'test-user', authRevision: 0 }, 'read', key, NONE)).toBe('ERR_AUTH_USER_EMPTY');
    expect(store.checkAccess({ username: 'test-user', authRevision: current - 1 }, 'read', key, NONE)).toBe('ERR_AUTH_OLD_REVISION');
    expect(store.checkAccess({ username: 'root', authRevision: current - 1 }, 'read', key, NONE)).toBe('ERR_AUTH_OLD_REVISION');
    expect(store.checkAccess({ username: 'test-user', authRevision: current + 5 }, 'read', key, NONE)).toBeNull();
    expect(store.checkAccess({ username: 'ghost', authRevision: current }, 'read', key, NONE)).toBe('ERR_AUTH_PERMISSION_DENIED');
    expect(store.checkAccess({ username: 'root', authRevision: current }, 'write', utf8('anything'), Uint8Array.of(0))).toBeNull();
    expect(store.checkAccess({ username: 'test-user', authRevision: current }, 'write', utf8('hoo'), NONE)).toBe('ERR_AUTH_PERMISSION_DENIED');
    expect(store.isAdminPermitted('root')).toBeNull();
    store.authDisable();
    expect(store.checkAccess({ username: '', authRevision: 0 }, 'write', utf8('hoo'), NONE)).toBeNull();
  });

  it('UserGet: non-admins read only themselves; anonymous UserGet("") passes the rule', () => {
    const store = enabledStore();
    expect(store.checkUserGet('test-user', 'root')).toBe('ERR_AUTH_PERMISSION_DENIED');
    expect(store.checkUserGet('test-user', 'test-user')).toBeNull();
    expect(store.checkUserGet('root', 'test-user')).toBeNull();
    expect(store.checkUserGet('ghost', 'root')).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(store.checkUserGet('', '')).toBeNull();
    expect(codeOf(() => store.userGet(''))).toBe('ERR_AUTH_USER_NOT_FOUND');
  });

  it('RoleGet: non-admins read only roles they hold', () => {
    const store = enabledStore();
    expect(store.checkRoleGet('test-user', 'test-role')).toBeNull();
    expect(store.checkRoleGet('test-user', 'root')).toBe('ERR_AUTH_PERMISSION_DENIED');
    expect(store.checkRoleGet('', 'test-role')).toBe('ERR_AUTH_USER_EMPTY');
    expect(store.checkRoleGet('root', 'test-role')).toBeNull();
  });
});

describe('limits', () => {
  it('refuses growth beyond each configured limit with ERR_AUTH_LIMIT_EXCEEDED', () => {
    const store = new AuthStore({ limits: { maxUsers: 2, maxRoles: 1, maxRolesPerUser: 1, maxPermissionsPerRole: 1, maxNameBytes: 8, maxKeyBytes: 4, maxPasswordHashBytes: 3 } });
    store.userAdd({ name: 'a', passwordHash: NONE });
    expect(codeOf(() => store.userAdd({ name: 'toolongname', passwordHash: NONE }))).toBe('ERR_AUTH_USER_NAME_TOO_LONG');
    expect(codeOf(() => store.userAdd({ name: 'b', passwordHash: utf8('1234') }))).toBe('ERR_AUTH_LIMIT_EXCEEDED');
    store.userAdd({ name: 'b', passwordHash: NONE });
    expect(codeOf(() => store.userAdd({ name: 'c', passwordHash: NONE }))).toBe('ERR_AUTH_LIMIT_EXCEEDED');
    store.roleAdd('r');
    expect(codeOf(() => store.roleAdd('s'))).toBe('ERR_AUTH_LIMIT_EXCEEDED');
    store.userGrantRole('a', 'r');
    expect(codeOf(() => store.userGrantRole('a', 'root'))).toBe('ERR_AUTH_LIMIT_EXCEEDED');
    expect(codeOf(() => store.roleGrantPermission('r', { permType: 0, key: utf8('12345'), rangeEnd: NONE }))).toBe('ERR_AUTH_LIMIT_EXCEEDED');
    store.roleGrantPermission('r', { permType: 0, key: utf8('k'), rangeEnd: NONE });
    expect(codeOf(() => store.roleGrantPermission('r', { permType: 0, key: utf8('l'), rangeEnd: NONE }))).toBe('ERR_AUTH_LIMIT_EXCEEDED');
    expect(store.revision).toBe(1 + 2 + 1 + 1 + 1);
  });

  it('refuses a name over maxNameBytes (UTF-8 bytes) with a name error, not a quota error; 8 bytes pass', () => {
    const store = new AuthStore({ limits: { maxNameBytes: 8 } });
    expect(codeOf(() => store.userAdd({ name: 'é'.repeat(5), passwordHash: NONE }))).toBe('ERR_AUTH_USER_NAME_TOO_LONG');
    store.userAdd({ name: 'é'.repeat(4), passwordHash: NONE });
    expect(codeOf(() => store.roleAdd('role-name'))).toBe('ERR_AUTH_ROLE_NAME_TOO_LONG');
    expect(codeOf(() => store.userGrantRole('é'.repeat(4), 'role-name'))).toBe('ERR_AUTH_ROLE_NAME_TOO_LONG');
    store.roleAdd('role-nam');
    expect(store.revision).toBe(3);
    // Looking a long name up is no error: it simply does not exist.
    expect(codeOf(() => store.userGet('x'.repeat(9)))).toBe('ERR_AUTH_USER_NOT_FOUND');
  });

  it('rejects limits that are not positive integers', () => {
    expect(() => new AuthStore({ limits: { maxUsers: 0 } })).toThrow(TypeError);
  });
});
