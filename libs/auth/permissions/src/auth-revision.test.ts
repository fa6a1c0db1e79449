// spec/etcd-auth.md §1.4, row by row: exactly which operations move the auth revision.
import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { AuthStore } from './auth-store';
import { PermissionType } from './permission';

const NONE = new Uint8Array(0);

function rootEnabledStore(): AuthStore {
  const store = new AuthStore();
  store.userAdd({ name: 'root', passwordHash: NONE, noPassword: true });
  store.userGrantRole('root', 'root');
  store.authEnable();
  store.roleAdd('r');
  store.userAdd({ name: 'u', passwordHash: utf8('$2b$04$hash') });
  return store;
}

/** The revision change `run` causes (failures are swallowed: a failing op must not bump). */
function bumpOf(store: AuthStore, run: (s: AuthStore) => void): number {
  const before = store.revision;
  try {
    run(store);
  } catch {
    // measured below
  }
  return store.revision - before;
}

describe('auth revision bump table (§1.4)', () => {
  it('reproduces the live 3.4.23 sequence 1 → 7 with no bump on AuthEnable', () => {
    const store = new AuthStore();
    expect(store.revision).toBe(1);
    store.userAdd({ name: 'root', passwordHash: utf8('h') });
    expect(store.revision).toBe(2);
    store.userGrantRole('root', 'root');
    expect(store.revision).toBe(3);
    store.roleAdd('test-role');
    expect(store.revision).toBe(4);
    store.roleGrantPermission('test-role', { permType: PermissionType.READWRITE, key: utf8('foo'), rangeEnd: NONE });
    expect(store.revision).toBe(5);
    store.userAdd({ name: 'test-user', passwordHash: utf8('h') });
    expect(store.revision).toBe(6);
    store.userGrantRole('test-user', 'test-role');
    expect(store.revision).toBe(7);
    store.authEnable();
    expect(store.revision).toBe(7);
  });

  it.each<[string, (s: AuthStore) => void, number]>([
    ['AuthEnable when already enabled', (s) => s.authEnable(), 0],
    ['AuthDisable while enabled', (s) => s.authDisable(), 1],
    ['AuthDisable while disabled', (s) => (s.authDisable(), s.authDisable()), 1],
    ['UserAdd', (s) => s.userAdd({ name: 'v', passwordHash: NONE }), 1],
    ['UserDelete', (s) => s.userDelete('u'), 1],
    ['UserChangePassword', (s) => s.userChangePassword('u', utf8('x')), 1],
    ['UserChangePassword of a no-password user', (s) => s.userChangePassword('root', utf8('x')), 1],
    ['UserGrantRole that adds a role', (s) => s.userGrantRole('u', 'r'), 1],
    ['UserGrantRole of a role already granted', (s) => (s.userGrantRole('u', 'r'), s.userGrantRole('u', 'r')), 1],
    ['UserRevokeRole', (s) => (s.userGrantRole('u', 'r'), s.userRevokeRole('u', 'r')), 2],
    ['RoleAdd', (s) => s.roleAdd('r2'), 1],
    ['RoleGrantPermission (new)', (s) => s.roleGrantPermission('r', { permType: 0, key: utf8('k'), rangeEnd: NONE }), 1],
    [
      'RoleGrantPermission re-grant with the same type',
      (s) => {
        s.roleGrantPermission('r', { permType: 0, key: utf8('k'), rangeEnd: NONE });
        s.roleGrantPermission('r', { permType: 0, key: utf8('k'), rangeEnd: NONE });
      },
      2,
    ],
    [
      'RoleRevokePermission',
      (s) => {
        s.roleGrantPermission('r', { permType: 0, key: utf8('k'), rangeEnd: NONE });
        s.roleRevokePermission('r', utf8('k'), NONE);
      },
      2,
    ],
    ['Authenticate, UserGet, UserList, RoleGet, RoleList, status', (s) => (s.authenticate('u'), s.userGet('u'), s.userList(), s.roleGet('r'), s.roleList(), s.enabled), 0],
    ['a failing UserAdd', (s) => s.userAdd({ name: 'u', passwordHash: NONE }), 0],
    ['a failing UserGrantRole', (s) => s.userGrantRole('u', 'missing'), 0],
    ['a failing RoleGrantPermission', (s) => s.roleGrantPermission('r', { permType: 0, key: utf8('b'), rangeEnd: utf8('a') }), 0],
    ['a refused root protection', (s) => s.userDelete('root'), 0],
  ])('%s: bump as in the table', (_name, run, expected) => {
    expect(bumpOf(rootEnabledStore(), run)).toBe(expected);
  });

  it('RoleDelete bumps exactly once however many users held the role', () => {
    const store = rootEnabledStore();
    for (const name of ['a', 'b', 'c']) {
      store.userAdd({ name, passwordHash: NONE });
      store.userGrantRole(name, 'r');
    }
    expect(bumpOf(store, (s) => s.roleDelete('r'))).toBe(1);
    expect(store.userGet('a')).toEqual([]);
  });

  it('AuthEnable after a disable keeps the bumped revision (it re-reads, never bumps)', () => {
    const store = rootEnabledStore();
    store.authDisable();
    const revision = store.revision;
    store.authEnable();
    expect(store.revision).toBe(revision);
  });
});
