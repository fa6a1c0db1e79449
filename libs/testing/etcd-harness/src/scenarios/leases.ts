import type { Scenario } from '../scenario';
import { TEST_PASSWORDS, TEST_ROLE, TEST_USER } from './common';

const NOT_FOUND = 'etcdserver: requested lease not found';

/**
 * etcdctl's lease commands with auth on, as root and as a user with READWRITE on foo: a lease with
 * a known ID (1000 = 0x3e8, granted in setup) carries foo, is listed, kept alive, inspected and
 * revoked; then the not-found answers, and `lease grant` (server-chosen IDs, normalised) with a TTL
 * below the minimum raised to 2 s. Checklist rows 57–60.
 */
export const leaseCommands: Scenario = {
  name: 'etcdctl lease commands',
  spec: '§3.5 Lease rows; checklist rows 57–60',
  setup: { roles: [TEST_ROLE], users: [TEST_USER], leases: [{ id: '1000', ttlSeconds: 60 }] },
  passwords: TEST_PASSWORDS,
  steps: [
    { ctl: ['put', '--lease=3e8', 'foo', 'v'], as: 'test-user', expect: { out: 'OK' } },
    { ctl: ['lease', 'timetolive', '--keys', '3e8'], as: 'test-user', expect: { out: 'lease 00000000000003e8 granted with TTL(60s), remaining(<s>), attached keys([foo])' } },
    { ctl: ['lease', 'list'], as: 'root', expect: { out: 'found 1 leases\n00000000000003e8' } },
    { ctl: ['lease', 'keep-alive', '--once', '3e8'], as: 'test-user', expect: { out: 'lease 00000000000003e8 keepalived with TTL(60)' } },
    { ctl: ['lease', 'timetolive', '4242'], as: 'root', expect: { out: 'lease 0000000000004242 already expired' } },
    { ctl: ['lease', 'revoke', '3e8'], as: 'test-user', expect: { out: 'lease 00000000000003e8 revoked' } },
    { ctl: ['get', 'foo'], as: 'test-user', expect: { out: '' } },
    { ctl: ['lease', 'keep-alive', '--once', '3e8'], as: 'root', expect: { error: NOT_FOUND } },
    { ctl: ['lease', 'revoke', '3e8'], as: 'root', expect: { error: `failed to revoke lease (${NOT_FOUND})` } },
    { ctl: ['put', '--lease=3e8', 'foo', 'v'], as: 'test-user', expect: { error: NOT_FOUND } },
    { ctl: ['lease', 'grant', '10'], as: 'test-user', expect: { out: 'lease <id> granted with TTL(10s)' } },
    { ctl: ['lease', 'grant', '1'], as: 'root', expect: { out: 'lease <id> granted with TTL(2s)' } },
  ],
};
