import type { GrpcScenario } from '../grpc-scenario';
import { TEST_ROLE, TEST_USER } from '../scenarios/common';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');
const INVALID_TOKEN = { code: 16, details: 'etcdserver: invalid auth token' } as const;
const USER_EMPTY = { code: 3, details: 'etcdserver: user name is empty' } as const;
const AUTH_FAILED = { code: 3, details: 'etcdserver: authentication failed, invalid user ID or password' } as const;
const DENIED = { code: 7, details: 'etcdserver: permission denied' } as const;

/** Simple tokens: format, transport, invalidation on password change and user delete (§4.1, §4.2, §5, §8.3). */
export const simpleTokens: GrpcScenario = {
  name: 'simple tokens and identities',
  spec: '§4.1, §4.2, §5, §8.3 garbage token / unauthenticated KV / token invalidation; rows 5, 7, 20, 69',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  steps: [
    { label: 'authenticate test-user', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'user', expect: { ok: true, response: { token: '<simple-token>' } } },
    { label: 'put with the token', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v1') }, token: 'user', expect: { ok: true } },
    { label: 'range with the token', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'user', expect: { ok: true, response: { kvs: [{ key: 'foo', value: 'v1', version: '1' }], count: '1' } } },
    { label: 'range without a token', service: 'KV', method: 'Range', request: { key: b('foo') }, expect: USER_EMPTY },
    { label: 'range with a garbage token', service: 'KV', method: 'Range', request: { key: b('foo') }, literalToken: 'garbage', expect: INVALID_TOKEN },
    { label: 'range with a malformed index', service: 'KV', method: 'Range', request: { key: b('foo') }, literalToken: 'abcdefghijklmnop.x1', expect: INVALID_TOKEN },
    { label: 'put with a garbage token', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('x') }, literalToken: 'garbage', expect: INVALID_TOKEN },
    { label: 'UserGet with a garbage token', service: 'Auth', method: 'UserGet', request: { name: 'test-user' }, literalToken: 'garbage', expect: INVALID_TOKEN },
    { label: 'range outside the grant', service: 'KV', method: 'Range', request: { key: b('bar') }, token: 'user', expect: DENIED },
    { label: 'empty key', service: 'KV', method: 'Put', request: { key: b(''), value: b('x') }, token: 'root', expect: { code: 3, details: 'etcdserver: key is not provided' } },
    { label: 'empty range key', service: 'KV', method: 'Range', request: { key: b('') }, token: 'root', expect: { code: 3, details: 'etcdserver: key is not provided' } },
    { label: 'change test-user password', service: 'Auth', method: 'UserChangePassword', request: { name: 'test-user', password: 'new-pass' }, token: 'root', expect: { ok: true } },
    { label: 'old token after password change', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'user', expect: INVALID_TOKEN },
    { label: 'old password', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, expect: AUTH_FAILED },
    { label: 'new password', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'new-pass' }, save: 'user2', expect: { ok: true, response: { token: '<simple-token>' } } },
    { label: 'range with the new token', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'user2', expect: { ok: true } },
    { label: 'UserGet self', service: 'Auth', method: 'UserGet', request: { name: 'test-user' }, token: 'user2', expect: { ok: true, response: { roles: ['test-role'] } } },
    { label: 'RoleGet own role', service: 'Auth', method: 'RoleGet', request: { role: 'test-role' }, token: 'user2', expect: { ok: true, response: { perm: [{ permType: 'Readwrite', key: 'foo', range_end: '' }] } } },
    { label: 'denied watch', watchCreate: { key: b('bar') }, token: 'user2', expect: { ok: true, response: { watch_id: '-1', created: true, canceled: true, cancel_reason: 'rpc error: code = PermissionDenied desc = etcdserver: permission denied', events: [] } } },
    { label: 'anonymous watch', watchCreate: { key: b('foo') }, expect: { ok: true, response: { watch_id: '-1', created: true, canceled: true, cancel_reason: 'rpc error: code = InvalidArgument desc = etcdserver: user name is empty' } } },
    { label: 'allowed watch', watchCreate: { key: b('foo') }, token: 'user2', expect: { ok: true, response: { watch_id: '0', created: true, canceled: false, cancel_reason: '' } } },
    { label: 'delete test-user', service: 'Auth', method: 'UserDelete', request: { name: 'test-user' }, token: 'root', expect: { ok: true } },
    { label: 'token of a deleted user', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'user2', expect: INVALID_TOKEN },
    { label: 'unknown user', service: 'Auth', method: 'Authenticate', request: { name: 'nobody', password: 'x' }, expect: AUTH_FAILED },
    { label: 'empty user name', service: 'Auth', method: 'Authenticate', request: { name: '', password: '' }, expect: AUTH_FAILED },
    { label: 'anonymous UserGet of ""', service: 'Auth', method: 'UserGet', request: { name: '' }, expect: { code: 9, details: 'etcdserver: user name not found' } },
    { label: 'no-password user add', service: 'Auth', method: 'UserAdd', request: { name: 'np', password: '', options: { no_password: true } }, token: 'root', expect: { ok: true } },
    { label: 'no-password user login', service: 'Auth', method: 'Authenticate', request: { name: 'np', password: '' }, expect: { code: 2, details: 'auth: authentication failed, password was given for no password user' } },
    { label: 'root admin op', service: 'Auth', method: 'UserList', request: {}, token: 'root', expect: { ok: true, response: { users: ['np', 'root'] } } },
    { label: 'disable auth', service: 'Auth', method: 'AuthDisable', request: {}, token: 'root', expect: { ok: true } },
    { label: 'authenticate while disabled', service: 'Auth', method: 'Authenticate', request: { name: 'root', password: 'root-pw-0' }, expect: { code: 9, details: 'etcdserver: authentication is not enabled' } },
    { label: 'anonymous range while disabled', service: 'KV', method: 'Range', request: { key: b('foo') }, expect: { ok: true, response: { count: '1' } } },
  ],
};
