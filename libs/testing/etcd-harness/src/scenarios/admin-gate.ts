import type { Scenario } from '../scenario';
import { DENIED, INVALID_MGMT, TEST_PASSWORDS, TEST_ROLE, TEST_USER, USER_EMPTY, ctl } from './common';

/** Root protections while auth is enabled (row 49; §2.1 "Root protections"). */
export const invalidAuthManagement: Scenario = {
  name: 'invalid auth management',
  spec: '§2.1 root protections, §8.3; row 49',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('root', ['user', 'delete', 'root'], { error: INVALID_MGMT }),
    ctl('root', ['user', 'revoke-role', 'root', 'root'], { error: INVALID_MGMT }),
    ctl('root', ['role', 'delete', 'root'], { error: INVALID_MGMT }, { note: 'even though no root role object exists' }),
    ctl('test-user', ['user', 'delete', 'root'], { error: DENIED }, { note: 'the admin gate runs first' }),
    ctl('test-user', ['role', 'delete', 'root'], { error: DENIED }),
    ctl(undefined, ['user', 'delete', 'root'], { error: USER_EMPTY }),
    ctl('root', ['user', 'grant-role', 'test-user', 'root'], { out: 'Role root is granted to user test-user' }, { note: 'root role needs no object' }),
    ctl('test-user', ['user', 'list'], { out: 'root\ntest-user' }, { note: 'test-user is an admin now' }),
    ctl('test-user', ['put', 'anything', 'v'], { out: 'OK' }),
    ctl('root', ['user', 'revoke-role', 'test-user', 'root'], { out: 'Role root is revoked from user test-user' }),
    ctl('test-user', ['user', 'list'], { error: DENIED }),
    ctl('root', ['user', 'get', 'root'], { out: 'User: root\nRoles: root' }),
    ctl('root', ['auth', 'disable'], { out: 'Authentication Disabled' }),
    ctl(undefined, ['user', 'revoke-role', 'root', 'root'], { out: 'Role root is revoked from user root' }, { note: 'no protection while disabled' }),
    ctl(undefined, ['auth', 'enable'], { out: 'Authentication Enabled' }, { note: 'etcdctl re-adds the role and retries' }),
    ctl('root', ['role', 'list'], { out: 'root\ntest-role' }),
    ctl('root', ['role', 'delete', 'root'], { error: INVALID_MGMT }),
  ],
};

/** What a non-root user may and may not do (§2.0 admin gate, UserGet/RoleGet self rules; rows 30, 50–52). */
export const nonRootAdminOps: Scenario = {
  name: 'admin operations by a non-root user',
  spec: '§2.0 admin gate, §2.1 UserGet/RoleGet; rows 30, 50, 51, 52',
  setup: { roles: [TEST_ROLE, { name: 'other-role' }], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('test-user', ['user', 'add', 'x', '--new-user-password=x'], { error: DENIED }),
    ctl('test-user', ['user', 'add', '', '--new-user-password=x'], { error: DENIED }, { note: 'gate before validation' }),
    ctl('test-user', ['role', 'add', 'x'], { error: DENIED }),
    ctl('test-user', ['user', 'list'], { error: DENIED }),
    ctl('test-user', ['role', 'list'], { error: DENIED }),
    ctl('test-user', ['auth', 'disable'], { error: DENIED }),
    ctl('test-user', ['auth', 'enable'], { error: DENIED }, { note: 'already enabled, but the gate runs first' }),
    ctl('test-user', ['role', 'grant-permission', 'test-role', 'readwrite', 'bar'], { error: DENIED }),
    ctl('test-user', ['role', 'revoke-permission', 'test-role', 'foo'], { error: DENIED }),
    ctl('test-user', ['user', 'grant-role', 'test-user', 'other-role'], { error: DENIED }),
    ctl('test-user', ['user', 'passwd', 'test-user', '--interactive=false'], { error: DENIED }, { stdin: 'new\n' }),
    ctl('test-user', ['user', 'get', 'test-user'], { out: 'User: test-user\nRoles: test-role' }),
    ctl('test-user', ['user', 'get', 'root'], { error: DENIED }),
    ctl('test-user', ['user', 'get', 'nobody'], { error: DENIED }),
    ctl('test-user', ['role', 'get', 'test-role'], { out: 'Role test-role\nKV Read:\n\tfoo\nKV Write:\n\tfoo' }),
    ctl('test-user', ['role', 'get', 'other-role'], { error: DENIED }),
    ctl('test-user', ['role', 'get', 'root'], { error: DENIED }),
    ctl(undefined, ['user', 'get', ''], { error: 'etcdserver: user name not found' }, { note: 'anonymous "" equals the empty caller name' }),
    ctl(undefined, ['user', 'get', 'test-user'], { error: USER_EMPTY }),
    ctl('root', ['role', 'list'], { out: 'other-role\ntest-role' }, { note: 'a virtual root role is not listed' }),
    ctl('root', ['role', 'get', 'root'], { error: 'etcdserver: role name not found' }),
  ],
};
