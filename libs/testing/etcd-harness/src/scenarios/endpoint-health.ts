import type { Scenario } from '../scenario';
import { TEST_PASSWORDS, TEST_ROLE, TEST_USER, ctl } from './common';

/** etcdctl 3.4 prints the verdict on stderr. */
const HEALTHY = { exit: 0, errIncludes: ['<endpoint> is healthy: successfully committed proposal: took = <duration>'] } as const;

/**
 * `etcdctl endpoint health` as a user who may not read `health` (row 82): the probe's Get is denied,
 * and etcdctl counts `permission denied` as proof that the request went through consensus, so the
 * member must still be reported healthy; and again once the user may read the key.
 */
export const endpointHealth: Scenario = {
  name: 'endpoint health as a user',
  spec: 'row 82; §3.5 Range',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  passwords: TEST_PASSWORDS,
  steps: [
    ctl('test-user', ['endpoint', 'health'], HEALTHY, { note: 'the health key is outside the grant' }),
    ctl('root', ['role', 'grant-permission', 'test-role', 'read', 'health'], { out: 'Role test-role updated' }),
    ctl('test-user', ['endpoint', 'health'], HEALTHY),
    ctl('root', ['endpoint', 'health'], HEALTHY),
  ],
};
