import type { Scenario } from '../scenario';
import { ctl } from './common';

/** User and role management through etcdctl as root (spec §2.1; checklist rows 3, 8, 9, 11, 12, 17–19, 48). */
export const userRoleManagement: Scenario = {
  name: 'user and role management',
  spec: '§2.1, §8.3 error strings; rows 3, 8, 9, 11, 12, 17, 18, 19, 48',
  setup: {},
  steps: [
    ctl('root', ['role', 'add', 'test-role'], { out: 'Role test-role created' }),
    ctl('root', ['role', 'add', 'test-role'], { error: 'etcdserver: role name already exists' }),
    ctl('root', ['role', 'add', ''], { error: 'etcdserver: role name is empty' }),
    ctl('root', ['user', 'add', 'test-user', '--new-user-password=pass'], { out: 'User test-user created' }),
    ctl('root', ['user', 'add', 'test-user', '--new-user-password=pass'], { error: 'etcdserver: user name already exists' }),
    // etcdctl 3.4.23 takes `user name is empty` for a lost token: it authenticates again and
    // retries, 100 rounds of Authenticate + UserAdd before it prints the error (about 21 s against
    // etcd 3.4.23 here; against docker compose each round's Authenticate goes through the BullMQ
    // tier, and on a loaded machine the rounds outlasted the default 30 s limit: etcdctl was
    // killed and printed nothing).
    ctl('root', ['user', 'add', '', '--new-user-password=x'], { error: 'etcdserver: user name is empty' }, { timeoutMs: 120_000 }),
    ctl('root', ['user', 'grant-role', 'nobody', 'no-role'], { error: 'etcdserver: user name not found' }, { note: 'user checked first' }),
    ctl('root', ['user', 'grant-role', 'test-user', 'no-role'], { error: 'etcdserver: role name not found' }),
    ...['role1', 'role2', 'abc', 'xyz', 'role3'].flatMap((role) => [
      ctl('root', ['role', 'add', role], { out: `Role ${role} created` }),
      ctl('root', ['user', 'grant-role', 'test-user', role], { out: `Role ${role} is granted to user test-user` }),
    ]),
    ctl('root', ['user', 'grant-role', 'test-user', 'abc'], { out: 'Role abc is granted to user test-user' }, { note: 'already granted: success' }),
    ctl('root', ['user', 'get', 'test-user', '-w', 'json'], { outIncludes: ['"roles":["abc","role1","role2","role3","xyz"]'] }),
    ctl('root', ['user', 'get', 'test-user'], { out: 'User: test-user\nRoles: abc role1 role2 role3 xyz' }),
    ctl('root', ['user', 'revoke-role', 'test-user', 'test-role'], { error: 'etcdserver: role is not granted to the user' }),
    ctl('root', ['user', 'revoke-role', 'test-user', 'xyz'], { out: 'Role xyz is revoked from user test-user' }),
    ctl('root', ['user', 'list'], { out: 'root\ntest-user' }),
    ctl('root', ['role', 'list'], { out: 'abc\nrole1\nrole2\nrole3\ntest-role\nxyz' }),
    ctl('root', ['role', 'delete', 'role2'], { out: 'Role role2 deleted' }),
    ctl('root', ['user', 'get', 'test-user', '-w', 'json'], { outIncludes: ['"roles":["abc","role1","role3"]'] }, { note: 'role delete cascades to users' }),
    ctl('root', ['role', 'delete', 'role2'], { error: 'etcdserver: role name not found' }),
    ctl('root', ['user', 'delete', 'nobody'], { error: 'etcdserver: user name not found' }),
    ctl('root', ['user', 'get', 'nobody'], { error: 'etcdserver: user name not found' }),
    ctl('root', ['role', 'get', 'nobody'], { error: 'etcdserver: role name not found' }),
    ctl('root', ['role', 'grant-permission', 'test-role', 'readwrite', 'foo'], { out: 'Role test-role updated' }),
    ctl('root', ['role', 'grant-permission', 'test-role', 'write', 'a', 'c'], { out: 'Role test-role updated' }),
    ctl('root', ['role', 'grant-permission', 'test-role', 'read', 'foo'], { out: 'Role test-role updated' }, { note: 're-grant replaces the type' }),
    ctl('root', ['role', 'get', 'test-role'], { out: 'Role test-role\nKV Read:\n\tfoo\nKV Write:\n\t[a, c)' }),
    ctl('root', ['role', 'get', 'test-role', '-w', 'json'], { outIncludes: ['"perm":[{"permType":1,"key":"YQ==","range_end":"Yw=="},{"key":"Zm9v"}]'] }),
    ctl('root', ['role', 'grant-permission', 'nobody', 'read', 'foo'], { error: 'etcdserver: role name not found' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', 'bar'], { error: 'etcdserver: permission is not granted to the role' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', 'a'], { error: 'etcdserver: permission is not granted to the role' }, { note: 'range_end must match exactly' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', 'a', 'c'], { out: 'Permission of range [a, c) is revoked from role test-role' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', 'foo'], { out: 'Permission of key foo is revoked from role test-role' }),
    ctl('root', ['role', 'revoke-permission', 'nobody', 'foo'], { error: 'etcdserver: role name not found' }),
    ctl('root', ['role', 'get', 'test-role'], { out: 'Role test-role\nKV Read:\nKV Write:' }),
    ctl('root', ['user', 'delete', 'test-user'], { out: 'User test-user deleted' }),
    ctl('root', ['user', 'list'], { out: 'root' }),
    ctl('root', ['user', 'get', 'root'], { out: 'User: root\nRoles: root' }),
  ],
};
