import type { Scenario } from '../scenario';
import { TEST_PASSWORDS, TEST_USER, ctl } from './common';

const CANCELED_DENIED = 'watch was canceled (rpc error: code = PermissionDenied desc = etcdserver: permission denied)';
const CANCELED_EMPTY = 'watch was canceled (rpc error: code = InvalidArgument desc = etcdserver: user name is empty)';
const WATCH_CANCELED = 'watch is canceled by the server';

/** Watch with and without permission (row 78, 77; §3.5 watch create). */
export const watchPermissions: Scenario = {
  name: 'watch with and without permission',
  spec: '§3.5 watch create, §8.3 cancel reason; rows 77, 78',
  setup: {
    roles: [{ name: 'test-role', permissions: [{ permType: 'READWRITE', key: 'key', rangeEnd: 'key4' }] }],
    users: [TEST_USER],
  },
  passwords: TEST_PASSWORDS,
  steps: [
    { watchStart: 'single', ctl: ['watch', 'key'], as: 'test-user' },
    { watchStart: 'range', ctl: ['watch', 'key', 'key3'], as: 'test-user' },
    { watchStart: 'outside', ctl: ['watch', 'key5'], as: 'test-user' },
    { watchStart: 'too-wide', ctl: ['watch', 'key', 'key6'], as: 'test-user' },
    { watchStart: 'prefix', ctl: ['watch', 'key', '--prefix'], as: 'test-user' },
    { watchStart: 'anonymous', ctl: ['watch', 'key'] },
    ctl('test-user', ['put', 'key', 'v1'], { out: 'OK' }),
    ctl('root', ['put', 'key2', 'v2'], { out: 'OK' }),
    ctl('root', ['put', 'key5', 'v5'], { out: 'OK' }),
    { watchEnd: 'single', waitFor: 'v1', expect: { out: 'PUT\nkey\nv1' } },
    { watchEnd: 'range', waitFor: 'v2', expect: { out: 'PUT\nkey\nv1\nPUT\nkey2\nv2' } },
    { watchEnd: 'outside', expect: { out: '', errIncludes: [CANCELED_DENIED], error: WATCH_CANCELED, exit: 5 } },
    { watchEnd: 'too-wide', expect: { out: '', errIncludes: [CANCELED_DENIED], error: WATCH_CANCELED, exit: 5 } },
    { watchEnd: 'prefix', expect: { out: '', errIncludes: [CANCELED_DENIED], error: WATCH_CANCELED, exit: 5 }, note: 'prefix key* is wider than [key, key4)' },
    { watchEnd: 'anonymous', expect: { out: '', errIncludes: [CANCELED_EMPTY], error: WATCH_CANCELED, exit: 5 } },
    { watchStart: 'survivor', ctl: ['watch', 'key'], as: 'test-user' },
    ctl('root', ['user', 'revoke-role', 'test-user', 'test-role'], { out: 'Role test-role is revoked from user test-user' }),
    ctl('root', ['put', 'key', 'after-revoke'], { out: 'OK' }),
    { watchEnd: 'survivor', waitFor: 'after-revoke', expect: { out: 'PUT\nkey\nafter-revoke' }, note: 'no re-check after creation' },
    { watchStart: 'revoked', ctl: ['watch', 'key'], as: 'test-user' },
    { watchEnd: 'revoked', expect: { out: '', errIncludes: [CANCELED_DENIED], error: WATCH_CANCELED, exit: 5 } },
  ],
};
