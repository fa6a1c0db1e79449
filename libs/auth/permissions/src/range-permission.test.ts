// Checklist rows 27–29 (etcd server/auth/range_perm_cache_test.go) and the §3.3/§3.4 coverage rules,
// driven through the store's public checks.
import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { AuthStore } from './auth-store';
import { PermissionType } from './permission';

const INF = '\0';

/** A store where user `u` holds READ on each [begin, end) given ('\0' as end = +∞). */
function readerOf(ranges: ReadonlyArray<readonly [string, string]>): AuthStore {
  const store = new AuthStore();
  store.userAdd({ name: 'root', passwordHash: new Uint8Array(0), noPassword: true });
  store.userGrantRole('root', 'root');
  store.userAdd({ name: 'u', passwordHash: new Uint8Array(0), noPassword: true });
  store.roleAdd('r');
  for (const [begin, end] of ranges) store.roleGrantPermission('r', { permType: PermissionType.READ, key: utf8(begin), rangeEnd: utf8(end) });
  store.userGrantRole('u', 'r');
  store.authEnable();
  return store;
}

function reads(store: AuthStore, key: string, rangeEnd: string): boolean {
  return store.checkAccess({ username: 'u', authRevision: store.revision }, 'read', utf8(key), utf8(rangeEnd)) === null;
}

describe('etcd server/auth/range_perm_cache_test.go', () => {
  it.each<[Array<[string, string]>, string, string, boolean]>([
    [[['a', 'c'], ['x', 'z']], 'a', 'z', false],
    [[['a', 'f'], ['c', 'd'], ['f', 'z']], 'a', 'z', true],
    [[['a', 'd'], ['a', 'b'], ['c', 'f']], 'a', 'f', true],
  ])('row 27 TestRangePermission: %j covering [%s, %s) is %s', (ranges, begin, end, want) => {
    expect(reads(readerOf(ranges), begin, end)).toBe(want);
  });

  it.each<[Array<[string, string]>, string, boolean]>([
    [[['a', 'd'], ['a', 'b'], ['c', 'f']], 'a', false],
    [[['a', INF]], 'a', true],
    [[['\0', INF]], 'a', true],
    [[['\0', INF]], '\0', true],
  ])('row 28 TestRangePermission (open ends): %j covering [%j, +∞) is %s', (ranges, begin, want) => {
    expect(reads(readerOf(ranges), begin, INF)).toBe(want);
  });

  it.each<[Array<[string, string]>, string, boolean]>([
    [[['a', 'c'], ['x', 'z']], 'f', false],
    [[['a', 'f'], ['c', 'd'], ['f', 'z']], 'b', true],
    [[['a', 'd'], ['a', 'b'], ['c', 'f']], 'd', true],
    [[['a', 'd'], ['a', 'b'], ['c', 'f']], 'f', false],
    [[['c', INF]], 'f', true],
    [[['\0', INF]], 'f', true],
  ])('row 29 TestKeyPermission: %j holding key %j is %s', (ranges, key, want) => {
    expect(reads(readerOf(ranges), key, '')).toBe(want);
  });
});

describe('§3.3–3.4 coverage rules', () => {
  it('a single-key grant covers exactly that key, not its prefix range; [k, k\\0) does', () => {
    const single = readerOf([['foo', '']]);
    expect(reads(single, 'foo', '')).toBe(true);
    expect(reads(single, 'foo0', '')).toBe(false);
    expect(reads(single, 'foo', 'fop')).toBe(false);
    expect(reads(single, 'foo', 'foo\0')).toBe(true);
  });

  it('a from-key request needs an open-ended grant', () => {
    expect(reads(readerOf([['a', 'zzzz']]), 'b', INF)).toBe(false);
    expect(reads(readerOf([['a', INF]]), 'b', INF)).toBe(true);
  });

  it('an inverted request passes when the key itself is covered (MVCC returns nothing for it)', () => {
    const store = readerOf([['b', 'c']]);
    expect(reads(store, 'b', 'a')).toBe(true);
    expect(reads(store, 'a', '0')).toBe(false);
  });

  it('a permission type outside 0..2 is stored and listed but grants nothing', () => {
    const store = readerOf([]);
    store.roleGrantPermission('r', { permType: 7, key: utf8('k'), rangeEnd: new Uint8Array(0) });
    expect(store.roleGet('r')).toEqual([{ permType: 7, key: utf8('k'), rangeEnd: new Uint8Array(0) }]);
    const at = { username: 'u', authRevision: store.revision };
    expect(store.checkAccess(at, 'read', utf8('k'), new Uint8Array(0))).toBe('ERR_AUTH_PERMISSION_DENIED');
    expect(store.checkAccess(at, 'write', utf8('k'), new Uint8Array(0))).toBe('ERR_AUTH_PERMISSION_DENIED');
  });

  it('READWRITE feeds both sets; READ and WRITE only their own', () => {
    const store = readerOf([]);
    store.roleGrantPermission('r', { permType: PermissionType.WRITE, key: utf8('w'), rangeEnd: new Uint8Array(0) });
    store.roleGrantPermission('r', { permType: PermissionType.READWRITE, key: utf8('rw'), rangeEnd: new Uint8Array(0) });
    const at = { username: 'u', authRevision: store.revision };
    const none = new Uint8Array(0);
    expect(store.checkAccess(at, 'write', utf8('w'), none)).toBeNull();
    expect(store.checkAccess(at, 'read', utf8('w'), none)).toBe('ERR_AUTH_PERMISSION_DENIED');
    expect(store.checkAccess(at, 'read', utf8('rw'), none)).toBeNull();
    expect(store.checkAccess(at, 'write', utf8('rw'), none)).toBeNull();
  });

  it('re-granting the same (key, range end) replaces its type instead of adding a copy', () => {
    const store = readerOf([['a', 'c']]);
    store.roleGrantPermission('r', { permType: PermissionType.WRITE, key: utf8('a'), rangeEnd: utf8('c') });
    expect(store.roleGet('r')).toEqual([{ permType: PermissionType.WRITE, key: utf8('a'), rangeEnd: utf8('c') }]);
    expect(reads(store, 'b', '')).toBe(false);
    expect(store.checkAccess({ username: 'u', authRevision: store.revision }, 'write', utf8('b'), new Uint8Array(0))).toBeNull();
  });
});
