import type { Scenario } from '../scenario';
import { AUTH_FAILED, USER_EMPTY, ctl } from './common';

/**
 * `auth enable` and what it changes (spec §2.1 AuthEnable/AuthDisable, §8.4: etcdctl recovers from
 * "root user does not have root role" by adding the role and granting it, then retries).
 */
export const authEnable: Scenario = {
  name: 'auth enable and disable',
  spec: '§2.1 AuthEnable/AuthDisable, §8.3, §8.4; rows 21, 38, 69',
  steps: [
    ctl(undefined, ['auth', 'enable'], { error: 'etcdserver: root user does not exist' }),
    ctl(undefined, ['put', 'foo', 'bar'], { out: 'OK' }, { note: 'auth disabled: anonymous writes' }),
    ctl(undefined, ['user', 'add', 'root', '--new-user-password=root-pw-0'], { out: 'User root created' }),
    ctl(undefined, ['auth', 'enable'], { out: 'Authentication Enabled' }, { note: 'etcdctl adds the root role and retries' }),
    ctl('root', ['role', 'list'], { out: 'root' }),
    ctl('root', ['user', 'get', 'root'], { out: 'User: root\nRoles: root' }),
    ctl('root', ['auth', 'enable'], { out: 'Authentication Enabled' }, { note: 'already enabled: no-op' }),
    ctl(undefined, ['put', 'foo', 'bar'], { error: USER_EMPTY }),
    ctl(undefined, ['get', 'foo'], { error: USER_EMPTY }),
    ctl(undefined, ['del', 'foo'], { error: USER_EMPTY }),
    ctl(undefined, ['user', 'list'], { error: USER_EMPTY }),
    ctl('root', ['put', 'foo', 'baz'], { out: 'OK' }),
    ctl('root', ['get', 'foo', '-w', 'json'], { outIncludes: ['"kvs":[{"key":"Zm9v","create_revision":"base+1","mod_revision":"base+2","version":2,"value":"YmF6"}],"count":1'] }),
    ctl('root', ['put', 'foo', 'x'], { error: AUTH_FAILED }, { password: 'wrong' }),
    ctl('nobody', ['put', 'foo', 'x'], { error: AUTH_FAILED }, { password: 'x' }),
    ctl('root', ['auth', 'disable'], { out: 'Authentication Disabled' }),
    ctl(undefined, ['get', 'foo'], { out: 'foo\nbaz' }),
    ctl(undefined, ['auth', 'disable'], { out: 'Authentication Disabled' }, { note: 'already disabled: no-op' }),
    ctl(undefined, ['user', 'list'], { out: 'root' }, { note: 'auth disabled: management open to anyone' }),
    ctl(undefined, ['auth', 'enable'], { out: 'Authentication Enabled' }),
    ctl(undefined, ['get', 'foo'], { error: USER_EMPTY }),
  ],
};
