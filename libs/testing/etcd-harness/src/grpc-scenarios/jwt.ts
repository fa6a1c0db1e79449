import type { GrpcScenario } from '../grpc-scenario';
import { TEST_ROLE, TEST_USER } from '../scenarios/common';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');
const OK = { ok: true } as const;
const OLD_REVISION = { code: 3, details: 'etcdserver: revision of auth store is old' } as const;
const claims = (revisionDelta: number, username = 'test-user') => ({ ok: true, response: { username, revisionDelta, hasExp: true } }) as const;

/**
 * JWT tokens on a server started with `--auth-token jwt,...` (ward: GATEWAY_AUTH_TOKEN): the
 * auth-revision arithmetic of spec §1.4 seen through the tokens' `revision` claim, and what an
 * old-revision token may still do (§3.4 step 3, §4.3): KV fails for everyone including root,
 * admin ops, self UserGet and own-role RoleGet still pass. All equal in 3.4.23 (§8.3).
 */
export const jwtRevisions: GrpcScenario = {
  name: 'JWT tokens and the auth revision',
  spec: '§1.4, §3.4, §4.3, §8.3 JWT old revision and auth-revision arithmetic',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  steps: [
    { label: 'authenticate root', service: 'Auth', method: 'Authenticate', request: { name: 'root', password: 'root-pw-0' }, save: 'root0', expect: { ok: true, response: { token: '<jwt>' } } },
    { label: 'authenticate test-user', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'u0', expect: { ok: true, response: { token: '<jwt>' } } },
    { label: 'claims of the user token', jwtClaimsOf: 'u0', relativeTo: 'root0', expect: claims(0) },
    { label: 'put with the fresh token', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v1') }, token: 'u0', expect: OK },
    { label: 'RoleAdd bumps the revision', service: 'Auth', method: 'RoleAdd', request: { name: 'other' }, token: 'root0', expect: OK },
    { label: 'user KV with an old-revision token', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v2') }, token: 'u0', expect: OLD_REVISION },
    { label: 'user range with an old-revision token', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'u0', expect: OLD_REVISION },
    { label: 'root KV with an old-revision token', service: 'KV', method: 'Range', request: { key: b('foo') }, token: 'root0', expect: OLD_REVISION },
    { label: 'root admin op with an old-revision token', service: 'Auth', method: 'UserList', request: {}, token: 'root0', expect: { ok: true, response: { users: ['root', 'test-user'] } } },
    { label: 'self UserGet with an old-revision token', service: 'Auth', method: 'UserGet', request: { name: 'test-user' }, token: 'u0', expect: { ok: true, response: { roles: ['test-role'] } } },
    { label: 'own RoleGet with an old-revision token', service: 'Auth', method: 'RoleGet', request: { role: 'test-role' }, token: 'u0', expect: OK },
    { label: 're-authenticate', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'u1', expect: OK },
    { label: 'RoleAdd: +1', jwtClaimsOf: 'u1', relativeTo: 'u0', expect: claims(1) },
    { label: 'put with the new token', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v3') }, token: 'u1', expect: OK },
    { label: 'grant an already granted role (no bump)', service: 'Auth', method: 'UserGrantRole', request: { user: 'test-user', role: 'test-role' }, token: 'root0', expect: OK },
    { label: 'authenticate after the no-op grant', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'u2', expect: OK },
    { label: 'no-op grant: +0', jwtClaimsOf: 'u2', relativeTo: 'u1', expect: claims(0) },
    { label: 'grant a permission', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role', perm: { permType: 'Read', key: b('bar'), range_end: b('') } }, token: 'root0', expect: OK },
    { label: 're-grant the same permission (bumps again)', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role', perm: { permType: 'Read', key: b('bar'), range_end: b('') } }, token: 'root0', expect: OK },
    { label: 'add a user', service: 'Auth', method: 'UserAdd', request: { name: 'tmp', password: 'tmp', options: {} }, token: 'root0', expect: OK },
    { label: 'delete it', service: 'Auth', method: 'UserDelete', request: { name: 'tmp' }, token: 'root0', expect: OK },
    { label: 'failed op (role not found): no bump', service: 'Auth', method: 'RoleDelete', request: { role: 'nope' }, token: 'root0', expect: { code: 9, details: 'etcdserver: role name not found' } },
    { label: 'authenticate after four changes', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'u3', expect: OK },
    { label: 'grant, re-grant, add, delete: +4', jwtClaimsOf: 'u3', relativeTo: 'u2', expect: claims(4) },
    { label: 'disable auth (bumps)', service: 'Auth', method: 'AuthDisable', request: {}, token: 'root0', expect: OK },
    { label: 'enable auth (no bump)', service: 'Auth', method: 'AuthEnable', request: {}, expect: OK },
    { label: 'authenticate after disable and enable', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'u4', expect: OK },
    { label: 'disable + enable: +1', jwtClaimsOf: 'u4', relativeTo: 'u3', expect: claims(1) },
    { label: 'change the password (bumps)', service: 'Auth', method: 'UserChangePassword', request: { name: 'test-user', password: 'pass2' }, token: 'root0', expect: OK },
    { label: 'the token from before the change is old', service: 'KV', method: 'Put', request: { key: b('foo'), value: b('v4') }, token: 'u4', expect: OLD_REVISION },
    { label: 'authenticate with the new password', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass2' }, save: 'u5', expect: OK },
    { label: 'password change: +1', jwtClaimsOf: 'u5', relativeTo: 'u4', expect: claims(1) },
    { label: 'root token claims', jwtClaimsOf: 'root0', relativeTo: 'u0', expect: claims(0, 'root') },
  ],
};
