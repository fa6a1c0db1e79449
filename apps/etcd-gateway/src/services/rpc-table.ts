// Every unary etcd RPC the gateway answers, once: the gRPC services and the JSON gateway are both
// built from this table, so they cannot drift apart.
import type { EtcdServiceName } from '@ward/etcd/proto';
import type { Credentials } from '../requests/request-executor';
import type { AuthApi } from './auth-api';
import type { ClusterApi } from './cluster-api';
import type { KvApi } from './kv-api';
import type { LeaseApi } from './lease-api';
import type { MaintenanceApi } from './maintenance-api';
import type { Cancellation } from '@ward/platform/grpc-server';

/** One unary RPC: where it lives and what answers it (encoded response bytes or an object). */
export interface UnaryRpc {
  readonly service: EtcdServiceName;
  readonly method: string;
  /** etcd's JSON gateway path, when the gateway serves it over HTTP too. */
  readonly httpPath: string | undefined;
  /**
   * A streaming RPC served over HTTP one message at a time (grpc-gateway answers each as
   * `{"result": ...}`); on gRPC it has its own stream handler, so it is not registered as unary.
   */
  readonly httpStream: boolean;
  // The request is the message grpc-js decoded for this method.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly call: (request: any, credentials: Credentials, signal?: Cancellation) => Promise<Buffer | object>;
}

export interface EtcdApis {
  readonly kv: KvApi;
  readonly auth: AuthApi;
  readonly maintenance: MaintenanceApi;
  readonly cluster: ClusterApi;
  readonly lease: LeaseApi;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Call = (request: any, credentials: Credentials, signal?: Cancellation) => Promise<Buffer | object>;

function rpc(service: EtcdServiceName, method: string, httpPath: string | undefined, call: Call, httpStream = false): UnaryRpc {
  return Object.freeze({ service, method, httpPath, call, httpStream });
}

function kvRpcs(kv: KvApi): UnaryRpc[] {
  return [
    rpc('KV', 'Range', '/v3/kv/range', (r, c, s) => kv.range(r, c, s)),
    rpc('KV', 'Put', '/v3/kv/put', (r, c, s) => kv.put(r, c, s)),
    rpc('KV', 'DeleteRange', '/v3/kv/deleterange', (r, c, s) => kv.deleteRange(r, c, s)),
    rpc('KV', 'Txn', '/v3/kv/txn', (r, c, s) => kv.txn(r, c, s)),
    rpc('KV', 'Compact', '/v3/kv/compaction', (r, c, s) => kv.compact(r, c, s)),
  ];
}

function authRpcs(auth: AuthApi): UnaryRpc[] {
  return [
    rpc('Auth', 'AuthEnable', '/v3/auth/enable', (r, c, s) => auth.authEnable(r, c, s)),
    rpc('Auth', 'AuthDisable', '/v3/auth/disable', (r, c, s) => auth.authDisable(r, c, s)),
    rpc('Auth', 'AuthStatus', '/v3/auth/status', (r, c, s) => auth.authStatus(r, c, s)),
    rpc('Auth', 'Authenticate', '/v3/auth/authenticate', (r, c, s) => auth.authenticate(r, c, s)),
    rpc('Auth', 'UserAdd', '/v3/auth/user/add', (r, c, s) => auth.userAdd(r, c, s)),
    rpc('Auth', 'UserGet', '/v3/auth/user/get', (r, c, s) => auth.userGet(r, c, s)),
    rpc('Auth', 'UserList', '/v3/auth/user/list', (r, c, s) => auth.userList(r, c, s)),
    rpc('Auth', 'UserDelete', '/v3/auth/user/delete', (r, c, s) => auth.userDelete(r, c, s)),
    rpc('Auth', 'UserChangePassword', '/v3/auth/user/changepw', (r, c, s) => auth.userChangePassword(r, c, s)),
    rpc('Auth', 'UserGrantRole', '/v3/auth/user/grant', (r, c, s) => auth.userGrantRole(r, c, s)),
    rpc('Auth', 'UserRevokeRole', '/v3/auth/user/revoke', (r, c, s) => auth.userRevokeRole(r, c, s)),
    rpc('Auth', 'RoleAdd', '/v3/auth/role/add', (r, c, s) => auth.roleAdd(r, c, s)),
    rpc('Auth', 'RoleGet', '/v3/auth/role/get', (r, c, s) => auth.roleGet(r, c, s)),
    rpc('Auth', 'RoleList', '/v3/auth/role/list', (r, c, s) => auth.roleList(r, c, s)),
    rpc('Auth', 'RoleDelete', '/v3/auth/role/delete', (r, c, s) => auth.roleDelete(r, c, s)),
    rpc('Auth', 'RoleGrantPermission', '/v3/auth/role/grant', (r, c, s) => auth.roleGrantPermission(r, c, s)),
    rpc('Auth', 'RoleRevokePermission', '/v3/auth/role/revoke', (r, c, s) => auth.roleRevokePermission(r, c, s)),
  ];
}

function maintenanceRpcs(maintenance: MaintenanceApi): UnaryRpc[] {
  return [
    rpc('Maintenance', 'Status', '/v3/maintenance/status', (r, c, s) => maintenance.status(r, c, s)),
    rpc('Maintenance', 'Alarm', '/v3/maintenance/alarm', (r, c, s) => maintenance.alarm(r, c, s)),
    rpc('Maintenance', 'Defragment', '/v3/maintenance/defragment', (r, c, s) => maintenance.defragment(r, c, s)),
    rpc('Maintenance', 'Hash', undefined, (r, c, s) => maintenance.hash(r, c, s)),
    rpc('Maintenance', 'HashKV', '/v3/maintenance/hash', (r, c, s) => maintenance.hashKV(r, c, s)),
    rpc('Maintenance', 'MoveLeader', '/v3/maintenance/transfer-leadership', (r, c, s) => maintenance.moveLeader(r, c, s)),
    rpc('Maintenance', 'Downgrade', '/v3/maintenance/downgrade', (r, c, s) => maintenance.downgrade(r, c, s)),
  ];
}

function clusterRpcs(cluster: ClusterApi): UnaryRpc[] {
  return [
    rpc('Cluster', 'MemberList', '/v3/cluster/member/list', (r, c, s) => cluster.memberList(r, c, s)),
    rpc('Cluster', 'MemberAdd', '/v3/cluster/member/add', (r, c, s) => cluster.memberAdd(r, c, s)),
    rpc('Cluster', 'MemberRemove', '/v3/cluster/member/remove', (r, c, s) => cluster.memberRemove(r, c, s)),
    rpc('Cluster', 'MemberUpdate', '/v3/cluster/member/update', (r, c, s) => cluster.memberUpdate(r, c, s)),
    rpc('Cluster', 'MemberPromote', '/v3/cluster/member/promote', (r, c, s) => cluster.memberPromote(r, c, s)),
  ];
}

function leaseRpcs(lease: LeaseApi): UnaryRpc[] {
  return [
    rpc('Lease', 'LeaseGrant', '/v3/lease/grant', (r, c, s) => lease.grant(r, c, s)),
    rpc('Lease', 'LeaseRevoke', '/v3/lease/revoke', (r, c, s) => lease.revoke(r, c, s)),
    rpc('Lease', 'LeaseTimeToLive', '/v3/lease/timetolive', (r, c, s) => lease.timeToLive(r, c, s)),
    rpc('Lease', 'LeaseLeases', '/v3/lease/leases', (r, c, s) => lease.leases(r, c, s)),
    rpc('Lease', 'LeaseKeepAlive', '/v3/lease/keepalive', (r, c, s) => lease.keepAlive(r, c, s), true),
  ];
}

/** The table (frozen). */
export function unaryRpcs(apis: EtcdApis): readonly UnaryRpc[] {
  return Object.freeze([
    ...kvRpcs(apis.kv),
    ...authRpcs(apis.auth),
    ...maintenanceRpcs(apis.maintenance),
    ...clusterRpcs(apis.cluster),
    ...leaseRpcs(apis.lease),
  ]);
}
