// Further checklist rows that the apply layer decides: 26 (replicated simple tokens), 38, 39, 55,
// 56, 57, 60 and 76, from etcd's store_test.go (S), tests/common (C) and tests/integration (I).
import { describe, expect, it } from 'vitest';
import { Applier } from './applier';
import type { ApplyOperation } from './request';
import { Harness, b, fakeHash, outcome, put, range, standardSetup } from './testing';

const status = (h: Harness) => {
  const result = h.must('', { type: 'authStatus' });
  return result.ok && result.result.type === 'authStatus' ? result.result.response : undefined;
};

describe('more etcd scenarios at the apply layer', () => {
  it('row 26 TestHammerSimpleAuthenticate (replicated part): 50 users log in, every token resolves, expiry drops only its own', () => {
    const h = standardSetup();
    const tokens: string[] = [];
    for (let i = 0; i < 50; i++) {
      h.must('root', { type: 'userAdd', request: { name: `user-${i}`, passwordHash: fakeHash(i + 10), noPassword: false } });
      const issued = h.must('', { type: 'authenticate', request: { name: `user-${i}`, simpleTokenPrefix: 'abcdefghijklmnop' } });
      if (issued.ok && issued.result.type === 'authenticate') tokens.push(issued.result.response.token);
    }
    expect(new Set(tokens).size).toBe(50);
    tokens.forEach((token, i) => expect(h.applier.resolveSimpleToken(token)?.username).toBe(`user-${i}`));
    h.must('root', { type: 'simpleTokenExpire', request: { tokens: tokens.slice(0, 25) } });
    expect(tokens.filter((token) => h.applier.resolveSimpleToken(token) !== undefined)).toEqual(tokens.slice(25));
  });

  it('a txn putting a key twice is refused at apply as invalid, before any permission check, and changes nothing', () => {
    const h = standardSetup();
    h.must('test-user', put('foo', 'before'));
    const twice = (key: string): ApplyOperation => {
      const op = put(key, 'after');
      if (op.type !== 'put') throw new Error('put() made no put');
      return { type: 'txn', request: { compare: [], success: [{ type: 'put', request: op.request }, { type: 'put', request: op.request }], failure: [] } };
    };
    expect(outcome(h.run('test-user', twice('foo')))).toBe('DuplicateKey');
    // test-user may not write bar: the request is refused as invalid all the same (etcd checks it first).
    expect(outcome(h.run('test-user', twice('bar')))).toBe('DuplicateKey');
    const read = h.must('test-user', range('foo'));
    expect(read.ok && read.result.type === 'range' ? Buffer.from(read.result.response.kvs[0]!.value).toString() : undefined).toBe('before');
  });

  it('Authenticate (spec §5): a token assignment checked at an older auth revision is refused, and no token is left', () => {
    const h = standardSetup();
    const checkedAt = h.revision;
    // A password change is ordered between the gateway's re-read and the token assignment.
    h.must('root', { type: 'userChangePassword', request: { name: 'test-user', passwordHash: fakeHash(9) } });
    const late = h.run('', { type: 'authenticate', request: { name: 'test-user', simpleTokenPrefix: 'abcdefghijklmnop' } }, checkedAt);
    expect(outcome(late)).toBe('AuthOldRevision');
    expect(h.applier.resolveSimpleToken(`abcdefghijklmnop.${h.applier.appliedIndex}`)).toBeUndefined();
    // Checked at the current revision, the assignment goes through.
    const current = h.run('', { type: 'authenticate', request: { name: 'test-user', simpleTokenPrefix: 'abcdefghijklmnop' } }, h.revision);
    expect(outcome(current)).toBe('ok');
    expect(h.applier.resolveSimpleToken(`abcdefghijklmnop.${h.applier.appliedIndex}`)?.username).toBe('test-user');
  });

  it('row 38 TestAuthStatus: disabled, then enabled, and the revision is reported', () => {
    const h = new Harness();
    expect(status(h)).toEqual({ enabled: false, authRevision: 1 });
    h.must('', { type: 'userAdd', request: { name: 'root', passwordHash: fakeHash(1), noPassword: false } });
    h.must('', { type: 'userGrantRole', request: { user: 'root', role: 'root' } });
    h.must('', { type: 'authEnable' });
    expect(status(h)).toEqual({ enabled: true, authRevision: 3 });
  });

  it('row 39 TestAuthDisable: test-user’s put to hoo is denied until root disables auth', () => {
    const h = standardSetup();
    expect(outcome(h.run('test-user', put('hoo', 'bar')))).toBe('PermissionDenied');
    h.must('root', { type: 'authDisable' });
    expect(outcome(h.run('test-user', put('hoo', 'bar')))).toBe('ok');
    expect(outcome(h.run('', put('hoo', 'bar'), 0))).toBe('ok');
  });

  it('row 39 (tokens): disabling auth drops every simple token', () => {
    const h = standardSetup();
    const issued = h.must('', { type: 'authenticate', request: { name: 'root', simpleTokenPrefix: 'ABCDEFGHIJKLMNOP' } });
    const token = issued.ok && issued.result.type === 'authenticate' ? issued.result.response.token : '';
    h.must('root', { type: 'authDisable' });
    h.must('', { type: 'authEnable' });
    expect(h.applier.resolveSimpleToken(token)).toBeUndefined();
  });

  it('row 55 TestAuthRevisionConsistency: add and delete a user, restart: same auth revision', () => {
    const h = standardSetup();
    h.must('root', { type: 'userAdd', request: { name: 'temp', passwordHash: fakeHash(3), noPassword: false } });
    h.must('root', { type: 'userDelete', request: { name: 'temp' } });
    const revision = h.revision;
    const restarted = new Harness({}, Applier.restore(h.applier.snapshot()));
    expect(restarted.revision).toBe(revision);
  });

  it('row 56 TestAuthTestCacheReload: permissions work again right after a restart', () => {
    const h = standardSetup();
    h.must('test-user', put('foo', 'bar'));
    const restarted = new Harness({}, Applier.restore(h.applier.snapshot()));
    expect(outcome(restarted.run('test-user', put('foo', 'bar')))).toBe('ok');
    expect(outcome(restarted.run('test-user', put('hoo', 'bar')))).toBe('PermissionDenied');
  });

  it('row 57 TestAuthLeaseGrantLeases: anonymous grant needs a user; test-user may grant', () => {
    const h = standardSetup();
    expect(outcome(h.run('', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 10 } }, 0))).toBe('UserEmpty');
    expect(outcome(h.run('test-user', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 10 } }))).toBe('ok');
  });

  it('row 60 TestAuthLeaseRevoke / TestV3AuthWithLeaseRevoke / WithLeaseAttach', () => {
    const h = standardSetup();
    h.must('root', { type: 'roleAdd', request: { name: 'role2' } });
    h.must('root', { type: 'roleGrantPermission', request: { name: 'role2', perm: { permType: 2, key: b('k1'), rangeEnd: b('k3') } } });
    h.must('root', { type: 'userAdd', request: { name: 'user2', passwordHash: fakeHash(4), noPassword: false } });
    h.must('root', { type: 'userGrantRole', request: { user: 'user2', role: 'role2' } });
    const revoke = (id: bigint): ApplyOperation => ({ type: 'leaseRevoke', request: { id } });
    h.must('root', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 60 } });
    expect(outcome(h.run('', revoke(1n), 0))).toBe('UserEmpty');
    h.must('root', put('k1', 'v', { lease: 1n }));
    h.must('root', put('zzz', 'v', { lease: 1n }));
    expect(outcome(h.run('user2', revoke(1n)))).toBe('PermissionDenied');
    h.must('root', { type: 'leaseGrant', request: { id: 2n, ttlSeconds: 60 } });
    h.must('user2', put('k1', 'v', { lease: 2n }));
    h.must('user2', put('k2', 'v', { lease: 2n }));
    expect(outcome(h.run('user2', revoke(2n)))).toBe('ok');
    const left = h.must('root', range('k1'));
    expect(left.ok && left.result.type === 'range' && left.result.response.count).toBe(0);
  });

  it('row 76 TestV3AuthOldRevConcurrent: writes interleaved with auth changes succeed after a retry at the new revision', () => {
    const h = standardSetup();
    for (let i = 0; i < 10; i++) {
      const header = h.revision;
      h.must('root', { type: 'roleAdd', request: { name: `role-${i}` } });
      // The put was admitted before the role add: its revision is now old; the client retries.
      expect(outcome(h.run('root', put(`key-${i}`, 'v'), header))).toBe('AuthOldRevision');
      expect(outcome(h.run('root', put(`key-${i}`, 'v')))).toBe('ok');
    }
  });
});
