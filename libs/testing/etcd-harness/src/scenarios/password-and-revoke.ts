import type { Scenario } from '../scenario';
import { AUTH_FAILED, DENIED, TEST_PASSWORDS, TEST_ROLE, TEST_USER, ctl } from './common';

/** Password change (row 7) and a no-password user (§5, §8.3). */
export const passwordChange: Scenario = {
  name: 'password change',
  spec: '§2.1 UserChangePassword, §5, §8.3 no-password user; rows 7, 23',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('test-user', ['put', 'foo', 'v1'], { out: 'OK' }),
    ctl('root', ['user', 'passwd', 'test-user', '--interactive=false'], { out: 'Password updated' }, { stdin: 'new-pass\n' }),
    ctl('test-user', ['put', 'foo', 'v2'], { error: AUTH_FAILED }, { note: 'the old password no longer works' }),
    ctl('test-user', ['put', 'foo', 'v3'], { out: 'OK' }, { password: 'new-pass' }),
    ctl('test-user', ['user', 'get', 'test-user'], { out: 'User: test-user\nRoles: test-role' }, { password: 'new-pass', note: 'roles kept' }),
    ctl('root', ['user', 'passwd', 'nobody', '--interactive=false'], { error: 'etcdserver: user name not found' }, { stdin: 'x\n' }),
    ctl('root', ['user', 'add', 'nopass', '--no-password'], { out: 'User nopass created' }),
    ctl('root', ['user', 'grant-role', 'nopass', 'test-role'], { out: 'Role test-role is granted to user nopass' }),
    ctl('nopass', ['get', 'foo'], { error: 'rpc error: code = Unknown desc = auth: authentication failed, password was given for no password user' }, { password: 'anything' }),
    ctl('root', ['user', 'get', 'nopass'], { out: 'User: nopass\nRoles: test-role' }),
    ctl('root', ['user', 'passwd', 'nopass', '--interactive=false'], { out: 'Password updated' }, { stdin: 'pw\n' }),
    ctl('nopass', ['get', 'foo'], { error: 'rpc error: code = Unknown desc = auth: authentication failed, password was given for no password user' }, { password: 'pw', note: 'still a no-password user' }),
  ],
};

/** Role revoke, permission revoke and user delete while a user keeps working (rows 41, 42, 43). */
export const roleRevokeDuringOps: Scenario = {
  name: 'role revoke during operations',
  spec: '§1.4, §3.4, §6; rows 41, 42, 43',
  setup: {
    roles: [TEST_ROLE, { name: 'test-role2', permissions: [{ permType: 'READWRITE', key: 'hoo' }] }],
    users: [{ ...TEST_USER, roles: ['test-role', 'test-role2'] }],
  },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('test-user', ['put', 'foo', 'v1'], { out: 'OK' }),
    ctl('test-user', ['put', 'hoo', 'v1'], { out: 'OK' }),
    ctl('root', ['user', 'revoke-role', 'test-user', 'test-role'], { out: 'Role test-role is revoked from user test-user' }),
    ctl('test-user', ['put', 'foo', 'v2'], { error: DENIED }),
    ctl('test-user', ['get', 'foo'], { error: DENIED }),
    ctl('test-user', ['put', 'hoo', 'v2'], { out: 'OK' }),
    ctl('root', ['role', 'revoke-permission', 'test-role2', 'hoo'], { out: 'Permission of key hoo is revoked from role test-role2' }),
    ctl('test-user', ['put', 'hoo', 'v3'], { error: DENIED }),
    ctl('root', ['role', 'grant-permission', 'test-role2', 'readwrite', 'hoo'], { out: 'Role test-role2 updated' }),
    ctl('test-user', ['put', 'hoo', 'v4'], { out: 'OK' }),
    ctl('root', ['role', 'delete', 'test-role2'], { out: 'Role test-role2 deleted' }),
    ctl('test-user', ['put', 'hoo', 'v5'], { error: DENIED }),
    ctl('root', ['user', 'get', 'test-user'], { out: 'User: test-user\nRoles:' }),
    ctl('root', ['user', 'grant-role', 'test-user', 'test-role'], { out: 'Role test-role is granted to user test-user' }),
    ctl('test-user', ['put', 'foo', 'v6'], { out: 'OK' }),
    ctl('root', ['user', 'delete', 'test-user'], { out: 'User test-user deleted' }),
    ctl('test-user', ['put', 'foo', 'v7'], { error: 'etcdserver: authentication failed, invalid user ID or password' }),
    ctl('root', ['get', 'foo', '--print-value-only'], { out: 'v6' }),
  ],
};
