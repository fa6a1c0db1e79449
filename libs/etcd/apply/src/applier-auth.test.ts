// Checklist rows 30–37: etcd's server/etcdserver/apply/auth_test.go (A), through the applier.
import { describe, expect, it } from 'vitest';
import { AuthStore } from '@ward/auth/permissions';
import { ANY_LEASE_EXISTS, KVStore, type RequestOp, type TxnRequest } from '@ward/etcd/kv-store';
import { LeaseTable } from './lease-table';
import { checkLeaseKeys, checkTxn, type CheckContext } from './permission-checks';
import type { ApplyOperation, ApplyOperationType } from './request';
import { Harness, NONE, b, fakeHash, outcome, put, range } from './testing';

const KEY = 'key';
const RANGE_END = 'rangeEnd';
const OUTSIDE = 'rangeEnd_outside';

/** etcd's mustCreateRolesAndEnableAuth: root, a READ-only and a WRITE-only user on [key, rangeEnd). */
function mustCreateRolesAndEnableAuth(): Harness {
  const h = new Harness();
  h.must('', { type: 'userAdd', request: { name: 'root', passwordHash: null, noPassword: true } });
  h.must('', { type: 'roleAdd', request: { name: 'root' } });
  h.must('', { type: 'userGrantRole', request: { user: 'root', role: 'root' } });
  for (const [user, role, permType] of [
    ['user_read_only', 'role_read_only', 0],
    ['user_write_only', 'role_write_only', 1],
  ] as const) {
    h.must('', { type: 'userAdd', request: { name: user, passwordHash: null, noPassword: true } });
    h.must('', { type: 'roleAdd', request: { name: role } });
    h.must('', { type: 'userGrantRole', request: { user, role } });
    h.must('', { type: 'roleGrantPermission', request: { name: role, perm: { permType, key: b(KEY), rangeEnd: b(RANGE_END) } } });
  }
  h.must('', { type: 'authEnable' });
  return h;
}

const EVERY_OPERATION: Record<ApplyOperationType, ApplyOperation> = {
  range: range(KEY),
  put: put(KEY),
  deleteRange: { type: 'deleteRange', request: { key: b(KEY) } },
  txn: { type: 'txn', request: { compare: [], success: [], failure: [] } },
  compact: { type: 'compact', request: { revision: 1 } },
  leaseGrant: { type: 'leaseGrant', request: { id: 7n, ttlSeconds: 60 } },
  leaseRevoke: { type: 'leaseRevoke', request: { id: 7n } },
  authEnable: { type: 'authEnable' },
  authDisable: { type: 'authDisable' },
  authStatus: { type: 'authStatus' },
  authenticate: { type: 'authenticate', request: { name: '', simpleTokenPrefix: 'abcdefghijklmnop' } },
  simpleTokenExpire: { type: 'simpleTokenExpire', request: { tokens: [] } },
  userAdd: { type: 'userAdd', request: { name: 'x', passwordHash: fakeHash(3), noPassword: false } },
  userDelete: { type: 'userDelete', request: { name: 'x' } },
  userChangePassword: { type: 'userChangePassword', request: { name: 'x', passwordHash: fakeHash(4) } },
  userGrantRole: { type: 'userGrantRole', request: { user: 'x', role: 'y' } },
  userRevokeRole: { type: 'userRevokeRole', request: { name: 'x', role: 'y' } },
  userGet: { type: 'userGet', request: { name: '' } },
  userList: { type: 'userList' },
  roleAdd: { type: 'roleAdd', request: { name: 'y' } },
  roleDelete: { type: 'roleDelete', request: { role: 'y' } },
  roleGet: { type: 'roleGet', request: { role: '' } },
  roleList: { type: 'roleList' },
  roleGrantPermission: { type: 'roleGrantPermission', request: { name: 'y', perm: null } },
  roleRevokePermission: { type: 'roleRevokePermission', request: { role: 'y', key: b('k'), rangeEnd: NONE } },
  signingKeyPublish: {
    type: 'signingKeyPublish',
    request: { key: { keyId: 'k1', alg: 'EdDSA', publicJwk: '{"kty":"OKP","crv":"Ed25519","x":"AA"}', notBeforeSeconds: 10, retireAfterSeconds: 20 }, nowSeconds: 10 },
  },
  signingKeyRevoke: { type: 'signingKeyRevoke', request: { keyId: 'k1' } },
  signingKeyList: { type: 'signingKeyList' },
};

// etcd's needAdminPermission list, plus Compact (admin since 3.7, checked here at apply) and
// ward's simple-token expiry.
const ADMIN_GATED = new Set<ApplyOperationType>([
  'authEnable', 'authDisable', 'userAdd', 'userDelete', 'userChangePassword', 'userGrantRole', 'userRevokeRole',
  'userList', 'roleAdd', 'roleDelete', 'roleGrantPermission', 'roleRevokePermission', 'roleList', 'compact', 'simpleTokenExpire',
  // ward's signing-key directory: publishing and revoking are admin-only, the list is public.
  'signingKeyPublish', 'signingKeyRevoke',
]);

describe('etcd server/etcdserver/apply/auth_test.go', () => {
  it.each(Object.keys(EVERY_OPERATION) as ApplyOperationType[])('row 30 TestAuthApplierV3_AdminPermission: %s', (type) => {
    const h = mustCreateRolesAndEnableAuth();
    // As in etcd's test: admin requests carry the read-only user, the others no header at all.
    const result = ADMIN_GATED.has(type) ? h.run('user_read_only', EVERY_OPERATION[type]) : h.run('', EVERY_OPERATION[type], 0);
    expect(outcome(result) === 'PermissionDenied').toBe(ADMIN_GATED.has(type));
  });

  it('row 31 TestAuthApplierV3_Apply: AuthEnable refused to a read-only user, allowed to root; an open request passes', () => {
    const h = mustCreateRolesAndEnableAuth();
    expect(outcome(h.run('', { type: 'authStatus' }, 0))).toBe('ok');
    expect(outcome(h.run('user_read_only', { type: 'authEnable' }))).toBe('PermissionDenied');
    expect(outcome(h.run('root', { type: 'authEnable' }))).toBe('ok');
  });

  it('row 32 TestAuthApplierV3_Put: read-only put; write-only put with prev_kv; write-only put; root put with prev_kv', () => {
    const h = mustCreateRolesAndEnableAuth();
    expect(outcome(h.run('user_read_only', put(KEY, '1')))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', put(KEY, '1', { prevKv: true })))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', put(KEY, '1')))).toBe('ok');
    expect(outcome(h.run('root', put(KEY, '1', { prevKv: true })))).toBe('ok');
  });

  it('row 33 TestAuthApplierV3_LeasePut: no attaching to a lease that holds a key the user cannot write', () => {
    const h = mustCreateRolesAndEnableAuth();
    h.must('root', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 9_000_000_000 } });
    expect(outcome(h.run('user_write_only', put(KEY, '1', { lease: 1n })))).toBe('ok');
    expect(outcome(h.run('root', put(OUTSIDE, '1', { lease: 1n })))).toBe('ok');
    expect(outcome(h.run('user_write_only', put(KEY, '1', { lease: 1n })))).toBe('PermissionDenied');
  });

  it('row 33 TestAuthApplierV3_LeaseRevoke: no revoking a lease that holds a key the user cannot write', () => {
    const h = mustCreateRolesAndEnableAuth();
    h.must('root', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 9_000_000_000 } });
    expect(outcome(h.run('user_write_only', { type: 'leaseRevoke', request: { id: 1n } }))).toBe('ok');
    h.must('root', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 9_000_000_000 } });
    h.must('root', put(OUTSIDE, '1', { lease: 1n }));
    expect(outcome(h.run('user_write_only', { type: 'leaseRevoke', request: { id: 1n } }))).toBe('PermissionDenied');
    const left = h.must('root', range(OUTSIDE));
    expect(left.ok && left.result.type === 'range' && left.result.response.count).toBe(1);
  });

  it('row 34 TestAuthApplierV3_Range: write-only user; key outside; inside', () => {
    const h = mustCreateRolesAndEnableAuth();
    expect(outcome(h.run('user_write_only', range(KEY)))).toBe('PermissionDenied');
    expect(outcome(h.run('user_read_only', range(OUTSIDE)))).toBe('PermissionDenied');
    expect(outcome(h.run('user_read_only', range(KEY, b(RANGE_END))))).toBe('ok');
  });

  it('row 34 TestAuthApplierV3_DeleteRange: read-only; outside; prev_kv without READ; inside; root with prev_kv', () => {
    const h = mustCreateRolesAndEnableAuth();
    const del = (key: string, rangeEnd?: string, prevKv = false): ApplyOperation => ({
      type: 'deleteRange',
      request: { key: b(key), rangeEnd: rangeEnd === undefined ? NONE : b(rangeEnd), prevKv },
    });
    expect(outcome(h.run('user_read_only', del(KEY)))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', del(OUTSIDE)))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', del(KEY, RANGE_END, true)))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', del(KEY, RANGE_END)))).toBe('ok');
    expect(outcome(h.run('root', del(KEY, RANGE_END, true)))).toBe('ok');
  });

  it('row 35 TestAuthApplierV3_UserGet: another user; itself; root', () => {
    const h = mustCreateRolesAndEnableAuth();
    const get = (name: string): ApplyOperation => ({ type: 'userGet', request: { name } });
    expect(outcome(h.run('user_write_only', get('user_read_only')))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', get('user_write_only')))).toBe('ok');
    expect(outcome(h.run('root', get('user_write_only')))).toBe('ok');
  });

  it('row 35 TestAuthApplierV3_RoleGet: another role; its own role; root', () => {
    const h = mustCreateRolesAndEnableAuth();
    const get = (role: string): ApplyOperation => ({ type: 'roleGet', request: { role } });
    expect(outcome(h.run('user_write_only', get('role_read_only')))).toBe('PermissionDenied');
    expect(outcome(h.run('user_write_only', get('role_write_only')))).toBe('ok');
    expect(outcome(h.run('root', get('role_write_only')))).toBe('ok');
  });

  it('row 36 TestCheckLeasePutsKeys: disabled; root; rev 0; old rev; unknown user; no perms; granted', () => {
    const auth = new AuthStore();
    const leases = new LeaseTable(10);
    const kv = KVStore.create({ maxTxnOps: 128, maxTxnOpsTotal: 1000, eventHistoryMaxEvents: 100, leases: ANY_LEASE_EXISTS });
    leases.grant(1n, 3600);
    const check = (username: string, authRevision: number): string | null => {
      const context: CheckContext = { auth, kv, leases, identity: { username, authRevision } };
      return checkLeaseKeys(context, 1n);
    };
    expect(check('', 0)).toBeNull();
    auth.userAdd({ name: 'root', passwordHash: NONE, noPassword: true });
    auth.roleAdd('root');
    auth.userGrantRole('root', 'root');
    auth.authEnable();
    expect(check('root', 0)).toBeNull();
    kv.put({ key: b('a'), value: b('x'), lease: 1n });
    expect(check('bob', 0)).toBe('ERR_AUTH_USER_EMPTY');
    expect(check('bob', 1)).toBe('ERR_AUTH_OLD_REVISION');
    expect(check('bob', auth.revision)).toBe('ERR_AUTH_PERMISSION_DENIED');
    auth.userAdd({ name: 'bob', passwordHash: NONE, noPassword: true });
    expect(check('bob', auth.revision)).toBe('ERR_AUTH_PERMISSION_DENIED');
    auth.roleAdd('bobsrole');
    auth.roleGrantPermission('bobsrole', { permType: 2, key: b('a'), rangeEnd: NONE });
    auth.userGrantRole('bob', 'bobsrole');
    expect(check('bob', auth.revision)).toBeNull();
  });
});

describe('row 37 TestCheckTxnAuth (server/etcdserver/txn CheckTxnAuth)', () => {
  const inRangeCompare = { target: 'VERSION' as const, result: 'EQUAL' as const, version: 0, key: b('foo'), rangeEnd: b('zoo') };
  const outOfRangeCompare = { ...inRangeCompare, key: b('boo') };
  const rangeOp = (key: string): RequestOp => ({ type: 'range', request: { key: b(key), rangeEnd: b('zoo') } });
  const putOp = (key: string): RequestOp => ({ type: 'put', request: { key: b(key) } });
  const deleteOp = (key: string, prevKv = true): RequestOp => ({ type: 'deleteRange', request: { key: b(key), rangeEnd: b('zoo'), prevKv } });
  const nest = (txn: Partial<TxnRequest>): RequestOp => ({ type: 'txn', request: { compare: [], success: [], failure: [], ...txn } });
  const txn = (t: Partial<TxnRequest>): TxnRequest => ({ compare: [], success: [], failure: [], ...t });

  function setupAuth(): CheckContext {
    const auth = new AuthStore();
    auth.roleAdd('root');
    auth.roleAdd('rw');
    auth.roleGrantPermission('rw', { permType: 2, key: b('foo'), rangeEnd: b('zoo') });
    auth.userAdd({ name: 'root', passwordHash: fakeHash(1) });
    auth.userAdd({ name: 'foo', passwordHash: fakeHash(2) });
    auth.userGrantRole('root', 'root');
    auth.userGrantRole('foo', 'rw');
    auth.authEnable();
    const leases = new LeaseTable(10);
    const kv = KVStore.create({ maxTxnOps: 128, maxTxnOpsTotal: 1000, eventHistoryMaxEvents: 100, leases });
    expect(auth.revision).toBe(8);
    return { auth, kv, leases, identity: { username: 'foo', authRevision: 8 } };
  }

  it.each<[string, TxnRequest, string | null]>([
    ['out of range compare is unauthorized', txn({ compare: [outOfRangeCompare] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['in range compare is authorized', txn({ compare: [inRangeCompare] }), null],
    ['an empty txn is authorized', txn({}), null],
    ['range in range is authorized', txn({ success: [rangeOp('foo')], failure: [rangeOp('foo')] }), null],
    ['range out of range (success) is unauthorized', txn({ success: [rangeOp('boo')], failure: [rangeOp('foo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['range out of range (failure) is unauthorized', txn({ success: [rangeOp('foo')], failure: [rangeOp('boo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['put in range is authorized', txn({ success: [putOp('foo')], failure: [putOp('foo')] }), null],
    ['put out of range (success) is unauthorized', txn({ success: [putOp('boo')], failure: [putOp('foo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['put out of range (failure) is unauthorized', txn({ success: [putOp('foo')], failure: [putOp('boo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['delete in range is authorized', txn({ success: [deleteOp('foo')], failure: [deleteOp('foo')] }), null],
    ['delete out of range (success) is unauthorized', txn({ success: [deleteOp('boo')], failure: [deleteOp('foo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['delete out of range (failure) is unauthorized', txn({ success: [deleteOp('foo')], failure: [deleteOp('boo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['delete out of range without prev_kv (success)', txn({ success: [deleteOp('boo', false)], failure: [deleteOp('foo')] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['delete out of range without prev_kv (failure)', txn({ success: [deleteOp('foo')], failure: [deleteOp('boo', false)] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['nested txn in range is authorized', txn({ success: [nest({ success: [rangeOp('foo'), putOp('foo')], failure: [deleteOp('foo')] })] }), null],
    ['nested txn out of range (success)', txn({ success: [nest({ success: [rangeOp('boo')] })] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['nested txn out of range (failure)', txn({ failure: [nest({ failure: [putOp('boo')] })] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['nested txn out of range delete', txn({ success: [nest({ success: [deleteOp('boo')] })] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['two-level nested txn out of range delete', txn({ success: [nest({ failure: [nest({ success: [deleteOp('boo')] })] })] }), 'ERR_AUTH_PERMISSION_DENIED'],
    ['nested compare out of range', txn({ success: [nest({ compare: [outOfRangeCompare] })] }), 'ERR_AUTH_PERMISSION_DENIED'],
  ])('%s', (_name, request, expected) => {
    expect(checkTxn(setupAuth(), request)).toBe(expected);
  });
});
