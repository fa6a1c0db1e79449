// The permission rules of the lease queries the lessor answers outside the log (spec §3.5, etcd
// 3.7; checklist rows 57–61): keep-alive needs WRITE on every attached key, time-to-live with keys
// READ on every attached key, the list READ on every key of every lease; admins pass; a user is
// needed while auth is on.
import { describe, expect, it } from 'vitest';
import { fakeHash, put, standardSetup, type Harness } from './testing';

function withLeases(): Harness {
  const h = standardSetup();
  h.must('root', { type: 'userAdd', request: { name: 'reader', passwordHash: fakeHash(5), noPassword: false } });
  h.must('root', { type: 'roleAdd', request: { name: 'read-foo' } });
  h.must('root', { type: 'roleGrantPermission', request: { name: 'read-foo', perm: { permType: 0, key: Buffer.from('foo'), rangeEnd: new Uint8Array(0) } } });
  h.must('root', { type: 'userGrantRole', request: { user: 'reader', role: 'read-foo' } });
  h.must('root', { type: 'leaseGrant', request: { id: 1n, ttlSeconds: 60 } });
  h.must('root', { type: 'leaseGrant', request: { id: 2n, ttlSeconds: 60 } });
  h.must('root', put('foo', 'v', { lease: 1n }));
  h.must('root', put('secret', 'v', { lease: 2n }));
  return h;
}

const check = (h: Harness, username: string, query: Parameters<Harness['applier']['checkLeaseQuery']>[1], authRevision = username === '' ? 0 : h.revision) =>
  h.applier.checkLeaseQuery({ username, authRevision }, query)?.wireName ?? 'ok';

describe('lease query permissions', () => {
  it('need a user while auth is on', () => {
    const h = withLeases();
    expect(check(h, '', { type: 'leases' })).toBe('UserEmpty');
    expect(check(h, '', { type: 'keepAlive', id: 1n })).toBe('UserEmpty');
    expect(check(h, '', { type: 'timeToLive', id: 1n, keys: false })).toBe('UserEmpty');
  });

  it('keep-alive: WRITE on every attached key, unless admin', () => {
    const h = withLeases();
    expect(check(h, 'test-user', { type: 'keepAlive', id: 1n })).toBe('ok');
    expect(check(h, 'reader', { type: 'keepAlive', id: 1n })).toBe('PermissionDenied');
    expect(check(h, 'test-user', { type: 'keepAlive', id: 2n })).toBe('PermissionDenied');
    expect(check(h, 'root', { type: 'keepAlive', id: 2n })).toBe('ok');
    expect(check(h, 'test-user', { type: 'keepAlive', id: 99n })).toBe('ok');
  });

  it('time-to-live: any user without keys; READ on every attached key with keys', () => {
    const h = withLeases();
    expect(check(h, 'reader', { type: 'timeToLive', id: 2n, keys: false })).toBe('ok');
    expect(check(h, 'reader', { type: 'timeToLive', id: 1n, keys: true })).toBe('ok');
    expect(check(h, 'reader', { type: 'timeToLive', id: 2n, keys: true })).toBe('PermissionDenied');
    expect(check(h, 'root', { type: 'timeToLive', id: 2n, keys: true })).toBe('ok');
  });

  it('leases: READ on every key of every lease (one unreadable key refuses the list)', () => {
    const h = withLeases();
    expect(check(h, 'reader', { type: 'leases' })).toBe('PermissionDenied');
    expect(check(h, 'root', { type: 'leases' })).toBe('ok');
    h.must('root', { type: 'leaseRevoke', request: { id: 2n } });
    expect(check(h, 'reader', { type: 'leases' })).toBe('ok');
  });

  it('an identity from an older auth revision is refused (not for admins, as at apply)', () => {
    const h = withLeases();
    expect(check(h, 'test-user', { type: 'keepAlive', id: 1n }, h.revision - 1)).toBe('AuthOldRevision');
  });

  it('nothing is checked while auth is off', () => {
    const h = withLeases();
    h.must('root', { type: 'authDisable' });
    expect(check(h, '', { type: 'leases' })).toBe('ok');
    expect(check(h, '', { type: 'keepAlive', id: 2n })).toBe('ok');
  });
});
