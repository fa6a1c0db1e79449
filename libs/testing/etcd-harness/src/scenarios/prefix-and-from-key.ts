import type { Scenario } from '../scenario';
import { DENIED, TEST_PASSWORDS, TEST_USER, ctl } from './common';

const EMPTY_ROLE = { name: 'test-role' };

/** Prefix grants through etcdctl's `--prefix` (row 46; §3.1 etcdctl mapping, §3.4 coverage). */
export const prefixGrant: Scenario = {
  name: 'prefix grant',
  spec: '§3.1, §3.4; row 46',
  setup: { roles: [EMPTY_ROLE], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('root', ['role', 'grant-permission', 'test-role', 'readwrite', '/prefix/', '--prefix'], { out: 'Role test-role updated' }),
    ctl('root', ['role', 'get', 'test-role'], {
      out: 'Role test-role\nKV Read:\n\t[/prefix/, /prefix0) (prefix /prefix/)\nKV Write:\n\t[/prefix/, /prefix0) (prefix /prefix/)',
    }),
    ...['0', '5', '9'].map((n) => ctl('test-user', ['put', `/prefix/${n}`, `v${n}`], { out: 'OK' })),
    ctl('test-user', ['put', '/prefix0', 'x'], { error: DENIED }),
    ctl('test-user', ['put', '/prefix', 'x'], { error: DENIED }),
    ctl('test-user', ['get', '/prefix/', '--prefix'], { out: '/prefix/0\nv0\n/prefix/5\nv5\n/prefix/9\nv9' }),
    ctl('test-user', ['get', '/prefix/', '/prefix/5'], { out: '/prefix/0\nv0' }),
    ctl('test-user', ['get', '/prefix/', '--prefix', '--limit=1', '-w', 'json'], { outIncludes: ['"more":true,"count":3'] }),
    ctl('test-user', ['get', '/pre', '--prefix'], { error: DENIED }),
    ctl('test-user', ['get', '/prefix/', '--from-key'], { error: DENIED }),
    ctl('test-user', ['del', '/prefix/', '--prefix'], { out: '3' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', '/prefix/', '--prefix'], {
      out: 'Permission of range [/prefix/, /prefix0) is revoked from role test-role',
    }),
    ctl('test-user', ['put', '/prefix/0', 'x'], { error: DENIED }),
  ],
};

/** From-key grants (`--from-key`, range_end "\0"; row 47). */
export const fromKeyGrant: Scenario = {
  name: 'from-key grant',
  spec: '§3.1, §3.3, §3.4; row 47',
  setup: { roles: [EMPTY_ROLE], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('root', ['role', 'grant-permission', 'test-role', 'readwrite', 'z', '--from-key'], { out: 'Role test-role updated' }),
    ctl('root', ['role', 'get', 'test-role'], { out: 'Role test-role\nKV Read:\n\t[z, <open ended>\nKV Write:\n\t[z, <open ended>' }),
    ...['z', 'z0', 'z9', 'zzzz'].map((key) => ctl('test-user', ['put', key, 'v'], { out: 'OK' })),
    ctl('test-user', ['put', 'x', 'v'], { error: DENIED }),
    ctl('test-user', ['get', 'z', '--from-key', '--keys-only'], { out: 'z\n\nz0\n\nz9\n\nzzzz\n' }),
    ctl('test-user', ['get', 'y', '--from-key'], { error: DENIED }),
    ctl('test-user', ['get', 'z0', 'z9'], { out: 'z0\nv' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', 'z', '--from-key'], {
      out: 'Permission of range [z, <open ended> is revoked from role test-role',
    }),
    ctl('test-user', ['put', 'z0', 'v'], { error: DENIED }),
    ctl('root', ['role', 'grant-permission', 'test-role', 'readwrite', '', '--from-key'], { out: 'Role test-role updated' }, { note: 'all keys' }),
    ctl('test-user', ['put', 'a', 'v'], { out: 'OK' }),
    ctl('test-user', ['put', 'x', 'v'], { out: 'OK' }),
    ctl('test-user', ['get', '', '--from-key', '--keys-only'], { out: 'a\n\nx\n\nz\n\nz0\n\nz9\n\nzzzz\n' }),
    ctl('root', ['role', 'revoke-permission', 'test-role', '', '--from-key'], { outIncludes: ['is revoked from role test-role'] }),
    ctl('test-user', ['put', 'a', 'v'], { error: DENIED }),
    ctl('test-user', ['get', '', '--from-key'], { error: DENIED }),
  ],
};

/** Range coverage by several grants: touching intervals, gaps, exclusive ends (rows 27–29, §3.4). */
export const rangeCoverage: Scenario = {
  name: 'range coverage by several grants',
  spec: '§3.4; rows 27, 28, 29',
  setup: {
    roles: [
      {
        name: 'test-role',
        permissions: [
          { permType: 'READ', key: 'a', rangeEnd: 'c' },
          { permType: 'READ', key: 'c', rangeEnd: 'f' },
          { permType: 'READ', key: 'x', rangeEnd: 'z' },
        ],
      },
    ],
    users: [TEST_USER],
  },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('test-user', ['get', 'a', 'f'], { out: '' }, { note: '[a,c)+[c,f) cover [a,f)' }),
    ctl('test-user', ['get', 'b', 'e'], { out: '' }),
    ctl('test-user', ['get', 'a', 'g'], { error: DENIED }),
    ctl('test-user', ['get', 'a', 'z'], { error: DENIED }, { note: 'gap [f,x)' }),
    ctl('test-user', ['get', 'f'], { error: DENIED }, { note: 'end exclusive' }),
    ctl('test-user', ['get', 'e'], { out: '' }),
    ctl('test-user', ['get', 'x', 'z'], { out: '' }),
    ctl('test-user', ['get', 'b', 'a'], { out: '' }, { note: 'inverted range inside a grant passes, returns nothing' }),
    ctl('test-user', ['get', 'a', '--prefix'], { out: '' }),
    ctl('test-user', ['get', 'x', '--from-key'], { error: DENIED }),
  ],
};
