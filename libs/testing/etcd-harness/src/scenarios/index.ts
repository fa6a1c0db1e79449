import type { Scenario } from '../scenario';
import { invalidAuthManagement, nonRootAdminOps } from './admin-gate';
import { authEnable } from './auth-enable';
import { endpointHealth } from './endpoint-health';
import { kvWithUser } from './kv-with-user';
import { leaseCommands } from './leases';
import { passwordChange, roleRevokeDuringOps } from './password-and-revoke';
import { fromKeyGrant, prefixGrant, rangeCoverage } from './prefix-and-from-key';
import { readWriteOnly } from './read-write-only';
import { userRoleManagement } from './user-role-management';
import { watchPermissions } from './watch-permissions';

/**
 * Every etcdctl scenario whose behaviour Debian's etcd 3.4.23 shares with the target (spec §8.3):
 * each must meet its scripted expectations on real etcd AND give an equal transcript on ward.
 */
export const EQUAL_SCENARIOS: readonly Scenario[] = [
  userRoleManagement,
  authEnable,
  kvWithUser,
  readWriteOnly,
  prefixGrant,
  fromKeyGrant,
  rangeCoverage,
  invalidAuthManagement,
  nonRootAdminOps,
  passwordChange,
  roleRevokeDuringOps,
  watchPermissions,
  endpointHealth,
  leaseCommands,
];
