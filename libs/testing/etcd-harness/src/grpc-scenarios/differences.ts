import type { GrpcScenario } from '../grpc-scenario';
import { TEST_ROLE, TEST_USER } from '../scenarios/common';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');
const INVALID_TOKEN = { code: 16, details: 'etcdserver: invalid auth token' } as const;
const USER_EMPTY = { code: 3, details: 'etcdserver: user name is empty' } as const;
const DENIED = { code: 7, details: 'etcdserver: permission denied' } as const;
const INVALID_MGMT = { code: 3, details: 'etcdserver: invalid auth management' } as const;
const OK = { ok: true } as const;

/**
 * Spec §8.2: behaviours where Debian's etcd 3.4.23 knowingly differs from the target (etcd 3.7).
 * Every step here carries both: `expect` is what ward must do, `etcd34` what 3.4.23 does.
 */
export const knownDifferences: GrpcScenario = {
  name: 'known differences from etcd 3.4.23',
  spec: '§8.1, §8.2 items 1, 2, 3, 5, 6, 7, 8, 9, 10, 12, 13; §4.1; §4.4',
  setup: {
    roles: [TEST_ROLE, { name: 'wo', permissions: [{ permType: 'WRITE', key: 'w' }] }],
    users: [TEST_USER, { name: 'writer', password: 'w-pass', roles: ['wo'] }],
  },
  steps: [
    { label: 'authenticate test-user', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'user', expect: OK },
    { label: 'authenticate writer', service: 'Auth', method: 'Authenticate', request: { name: 'writer', password: 'w-pass' }, save: 'writer', expect: OK },
    { label: 'root writes foo', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v') }, token: 'root', expect: OK },
    {
      label: '§8.2.1 nested txn writes bar with only foo rights',
      service: 'KV',
      method: 'Txn',
      request: { success: [{ request_txn: { success: [{ request_put: { key: b('bar'), value: b('smuggled') } }] } }] },
      token: 'user',
      expect: DENIED,
      etcd34: OK,
    },
    {
      label: '§8.2.1 bar after the nested txn',
      service: 'KV',
      method: 'Range',
      request: { key: b('bar') },
      token: 'root',
      expect: { ok: true, response: { count: '0' } },
      etcd34: { ok: true, response: { count: '1' } },
    },
    {
      label: '§8.2.2 txn put with prev_kv by a WRITE-only user',
      service: 'KV',
      method: 'Txn',
      request: { success: [{ request_put: { key: b('w'), value: b('x'), prev_kv: true } }] },
      token: 'writer',
      expect: DENIED,
      etcd34: OK,
    },
    { label: '§8.2.3 compaction by a non-root user', service: 'KV', method: 'Compact', request: ({ baselineRevision }) => ({ revision: String(baselineRevision) }), token: 'user', expect: DENIED, etcd34: OK },
    { label: '§8.2.3 compaction anonymously', service: 'KV', method: 'Compact', request: ({ baselineRevision }) => ({ revision: String(baselineRevision + 1) }), expect: USER_EMPTY, etcd34: OK },
    { label: '§8.2.5 Status anonymously', service: 'Maintenance', method: 'Status', request: {}, expect: USER_EMPTY, etcd34: OK },
    { label: '§8.2.5 Alarm GET anonymously', service: 'Maintenance', method: 'Alarm', request: { action: 'GET' }, expect: USER_EMPTY, etcd34: OK },
    { label: '§8.2.5 MemberList anonymously', service: 'Cluster', method: 'MemberList', request: {}, expect: USER_EMPTY, etcd34: OK },
    { label: '§8.2.6 Hash anonymously', service: 'Maintenance', method: 'Hash', request: {}, expect: USER_EMPTY, etcd34: { code: 2, details: 'auth: user name is empty' } },
    { label: '§8.2.6 HashKV by a non-root user', service: 'Maintenance', method: 'HashKV', request: {}, token: 'user', expect: DENIED, etcd34: { code: 2, details: 'auth: permission denied' } },
    { label: '§8.2.6 Defragment by a non-root user', service: 'Maintenance', method: 'Defragment', request: {}, token: 'user', expect: DENIED, etcd34: { code: 2, details: 'auth: permission denied' } },
    { label: 'Defragment by root', service: 'Maintenance', method: 'Defragment', request: {}, token: 'root', outcomeOnly: true, expect: OK },
    { label: '§8.2.8 Authenticate carrying a garbage token', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, literalToken: 'garbage', expect: OK, etcd34: INVALID_TOKEN },
    { label: '§8.2.9 Bearer token', service: 'KV', method: 'Range', request: { key: b('foo') }, bearer: 'user', expect: OK, etcd34: INVALID_TOKEN },
    { label: '§8.2.10 grant with an empty key', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role', perm: { permType: 'Read', key: b(''), range_end: b('') } }, token: 'root', expect: INVALID_MGMT, etcd34: OK },
    { label: '§8.2.10 grant with key > range_end', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role', perm: { permType: 'Read', key: b('b'), range_end: b('a') } }, token: 'root', expect: INVALID_MGMT, etcd34: OK },
    { label: '§8.2.10 grant with key == range_end', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role', perm: { permType: 'Read', key: b('a'), range_end: b('a') } }, token: 'root', expect: INVALID_MGMT, etcd34: OK },
    { label: 'grant without perm (never sent to 3.4.23)', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role' }, token: 'root', expect: { code: 3, details: 'etcdserver: permission not given' }, wardOnly: true },
    { label: '§8.1 AuthStatus', service: 'Auth', method: 'AuthStatus', request: {}, expect: { ok: true, response: { enabled: true } }, etcd34: { code: 12, details: 'unknown method AuthStatus for service etcdserverpb.Auth' } },
    { label: '§8.1 RoleGet root (role object exists)', service: 'Auth', method: 'RoleAdd', request: { name: 'root' }, token: 'root', expect: OK },
    {
      label: '§8.1 RoleGet root synthesises READWRITE on all keys',
      service: 'Auth',
      method: 'RoleGet',
      request: { role: 'root' },
      token: 'root',
      expect: { ok: true, response: { perm: [{ permType: 'Readwrite', key: '', range_end: '\u0000' }] } },
      etcd34: { ok: true, response: { perm: [] } },
    },
    { label: '§8.2.12 password longer than 72 bytes', service: 'Auth', method: 'UserAdd', request: { name: 'long', password: 'p'.repeat(80), options: {} }, token: 'root', expect: { code: 2, details: 'bcrypt: password length exceeds 72 bytes' }, etcd34: OK },
    { label: '§8.2.13 change password to ""', service: 'Auth', method: 'UserChangePassword', request: { name: 'writer', password: '' }, token: 'root', expect: OK },
    {
      label: '§8.2.13 login with ""',
      service: 'Auth',
      method: 'Authenticate',
      request: { name: 'writer', password: '' },
      expect: { code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' },
      etcd34: OK,
    },
    { label: 'disable auth', service: 'Auth', method: 'AuthDisable', request: {}, token: 'root', expect: OK },
    { label: '§8.2.7 old token after AuthDisable', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'user', expect: OK, etcd34: INVALID_TOKEN },
    { label: '§8.2.7 no token after AuthDisable', service: 'KV', method: 'Range', request: { key: b('foo') }, expect: OK },
  ],
};

const LEASE_NOT_FOUND = { code: 5, details: 'etcdserver: requested lease not found' } as const;

/**
 * Leases with auth on (spec §3.5, checklist rows 57–61; §8.2 item 4): what root and a user may do
 * with explicit lease IDs, equal on both; the anonymous calls and the list by a user who cannot
 * read every attached key are where 3.4.23 (no user needed, no list check) differs from 3.7.
 * Remaining TTLs depend on timing, so those steps compare outcomes only.
 */
export const leases: GrpcScenario = {
  name: 'leases with auth',
  spec: '§3.5 Lease rows, checklist rows 57–61; §8.2 item 4',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  steps: [
    { label: 'authenticate test-user', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'user', expect: OK },
    { label: 'root grants lease 1000 (60 s)', service: 'Lease', method: 'LeaseGrant', request: { ID: '1000', TTL: '60' }, token: 'root', expect: { ok: true, response: { ID: '1000', TTL: '60', error: '' } } },
    { label: 'lease 1000 again', service: 'Lease', method: 'LeaseGrant', request: { ID: '1000', TTL: '60' }, token: 'root', expect: { code: 9, details: 'etcdserver: lease already exists' } },
    { label: 'a TTL above the maximum', service: 'Lease', method: 'LeaseGrant', request: { ID: '1001', TTL: '9000000001' }, token: 'root', expect: { code: 11, details: 'etcdserver: too large lease TTL' } },
    { label: 'a TTL of 1 s is raised to the minimum (2 s)', service: 'Lease', method: 'LeaseGrant', request: { ID: '1002', TTL: '1' }, token: 'root', expect: { ok: true, response: { ID: '1002', TTL: '2' } } },
    { label: 'revoke lease 1002', service: 'Lease', method: 'LeaseRevoke', request: { ID: '1002' }, token: 'root', outcomeOnly: true, expect: OK },
    { label: 'test-user attaches foo to lease 1000', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v'), lease: '1000' }, token: 'user', expect: OK },
    {
      label: 'keys_only range of foo: value dropped, lease kept',
      service: 'KV',
      method: 'Range',
      request: { key: b('foo'), keys_only: true },
      token: 'user',
      expect: { ok: true, response: { kvs: [{ key: 'foo', value: '', version: '1', lease: '1000' }], count: '1' } },
    },
    {
      label: 'keys_only range sorted by version inside a txn: lease kept',
      service: 'KV',
      method: 'Txn',
      request: { success: [{ request_range: { key: b('foo'), keys_only: true, sort_target: 'VERSION', sort_order: 'DESCEND' } }] },
      token: 'user',
      expect: { ok: true, response: { responses: [{ response_range: { kvs: [{ key: 'foo', value: '', lease: '1000' }] } }] } },
    },
    { label: 'put with an unknown lease', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v'), lease: '4242' }, token: 'user', expect: LEASE_NOT_FOUND },
    { label: 'time-to-live with keys by test-user', service: 'Lease', method: 'LeaseTimeToLive', request: { ID: '1000', keys: true }, token: 'user', outcomeOnly: true, expect: { ok: true, response: { ID: '1000', grantedTTL: '60', keys: ['foo'] } } },
    { label: 'time-to-live of an unknown lease: TTL -1, no error', service: 'Lease', method: 'LeaseTimeToLive', request: { ID: '4242' }, token: 'user', expect: { ok: true, response: { ID: '4242', TTL: '-1', grantedTTL: '0' } } },
    { label: 'root grants lease 1003 and attaches bar', service: 'Lease', method: 'LeaseGrant', request: { ID: '1003', TTL: '60' }, token: 'root', expect: OK },
    { label: 'root puts bar with lease 1003', service: 'KV', method: 'Put', request: { key: b('bar'), value: b('v'), lease: '1003' }, token: 'root', expect: OK },
    { label: 'test-user attaches foo to lease 1003 (bar not writable)', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('w'), lease: '1003' }, token: 'user', expect: DENIED },
    { label: 'test-user revokes lease 1003 (bar not writable)', service: 'Lease', method: 'LeaseRevoke', request: { ID: '1003' }, token: 'user', expect: DENIED },
    { label: 'root lists the leases', service: 'Lease', method: 'LeaseLeases', request: {}, token: 'root', expect: { ok: true, response: { leases: [{ ID: '1000' }, { ID: '1003' }] } } },
    { label: 'test-user lists the leases (bar not readable)', service: 'Lease', method: 'LeaseLeases', request: {}, token: 'user', expect: DENIED, etcd34: OK },
    { label: 'test-user revokes lease 1000', service: 'Lease', method: 'LeaseRevoke', request: { ID: '1000' }, token: 'user', expect: OK },
    { label: 'foo went with lease 1000', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'user', expect: { ok: true, response: { count: '0' } } },
    { label: 'lease 1000 again', service: 'Lease', method: 'LeaseRevoke', request: { ID: '1000' }, token: 'root', expect: LEASE_NOT_FOUND },
    { label: '§8.2.4 LeaseGrant without a token', service: 'Lease', method: 'LeaseGrant', request: { ID: '1004', TTL: '60' }, expect: USER_EMPTY, etcd34: OK },
    { label: '§8.2.4 LeaseLeases without a token', service: 'Lease', method: 'LeaseLeases', request: {}, expect: USER_EMPTY, etcd34: OK },
    { label: '§8.2.4 LeaseTimeToLive without a token', service: 'Lease', method: 'LeaseTimeToLive', request: { ID: '1003' }, expect: USER_EMPTY, etcd34: OK },
  ],
};
