// Checklist rows 41–52, 64 and 69–75: etcd's tests/common/auth_test.go (C), tests/e2e (E) and
// tests/integration/v3_auth_test.go (I) scenarios, replayed at the apply layer. Setup (spec §7):
// root with the root role, test-user with test-role = READWRITE on the single key `foo`, auth on.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { GrpcStatus, type WireErrorName } from '@ward/etcd/wire-errors';
import type { Compare, RequestOp } from '@ward/etcd/kv-store';
import { toPasswordHash } from './password-hash';
import type { ApplyOperation } from './request';
import type { ApplyResult } from './response';
import { FROM_KEY, NONE, b, outcome, put, range, standardSetup, type Harness } from './testing';

const bcrypt = createRequire(import.meta.url)('bcrypt') as {
  hashSync(password: string, cost: number): string;
  compareSync(password: string, hash: string): boolean;
};

const grant = (role: string, key: string | Uint8Array, rangeEnd: Uint8Array = NONE, permType = 2): ApplyOperation => ({
  type: 'roleGrantPermission',
  request: { name: role, perm: { permType, key: typeof key === 'string' ? b(key) : key, rangeEnd } },
});
const revoke = (role: string, key: string | Uint8Array, rangeEnd: Uint8Array = NONE): ApplyOperation => ({
  type: 'roleRevokePermission',
  request: { role, key: typeof key === 'string' ? b(key) : key, rangeEnd },
});
const txnOp = (compare: Compare[], success: RequestOp[], failure: RequestOp[] = []): ApplyOperation => ({
  type: 'txn',
  request: { compare, success, failure },
});

/** A snapshot without its applied-index field (magic and version take 5 bytes, then the varint). */
function withoutAppliedIndex(snapshot: Uint8Array): Uint8Array {
  let at = 5;
  while ((snapshot[at]! & 0x80) !== 0) at++;
  return snapshot.slice(at + 1);
}

function valueOf(result: ApplyResult): string | undefined {
  if (!result.ok || result.result.type !== 'range') return undefined;
  const kv = result.result.response.kvs[0];
  return kv === undefined ? undefined : fromUtf8(kv.value);
}

function expectWire(result: ApplyResult, name: WireErrorName, code: number, text: string): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error.wireName).toBe(name);
  expect(result.error.grpcCode).toBe(code);
  expect(result.error.message).toBe(text);
}

describe('etcd tests/common/auth_test.go scenarios', () => {
  it('row 41 TestAuthRoleUpdate: a grant then a revoke of hoo takes effect on the next put', () => {
    const h = standardSetup();
    expect(outcome(h.run('test-user', put('hoo', 'bar')))).toBe('PermissionDenied');
    h.must('root', grant('test-role', 'hoo'));
    expect(outcome(h.run('test-user', put('hoo', 'bar')))).toBe('ok');
    h.must('root', revoke('test-role', 'hoo'));
    expect(outcome(h.run('test-user', put('hoo', 'bar')))).toBe('PermissionDenied');
  });

  it('row 42 TestAuthUserDeleteDuringOps: a deleted user loses its token and cannot log in again', () => {
    const h = standardSetup();
    const issued = h.must('', { type: 'authenticate', request: { name: 'test-user', simpleTokenPrefix: 'abcdefghijklmnop' } });
    const token = issued.ok && issued.result.type === 'authenticate' ? issued.result.response.token : '';
    expect(h.applier.resolveSimpleToken(token)).toEqual({ username: 'test-user', authRevision: h.revision });
    h.must('root', { type: 'userDelete', request: { name: 'test-user' } });
    expect(h.applier.resolveSimpleToken(token)).toBeUndefined();
    expect(outcome(h.run('test-user', put('foo', 'bar')))).toBe('PermissionDenied');
    const login = h.run('', { type: 'authenticate', request: { name: 'test-user', simpleTokenPrefix: 'abcdefghijklmnop' } });
    expectWire(login, 'AuthFailed', GrpcStatus.INVALID_ARGUMENT, 'etcdserver: authentication failed, invalid user ID or password');
  });

  it('row 43 TestAuthRoleRevokeDuringOps: revoking one role keeps the other role’s keys', () => {
    const h = standardSetup();
    h.must('root', { type: 'roleAdd', request: { name: 'test-role2' } });
    h.must('root', grant('test-role2', 'hoo'));
    h.must('root', { type: 'userGrantRole', request: { user: 'test-user', role: 'test-role2' } });
    h.must('root', { type: 'userRevokeRole', request: { name: 'test-user', role: 'test-role' } });
    expect(outcome(h.run('test-user', put('foo', 'bar')))).toBe('PermissionDenied');
    expect(outcome(h.run('test-user', put('hoo', 'bar')))).toBe('ok');
  });

  it('row 44 TestAuthWriteKey: root writes, test-user writes foo, a wrong password fails the bcrypt check', () => {
    const h = standardSetup();
    h.must('root', { type: 'userChangePassword', request: { name: 'test-user', passwordHash: toPasswordHash(utf8(bcrypt.hashSync('pass', 4))) } });
    expect(outcome(h.run('root', put('foo', 'bar')))).toBe('ok');
    expect(outcome(h.run('test-user', put('foo', 'bar2')))).toBe('ok');
    expect(valueOf(h.must('test-user', range('foo')))).toBe('bar2');
    const { passwordHash } = h.applier.authView.passwordCheckInput('test-user');
    expect(bcrypt.compareSync('pass', fromUtf8(passwordHash))).toBe(true);
    expect(bcrypt.compareSync('bad-pass', fromUtf8(passwordHash))).toBe(false);
    expect(() => h.applier.authView.passwordCheckInput('nobody')).toThrow(expect.objectContaining({ code: 'ERR_AUTH_FAILED' }));
  });

  it('row 45 TestAuthTxn: compare, success and failure keys each need permission; a granted txn succeeds', () => {
    const h = standardSetup();
    for (const key of ['c2', 's2', 'f2']) h.must('root', grant('test-role', key));
    for (const key of ['c1', 'c2', 's1', 's2', 'f1', 'f2']) h.must('root', put(key, 'v'));
    const cmp = (key: string) => ({ target: 'VALUE' as const, result: 'EQUAL' as const, key: b(key), value: b('v') });
    const putOp = (key: string): RequestOp => ({ type: 'put', request: { key: b(key), value: b('new') } });
    expect(outcome(h.run('test-user', txnOp([cmp('c1')], [putOp('s2')], [putOp('f2')])))).toBe('PermissionDenied');
    expect(outcome(h.run('test-user', txnOp([cmp('c2')], [putOp('s1')], [putOp('f2')])))).toBe('PermissionDenied');
    expect(outcome(h.run('test-user', txnOp([cmp('c2')], [putOp('s2')], [putOp('f1')])))).toBe('PermissionDenied');
    const granted = h.must('test-user', txnOp([cmp('c2')], [putOp('s2')], [putOp('f2')]));
    expect(granted.ok && granted.result.type === 'txn' && granted.result.response.succeeded).toBe(true);
    expect(valueOf(h.must('test-user', range('s2')))).toBe('new');
  });

  it('row 46 TestAuthPrefixPerm: [/prefix/, /prefix0) covers /prefix/0..9, not /prefix0', () => {
    const h = standardSetup();
    h.must('root', grant('test-role', '/prefix/', b('/prefix0')));
    for (let i = 0; i < 10; i++) expect(outcome(h.run('test-user', put(`/prefix/${i}`, 'v')))).toBe('ok');
    expect(outcome(h.run('test-user', put('/prefix0', 'v')))).toBe('PermissionDenied');
  });

  it('row 47 TestCtlV3AuthFromKeyPerm: from-key grants, their revocation, and the all-keys grant', () => {
    const h = standardSetup();
    const high = Uint8Array.of(0xff, 0xff, 0xff);
    const tryPut = (key: string | Uint8Array) => outcome(h.run('test-user', { type: 'put', request: { key: typeof key === 'string' ? b(key) : key, value: b('v') } }));
    h.must('root', grant('test-role', 'z', FROM_KEY));
    for (let i = 0; i < 10; i++) expect(tryPut(`z${i}`)).toBe('ok');
    expect(tryPut(high)).toBe('ok');
    expect(tryPut('x')).toBe('PermissionDenied');
    h.must('root', revoke('test-role', 'z', FROM_KEY));
    expect(tryPut('z1')).toBe('PermissionDenied');
    h.must('root', grant('test-role', Uint8Array.of(0), FROM_KEY)); // etcdctl turns "" --from-key into \0
    for (const key of ['x', 'z1', 'a', 'foo']) expect(tryPut(key)).toBe('ok');
    expect(tryPut(high)).toBe('ok');
    h.must('root', revoke('test-role', Uint8Array.of(0), FROM_KEY));
    for (const key of ['x', 'z1', 'a']) expect(tryPut(key)).toBe('PermissionDenied');
  });

  it('row 48 TestAuthRevokeWithDelete: deleting a role removes it from its holders', () => {
    const h = standardSetup();
    h.must('root', { type: 'roleAdd', request: { name: 'test-role2' } });
    h.must('root', { type: 'userGrantRole', request: { user: 'test-user', role: 'test-role2' } });
    h.must('root', { type: 'roleDelete', request: { role: 'test-role2' } });
    const got = h.must('root', { type: 'userGet', request: { name: 'test-user' } });
    expect(got.ok && got.result.type === 'userGet' && got.result.response.roles).toEqual(['test-role']);
  });

  it('row 49 TestAuthTestInvalidMgmt: root protections answer invalid auth management', () => {
    const h = standardSetup();
    const text = 'etcdserver: invalid auth management';
    expectWire(h.run('root', { type: 'userDelete', request: { name: 'root' } }), 'InvalidAuthMgmt', GrpcStatus.INVALID_ARGUMENT, text);
    expectWire(h.run('root', { type: 'userRevokeRole', request: { name: 'root', role: 'root' } }), 'InvalidAuthMgmt', GrpcStatus.INVALID_ARGUMENT, text);
    expectWire(h.run('root', { type: 'roleDelete', request: { role: 'root' } }), 'InvalidAuthMgmt', GrpcStatus.INVALID_ARGUMENT, text);
  });

  it('row 50 TestAuthRoleGet: test-user reads test-role (foo READWRITE) but not root', () => {
    const h = standardSetup();
    const got = h.must('test-user', { type: 'roleGet', request: { role: 'test-role' } });
    expect(got.ok && got.result.type === 'roleGet' && got.result.response.perm).toEqual([{ permType: 2, key: b('foo'), rangeEnd: NONE }]);
    expectWire(h.run('test-user', { type: 'roleGet', request: { role: 'root' } }), 'PermissionDenied', GrpcStatus.PERMISSION_DENIED, 'etcdserver: permission denied');
  });

  it('row 51 TestAuthUserGet: test-user reads itself ([test-role]) but not root', () => {
    const h = standardSetup();
    const got = h.must('test-user', { type: 'userGet', request: { name: 'test-user' } });
    expect(got.ok && got.result.type === 'userGet' && got.result.response.roles).toEqual(['test-role']);
    expect(outcome(h.run('test-user', { type: 'userGet', request: { name: 'root' } }))).toBe('PermissionDenied');
  });

  it('row 52 TestAuthRoleList: a never-created root role is not listed', () => {
    const h = standardSetup();
    const listed = h.must('root', { type: 'roleList' });
    expect(listed.ok && listed.result.type === 'roleList' && listed.result.response.roles).toEqual(['test-role']);
  });

  it('row 64 TestAuthCompact: compaction needs root', () => {
    const h = standardSetup();
    h.must('root', put('foo', '1'));
    h.must('root', put('foo', '2'));
    expect(outcome(h.run('test-user', { type: 'compact', request: { revision: 2 } }))).toBe('PermissionDenied');
    expect(outcome(h.run('root', { type: 'compact', request: { revision: 2 } }))).toBe('ok');
  });
});

describe('etcd tests/integration/v3_auth_test.go scenarios', () => {
  it('row 69 TestV3AuthEmptyUserGet / EmptyUserPut / NonAuthorizedRPCs: no token after enable', () => {
    const h = standardSetup();
    const text = 'etcdserver: user name is empty';
    expectWire(h.run('', range('foo'), 0), 'UserEmpty', GrpcStatus.INVALID_ARGUMENT, text);
    expectWire(h.run('', put('foo', 'bar'), 0), 'UserEmpty', GrpcStatus.INVALID_ARGUMENT, text);
    expectWire(h.run('', { type: 'leaseGrant', request: { id: 5n, ttlSeconds: 10 } }, 0), 'UserEmpty', GrpcStatus.INVALID_ARGUMENT, text);
  });

  it('row 70 TestV3AuthTokenWithDisable: puts racing an auth disable never break the state machine', () => {
    const h = standardSetup();
    const header = h.revision;
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      if (i === 10) h.must('root', { type: 'authDisable' });
      outcomes.push(outcome(h.run('test-user', put('foo', `${i}`), header)));
    }
    expect(outcomes.slice(0, 10).every((o) => o === 'ok')).toBe(true);
    expect(outcomes.slice(10).every((o) => o === 'ok')).toBe(true); // disabled: tokens ignored
    expect(valueOf(h.must('', range('foo')))).toBe('19');
  });

  it('row 71 TestV3AuthRevision: UserAdd leaves the KV revision of the header unchanged', () => {
    const h = standardSetup();
    const before = h.must('root', put('foo', 'bar'));
    const added = h.must('root', { type: 'userAdd', request: { name: 'new-user', passwordHash: null, noPassword: true } });
    expect(added.ok && before.ok && added.header.revision).toBe(before.ok ? before.header.revision : -1);
  });

  it('row 72 TestV3AuthWithLeaseRevokeWithRoot: the internal root revoke deletes the lease’s keys', () => {
    const h = standardSetup();
    h.must('root', { type: 'leaseGrant', request: { id: 9n, ttlSeconds: 2 } });
    h.must('root', put('foo', 'bar', { lease: 9n }));
    h.must('test-user', put('foo', 'bar2', { lease: 9n }));
    // The leader's lessor proposes the expiry as the internal root identity.
    expect(outcome(h.run('root', { type: 'leaseRevoke', request: { id: 9n } }))).toBe('ok');
    const left = h.must('root', range('foo'));
    expect(left.ok && left.result.type === 'range' && left.result.response.count).toBe(0);
    expect(outcome(h.run('root', { type: 'leaseRevoke', request: { id: 9n } }))).toBe('LeaseNotFound');
  });

  it('row 73 TestV3AuthNestedTxnPermissionDenied: a nested delete outside the grant is refused, boo intact', () => {
    const h = standardSetup();
    h.must('root', grant('test-role', 'foo', b('zoo')));
    h.must('root', put('boo', 'boo-value'));
    const nested: RequestOp = { type: 'txn', request: { compare: [], success: [{ type: 'deleteRange', request: { key: b('boo') } }], failure: [] } };
    expectWire(h.run('test-user', txnOp([], [nested])), 'PermissionDenied', GrpcStatus.PERMISSION_DENIED, 'etcdserver: permission denied');
    expect(valueOf(h.must('root', range('boo')))).toBe('boo-value');
  });

  it('row 74 TestReadWithPrevKvInTXN: a WRITE-only user cannot read through prev_kv in a txn', () => {
    const h = standardSetup();
    h.must('root', { type: 'roleAdd', request: { name: 'write-only' } });
    h.must('root', grant('write-only', 'foo', NONE, 1));
    h.must('root', { type: 'userAdd', request: { name: 'writer', passwordHash: null, noPassword: true } });
    h.must('root', { type: 'userGrantRole', request: { user: 'writer', role: 'write-only' } });
    const putOp = (prevKv: boolean): RequestOp => ({ type: 'put', request: { key: b('foo'), value: b('x'), prevKv } });
    expect(outcome(h.run('writer', txnOp([], [putOp(true)])))).toBe('PermissionDenied');
    expect(outcome(h.run('writer', txnOp([], [putOp(false)])))).toBe('ok');
  });

  it('row 75 TestPutWithLeaseInTXN: a txn put may not join a lease holding a key outside the grant', () => {
    const h = standardSetup();
    h.must('root', grant('test-role', 'foo', b('fop')));
    h.must('root', { type: 'leaseGrant', request: { id: 3n, ttlSeconds: 60 } });
    h.must('root', put('eoo', 'x', { lease: 3n }));
    const putOp: RequestOp = { type: 'put', request: { key: b('foo'), value: b('y'), lease: 3n } };
    expect(outcome(h.run('test-user', txnOp([], [putOp])))).toBe('PermissionDenied');
    h.must('root', { type: 'leaseGrant', request: { id: 4n, ttlSeconds: 60 } });
    const cleanLease: RequestOp = { type: 'put', request: { key: b('foo'), value: b('y'), lease: 4n } };
    expect(outcome(h.run('test-user', txnOp([], [cleanLease])))).toBe('ok');
  });
});

describe('header identity rules (§3.4, §6)', () => {
  function hOld(): { h: Harness; old: number } {
    const h = standardSetup();
    const old = h.revision;
    h.must('root', { type: 'roleAdd', request: { name: 'unrelated' } });
    return { h, old };
  }

  it('a header revision older than the store’s is refused with the exact etcd error, even for root', () => {
    const { h, old } = hOld();
    const text = 'etcdserver: revision of auth store is old';
    expectWire(h.run('test-user', put('foo', 'x'), old), 'AuthOldRevision', GrpcStatus.INVALID_ARGUMENT, text);
    expectWire(h.run('root', put('foo', 'x'), old), 'AuthOldRevision', GrpcStatus.INVALID_ARGUMENT, text);
    expect(outcome(h.run('test-user', put('foo', 'x'), h.revision + 3))).toBe('ok');
  });

  it('admin operations and self UserGet ignore the header revision', () => {
    const { h, old } = hOld();
    expect(outcome(h.run('root', { type: 'roleAdd', request: { name: 'r2' } }, old))).toBe('ok');
    expect(outcome(h.run('test-user', { type: 'userGet', request: { name: 'test-user' } }, old))).toBe('ok');
  });

  it('reads served without a log entry check permissions and refuse any other header revision', () => {
    const h = standardSetup();
    h.must('root', put('foo', 'bar'));
    const read = (username: string, authRevision: number, key = 'foo') =>
      outcome(h.applier.read({ header: { id: 1n, username, authRevision }, operation: range(key) }));
    expect(read('test-user', h.revision)).toBe('ok');
    expect(read('test-user', h.revision, 'hoo')).toBe('PermissionDenied');
    expect(read('test-user', h.revision + 1)).toBe('AuthOldRevision'); // doSerialize compares with !=
    expect(read('test-user', h.revision - 1)).toBe('AuthOldRevision');
    expect(read('', 0)).toBe('UserEmpty');
    expect(() => h.applier.read({ header: { id: 1n, username: 'root', authRevision: h.revision }, operation: put('foo') })).toThrow(TypeError);
  });

  it('an unknown user is denied, not "not found"', () => {
    const h = standardSetup();
    expectWire(h.run('ghost', put('foo', 'x')), 'PermissionDenied', GrpcStatus.PERMISSION_DENIED, 'etcdserver: permission denied');
  });

  it('a refused request changes nothing but the applied index', () => {
    const h = standardSetup();
    const before = h.applier.snapshot();
    const index = h.applier.appliedIndex;
    expect(outcome(h.run('test-user', put('hoo', 'x')))).toBe('PermissionDenied');
    expect(outcome(h.run('test-user', { type: 'userAdd', request: { name: 'x', passwordHash: null, noPassword: true } }))).toBe('PermissionDenied');
    expect(withoutAppliedIndex(h.applier.snapshot())).toEqual(withoutAppliedIndex(before));
    expect(h.applier.appliedIndex).toBe(index + 2);
  });

  it('validation errors come before permission checks, as etcd’s API does', () => {
    const h = standardSetup();
    expect(outcome(h.run('test-user', { type: 'put', request: { key: NONE } }))).toBe('EmptyKey');
    expect(outcome(h.run('', { type: 'range', request: { key: NONE } }, 0))).toBe('EmptyKey');
  });
});
