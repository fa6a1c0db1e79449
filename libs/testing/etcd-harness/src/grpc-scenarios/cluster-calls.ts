import type { GrpcScenario } from '../grpc-scenario';
import { TEST_ROLE, TEST_USER } from '../scenarios/common';

const b = (text: string): Buffer => Buffer.from(text, 'utf8');
const DENIED = { code: 7, details: 'etcdserver: permission denied' } as const;
const OK = { ok: true } as const;

/**
 * Cluster and maintenance reads by an ordinary user, and the key etcdctl's `endpoint health` probes:
 * its health check reads `health` and counts `permission denied` as a working consensus path, so
 * the denial must be exactly etcd's (code 7, etcd's text) for etcdctl to report a healthy member.
 */
export const clusterCalls: GrpcScenario = {
  name: 'cluster and maintenance calls by a user',
  spec: '§3.5 Status/MemberList/Alarm rows; rows 63, 65 (alarm list), 67, 82',
  setup: { roles: [TEST_ROLE], users: [TEST_USER] },
  steps: [
    { label: 'authenticate test-user', service: 'Auth', method: 'Authenticate', request: { name: 'test-user', password: 'pass' }, save: 'user', expect: OK },
    { label: 'row 63: MemberList as test-user', service: 'Cluster', method: 'MemberList', request: {}, token: 'user', outcomeOnly: true, expect: OK },
    { label: 'row 63: MemberList as root', service: 'Cluster', method: 'MemberList', request: {}, token: 'root', outcomeOnly: true, expect: OK },
    { label: 'row 67: Status as test-user', service: 'Maintenance', method: 'Status', request: {}, token: 'user', outcomeOnly: true, expect: OK },
    { label: 'row 67: Status as root', service: 'Maintenance', method: 'Status', request: {}, token: 'root', outcomeOnly: true, expect: OK },
    { label: 'row 65: Alarm GET as test-user', service: 'Maintenance', method: 'Alarm', request: { action: 'GET' }, token: 'user', expect: { ok: true, response: { alarms: [] } } },
    { label: 'row 82: the health key without a grant', service: 'KV', method: 'Range', request: { key: b('health') }, token: 'user', expect: DENIED },
    { label: 'row 82: grant health to the role', service: 'Auth', method: 'RoleGrantPermission', request: { name: 'test-role', perm: { permType: 'Read', key: b('health'), range_end: b('') } }, token: 'root', expect: OK },
    { label: 'row 82: the health key with the grant', service: 'KV', method: 'Range', request: { key: b('health') }, token: 'user', expect: { ok: true, response: { count: '0' } } },
  ],
};
