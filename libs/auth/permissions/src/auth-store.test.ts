// Checklist rows of spec/etcd-auth.md §7 from etcd's server/auth/store_test.go (S), one test each,
// named after the etcd test it mirrors, plus the §2.1 behaviour table.
import { describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { utf8 } from '@ward/shared/bytes';
import { AuthStore } from './auth-store';
import { AuthError, type AuthErrorCode } from './errors';
import { PermissionType } from './permission';

// The real bcrypt (the password tier's library), loaded untyped: the package ships no declarations.
const bcrypt = createRequire(import.meta.url)('bcrypt') as {
  hashSync(password: string, cost: number): string;
  compareSync(password: string, hash: string): boolean;
};
const hash = (password: string): Uint8Array => utf8(bcrypt.hashSync(password, 4));
const NO_HASH = new Uint8Array(0);

function codeOf(run: () => unknown): AuthErrorCode | 'ok' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof AuthError) return error.code;
    throw error;
  }
}

/** etcd's setupAuthStore: root (with a root role object) enabled, role-test, user foo/bar. */
function setupAuthStore(): AuthStore {
  const store = new AuthStore();
  store.userAdd({ name: 'root', passwordHash: hash('root') });
  store.roleAdd('root');
  store.userGrantRole('root', 'root');
  store.authEnable();
  store.roleAdd('role-test');
  store.userAdd({ name: 'foo', passwordHash: hash('bar') });
  return store;
}

describe('the store owns its bytes', () => {
  it('a hash or a permission key handed in as a Node Buffer, overwritten afterwards, is kept unchanged', () => {
    const store = new AuthStore();
    const stored = hash('secret');
    const hashInput = Buffer.from(stored);
    store.userAdd({ name: 'u', passwordHash: hashInput });
    const newHash = hash('other');
    const changeInput = Buffer.from(newHash);
    store.userAdd({ name: 'v', passwordHash: hash('v') });
    store.userChangePassword('v', changeInput);
    const key = Buffer.from('app/');
    const rangeEnd = Buffer.from('app0');
    store.roleAdd('r');
    store.roleGrantPermission('r', { permType: PermissionType.READ, key, rangeEnd });
    store.userAdd({ name: 'root', passwordHash: hash('root') });
    store.userGrantRole('root', 'root');
    store.authEnable();
    hashInput.fill(0);
    changeInput.fill(0);
    key.fill(0x7a);
    rangeEnd.fill(0x7a);
    expect(store.passwordCheckInput('u').passwordHash).toEqual(stored);
    expect(store.passwordCheckInput('v').passwordHash).toEqual(newHash);
    expect(store.roleGet('r')).toEqual([{ permType: PermissionType.READ, key: utf8('app/'), rangeEnd: utf8('app0') }]);
  });
});

/** What the password tier does with passwordCheckInput: bcrypt-compare, or ERR_AUTH_FAILED. */
function checkPassword(store: AuthStore, name: string, password: string): AuthErrorCode | 'ok' {
  return codeOf(() => {
    const { passwordHash } = store.passwordCheckInput(name);
    if (!bcrypt.compareSync(password, new TextDecoder().decode(passwordHash))) throw new AuthError('ERR_AUTH_FAILED');
  });
}

const at = (store: AuthStore, username: string) => ({ username, authRevision: store.revision });

describe('etcd server/auth/store_test.go', () => {
  it('row 1 TestNewAuthStoreRevision: a fresh store is at 1; reopening an unchanged store keeps the revision', () => {
    expect(new AuthStore().revision).toBe(1);
    const store = setupAuthStore();
    const reopened = AuthStore.restore(store.snapshot());
    expect(reopened.revision).toBe(store.revision);
    // 1 → user add root 2 → role add root 3 → grant 4 → enable (no bump) → role add 5 → user add 6
    expect(store.revision).toBe(6);
  });

  it('row 3 TestUserAdd: existing name, empty name; a new user is known to the permission checks', () => {
    const store = setupAuthStore();
    expect(codeOf(() => store.userAdd({ name: 'foo', passwordHash: NO_HASH }))).toBe('ERR_AUTH_USER_ALREADY_EXIST');
    expect(codeOf(() => store.userAdd({ name: '', passwordHash: NO_HASH }))).toBe('ERR_AUTH_USER_EMPTY');
    store.userAdd({ name: 'new', passwordHash: NO_HASH });
    store.roleGrantPermission('role-test', { permType: PermissionType.READ, key: utf8('k'), rangeEnd: NO_HASH });
    store.userGrantRole('new', 'role-test');
    expect(store.checkAccess(at(store, 'new'), 'read', utf8('k'), NO_HASH)).toBeNull();
  });

  it('row 4 TestRecover / TestRecoverWithEmptyRangePermCache: restore brings back the flag and every permission index', () => {
    const store = setupAuthStore();
    store.roleGrantPermission('role-test', { permType: PermissionType.READWRITE, key: utf8('a'), rangeEnd: utf8('m') });
    store.userGrantRole('foo', 'role-test');
    const restored = AuthStore.restore(store.snapshot());
    expect(restored.enabled).toBe(true);
    expect(restored.checkAccess(at(restored, 'foo'), 'write', utf8('b'), utf8('l'))).toBeNull();
    expect(restored.checkAccess(at(restored, 'foo'), 'write', utf8('b'), utf8('n'))).toBe('ERR_AUTH_PERMISSION_DENIED');
  });

  it('row 5 TestCheckPassword: unknown user, right password, empty password', () => {
    const store = setupAuthStore();
    expect(checkPassword(store, 'foo-test', 'bar')).toBe('ERR_AUTH_FAILED');
    expect(checkPassword(store, 'foo', 'bar')).toBe('ok');
    expect(checkPassword(store, 'foo', '')).toBe('ERR_AUTH_FAILED');
  });

  it('row 6 TestUserDelete / TestUserDeleteAndPermCache: second delete fails, checks forget the user', () => {
    const store = setupAuthStore();
    store.roleGrantPermission('role-test', { permType: PermissionType.READ, key: utf8('k'), rangeEnd: NO_HASH });
    store.userGrantRole('foo', 'role-test');
    store.userDelete('foo');
    expect(codeOf(() => store.userDelete('foo'))).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(store.checkAccess(at(store, 'foo'), 'read', utf8('k'), NO_HASH)).toBe('ERR_AUTH_PERMISSION_DENIED');
    store.userAdd({ name: 'bar', passwordHash: NO_HASH });
    store.userGrantRole('bar', 'role-test');
    expect(store.checkAccess(at(store, 'bar'), 'read', utf8('k'), NO_HASH)).toBeNull();
  });

  it('row 7 TestUserChangePassword: the new password works; unknown user; a user added without options', () => {
    const store = setupAuthStore();
    expect(store.authenticate('foo')).toBe(store.revision);
    store.userChangePassword('foo', hash('baz'));
    expect(checkPassword(store, 'foo', 'baz')).toBe('ok');
    expect(checkPassword(store, 'foo', 'bar')).toBe('ERR_AUTH_FAILED');
    expect(codeOf(() => store.userChangePassword('foo-test', hash('bar')))).toBe('ERR_AUTH_USER_NOT_FOUND');
    store.userAdd({ name: 'legacy', passwordHash: hash('old') }); // options absent ⇒ no_password false
    store.userChangePassword('legacy', hash('new'));
    expect(checkPassword(store, 'legacy', 'new')).toBe('ok');
  });

  it('row 8 TestRoleAdd: an empty role name', () => {
    const store = setupAuthStore();
    store.roleAdd('role-test-1');
    expect(codeOf(() => store.roleAdd(''))).toBe('ERR_AUTH_ROLE_EMPTY');
  });

  it('row 9 TestUserGrant: granting to an unknown user', () => {
    const store = setupAuthStore();
    store.userGrantRole('foo', 'role-test');
    expect(codeOf(() => store.userGrantRole('foo-test', 'role-test'))).toBe('ERR_AUTH_USER_NOT_FOUND');
  });

  it('row 10 TestIsOpPermitted: WRITE [Keys, RangeEnd) permits exactly that range; gone once the user is', () => {
    const store = setupAuthStore();
    store.roleAdd('role-test-1');
    const perm = { permType: PermissionType.WRITE, key: utf8('Keys'), rangeEnd: utf8('RangeEnd') };
    store.roleGrantPermission('role-test-1', perm);
    store.userGrantRole('foo', 'role-test-1');
    expect(store.checkAccess(at(store, 'foo'), 'write', perm.key, perm.rangeEnd)).toBeNull();
    store.userDelete('foo');
    expect(store.checkAccess(at(store, 'foo'), 'write', perm.key, perm.rangeEnd)).toBe('ERR_AUTH_PERMISSION_DENIED');
  });

  it('row 11 TestGetUser / TestRolesOrder: roles come back strictly ascending', () => {
    const store = setupAuthStore();
    for (const role of ['role1', 'role2', 'abc', 'xyz', 'role3']) {
      store.roleAdd(role);
      store.userGrantRole('foo', role);
    }
    expect(store.userGet('foo')).toEqual(['abc', 'role1', 'role2', 'role3', 'xyz']);
    expect(codeOf(() => store.userGet('nouser'))).toBe('ERR_AUTH_USER_NOT_FOUND');
  });

  it('row 12 TestListUsers: the list holds root and the new user, sorted', () => {
    const store = setupAuthStore();
    store.userAdd({ name: 'user1', passwordHash: hash('pwd1') });
    expect(store.userList()).toEqual(['foo', 'root', 'user1']);
  });

  it('row 13 TestRoleGrantPermission: a missing perm is refused and changes nothing', () => {
    const store = setupAuthStore();
    store.roleAdd('role-test-1');
    const perm = { permType: PermissionType.WRITE, key: utf8('Keys'), rangeEnd: utf8('RangeEnd') };
    store.roleGrantPermission('role-test-1', perm);
    expect(store.roleGet('role-test-1')).toEqual([perm]);
    const revision = store.revision;
    expect(codeOf(() => store.roleGrantPermission('role-test-1', null))).toBe('ERR_AUTH_PERMISSION_NOT_GIVEN');
    expect(store.roleGet('role-test-1')).toEqual([perm]);
    expect(store.revision).toBe(revision);
  });

  it.each([
    ['nil', 'RangeEnd'],
    ['a', 'a'],
    ['b', 'a'],
    ['', 'a'],
    ['', ''],
    ['', '\0'],
  ])('row 14 TestRoleGrantInvalidPermission / RC TestRangeCheck: (%j, %j) is invalid auth management', (key, end) => {
    const store = setupAuthStore();
    const keyBytes = key === 'nil' ? NO_HASH : utf8(key);
    expect(codeOf(() => store.roleGrantPermission('role-test', { permType: 0, key: keyBytes, rangeEnd: utf8(end) }))).toBe(
      'ERR_AUTH_INVALID_MGMT',
    );
    expect(store.roleGet('role-test')).toEqual([]);
  });

  it.each([
    ['Keys', 'nil'],
    ['Keys', ''],
    ['\0', ''],
    ['a', '\0'],
    ['\0', '\0'],
    ['Keys', 'RangeEnd'],
  ])('row 15 TestRoleGrantInvalidPermission / RC TestRangeCheck: (%j, %j) is accepted', (key, end) => {
    const store = setupAuthStore();
    const endBytes = end === 'nil' ? NO_HASH : utf8(end);
    expect(codeOf(() => store.roleGrantPermission('role-test', { permType: 0, key: utf8(key), rangeEnd: endBytes }))).toBe('ok');
    expect(store.roleGet('role-test')).toHaveLength(1);
  });

  it('row 16 TestRootRoleGrantPermission: RoleGet(root) is one READWRITE perm over every key', () => {
    const store = setupAuthStore();
    store.roleGrantPermission('root', { permType: PermissionType.WRITE, key: utf8('Keys'), rangeEnd: utf8('RangeEnd') });
    expect(store.roleGet('root')).toEqual([{ permType: PermissionType.READWRITE, key: new Uint8Array(0), rangeEnd: Uint8Array.of(0) }]);
  });

  it('row 17 TestRoleRevokePermission: revoking the exact (key, range end) leaves no perms', () => {
    const store = setupAuthStore();
    store.roleAdd('role-test-1');
    store.roleGrantPermission('role-test-1', { permType: PermissionType.WRITE, key: utf8('Keys'), rangeEnd: utf8('RangeEnd') });
    store.roleRevokePermission('role-test-1', utf8('Keys'), utf8('RangeEnd'));
    expect(store.roleGet('role-test-1')).toEqual([]);
  });

  it('row 18 TestUserRevokePermission: revoking one of two roles leaves the other', () => {
    const store = setupAuthStore();
    store.roleAdd('role-test-1');
    store.userGrantRole('foo', 'role-test');
    store.userGrantRole('foo', 'role-test-1');
    expect(store.userGet('foo')).toEqual(['role-test', 'role-test-1']);
    store.userRevokeRole('foo', 'role-test-1');
    expect(store.userGet('foo')).toEqual(['role-test']);
  });

  it('row 19 TestRoleDelete: after deleting role-test only root is listed', () => {
    const store = setupAuthStore();
    store.roleDelete('role-test');
    expect(store.roleList()).toEqual(['root']);
  });

  it('row 21 TestAuthDisable: Authenticate after disable; disabling twice is safe and bumps once', () => {
    const store = setupAuthStore();
    const revision = store.revision;
    store.authDisable();
    expect(codeOf(() => store.authenticate('foo'))).toBe('ERR_AUTH_NOT_ENABLED');
    store.authDisable();
    expect(codeOf(() => store.authenticate('foo'))).toBe('ERR_AUTH_NOT_ENABLED');
    expect(store.revision).toBe(revision + 1);
  });

  it('row 22 TestIsAdminPermitted: root, rooti, empty, foo, anyone after disable', () => {
    const store = setupAuthStore();
    expect(store.isAdminPermitted('root')).toBeNull();
    expect(store.isAdminPermitted('rooti')).toBe('ERR_AUTH_USER_NOT_FOUND');
    expect(store.isAdminPermitted('')).toBe('ERR_AUTH_USER_EMPTY');
    expect(store.isAdminPermitted('foo')).toBe('ERR_AUTH_PERMISSION_DENIED');
    store.authDisable();
    expect(store.isAdminPermitted('root')).toBeNull();
    expect(store.isAdminPermitted('foo')).toBeNull();
  });

  it('row 23 TestUserNoPasswordAdd: a no-password user cannot authenticate', () => {
    const store = setupAuthStore();
    store.userAdd({ name: 'usr-no-pwd', passwordHash: hash('ignored'), noPassword: true });
    expect(codeOf(() => store.authenticate('usr-no-pwd'))).toBe('ERR_AUTH_FAILED');
    expect(codeOf(() => store.passwordCheckInput('usr-no-pwd'))).toBe('ERR_AUTH_NO_PASSWORD_USER');
  });
});
