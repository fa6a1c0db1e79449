import type { Scenario } from '../scenario';
import { DENIED, ctl } from './common';

/** READ-only and WRITE-only grants (rows 32, 34; §3.5 Put/DeleteRange with prev_kv need READ). */
export const readWriteOnly: Scenario = {
  name: 'read-only and write-only users',
  spec: '§3.5; rows 32, 34',
  setup: {
    roles: [
      { name: 'ro', permissions: [{ permType: 'READ', key: 'foo' }] },
      { name: 'wo', permissions: [{ permType: 'WRITE', key: 'foo' }] },
    ],
    users: [
      { name: 'reader', password: 'r-pass', roles: ['ro'] },
      { name: 'writer', password: 'w-pass', roles: ['wo'] },
    ],
  },
  passwords: { reader: 'r-pass', writer: 'w-pass' },
  steps: [
    ctl('root', ['put', 'foo', 'v1'], { out: 'OK' }),
    ctl('reader', ['get', 'foo'], { out: 'foo\nv1' }),
    ctl('reader', ['put', 'foo', 'x'], { error: DENIED }),
    ctl('reader', ['del', 'foo'], { error: DENIED }),
    ctl('writer', ['put', 'foo', 'v2'], { out: 'OK' }),
    ctl('writer', ['get', 'foo'], { error: DENIED }),
    ctl('writer', ['put', 'foo', 'v3', '--prev-kv'], { error: DENIED }, { note: 'prev_kv needs READ' }),
    ctl('writer', ['del', 'foo', '--prev-kv'], { error: DENIED }, { note: 'prev_kv needs READ' }),
    ctl('reader', ['get', 'foo', '--print-value-only'], { out: 'v2' }),
    ctl('writer', ['del', 'foo'], { out: '1' }),
    ctl('reader', ['get', 'foo'], { out: '' }),
    ctl('root', ['role', 'grant-permission', 'wo', 'read', 'foo'], { out: 'Role wo updated' }),
    ctl('writer', ['get', 'foo'], { out: '' }, { note: 'type replaced: WRITE became READ' }),
    ctl('writer', ['put', 'foo', 'x'], { error: DENIED }),
    ctl('root', ['role', 'grant-permission', 'wo', 'readwrite', 'foo'], { out: 'Role wo updated' }),
    ctl('writer', ['put', 'foo', 'v4', '--prev-kv'], { out: 'OK' }),
  ],
};
