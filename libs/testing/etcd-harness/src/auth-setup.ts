import type { EtcdGrpcClient, GrpcOutcome } from './grpc-client';

/** Root's password in every scripted session (tests only). */
export const ROOT_PASSWORD = 'root-pw-0';

const AUTH_NOT_ENABLED = 'etcdserver: authentication is not enabled';

function expectOk<T>(what: string, outcome: GrpcOutcome<T>): T {
  if (!outcome.ok) throw new Error(`${what} failed: code ${outcome.code} ${outcome.details}`);
  return outcome.response;
}

/**
 * Returns a root token when auth is enabled, or undefined when it is disabled (Authenticate then
 * answers `authentication is not enabled`).
 */
export async function rootTokenIfEnabled(client: EtcdGrpcClient, rootPassword = ROOT_PASSWORD): Promise<string | undefined> {
  const outcome = await client.call<{ token: string }>('Auth', 'Authenticate', { name: 'root', password: rootPassword });
  if (outcome.ok) return outcome.response.token;
  if (outcome.details === AUTH_NOT_ENABLED) return undefined;
  throw new Error(`root Authenticate failed: code ${outcome.code} ${outcome.details}`);
}

/**
 * Brings a target back to "fresh": auth disabled, no leases, no users, no roles, no keys. Uses only the
 * public API, so it works the same against etcd and ward. Returns the KV revision afterwards.
 */
export async function resetTarget(client: EtcdGrpcClient, rootPassword = ROOT_PASSWORD): Promise<number> {
  const token = await rootTokenIfEnabled(client, rootPassword);
  if (token !== undefined) expectOk('AuthDisable', await client.call('Auth', 'AuthDisable', {}, { token }));
  const leases = expectOk('LeaseLeases', await client.call<{ leases: Array<{ ID: string }> }>('Lease', 'LeaseLeases', {}));
  for (const lease of leases.leases) await client.call('Lease', 'LeaseRevoke', { ID: lease.ID });
  const users = expectOk('UserList', await client.call<{ users: string[] }>('Auth', 'UserList', {}));
  for (const name of users.users) expectOk(`UserDelete ${name}`, await client.call('Auth', 'UserDelete', { name }));
  const roles = expectOk('RoleList', await client.call<{ roles: string[] }>('Auth', 'RoleList', {}));
  for (const role of roles.roles) expectOk(`RoleDelete ${role}`, await client.call('Auth', 'RoleDelete', { role }));
  const all = { key: Buffer.from([0]), range_end: Buffer.from([0]) };
  expectOk('DeleteRange all', await client.call('KV', 'DeleteRange', all));
  return currentRevision(client);
}

/** The current KV revision (a Range's header; works while auth is disabled, or with a token). */
export async function currentRevision(client: EtcdGrpcClient, token?: string): Promise<number> {
  const range = expectOk(
    'Range',
    await client.call<{ header: { revision: string } }>('KV', 'Range', { key: Buffer.from('ward-baseline') }, { token }),
  );
  return Number(range.header.revision);
}

/** The etcd3 package's protos spell etcd's permission types in PascalCase. */
export const PROTO_PERM_TYPE = { READ: 'Read', WRITE: 'Write', READWRITE: 'Readwrite' } as const;

export interface UserSpec {
  readonly name: string;
  readonly password: string;
  readonly roles?: readonly string[];
}

/** A lease granted with a fixed ID before the steps (etcdctl cannot choose IDs; steps can name it). */
export interface LeaseSpec {
  /** Decimal int64. */
  readonly id: string;
  readonly ttlSeconds: number;
}

export interface RoleSpec {
  readonly name: string;
  readonly permissions?: readonly {
    readonly permType: 'READ' | 'WRITE' | 'READWRITE';
    readonly key: string | Buffer;
    readonly rangeEnd?: string | Buffer;
  }[];
}

/**
 * The usual starting point of etcd's own auth tests: `root` (with the root role), the given roles
 * and users, then `AuthEnable`. Call on a reset target. Returns a root token.
 */
/** RoleGrantPermission calls in flight at once while setting up a role. */
const GRANT_CONCURRENCY = 32;

export async function setupAuth(
  client: EtcdGrpcClient,
  setup: { roles?: readonly RoleSpec[]; users?: readonly UserSpec[]; leases?: readonly LeaseSpec[]; rootPassword?: string; enable?: boolean },
): Promise<string | undefined> {
  const rootPassword = setup.rootPassword ?? ROOT_PASSWORD;
  expectOk('UserAdd root', await client.call('Auth', 'UserAdd', { name: 'root', password: rootPassword, options: {} }));
  expectOk('UserGrantRole root', await client.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' }));
  for (const role of setup.roles ?? []) {
    expectOk(`RoleAdd ${role.name}`, await client.call('Auth', 'RoleAdd', { name: role.name }));
    // Grants of one role are independent of each other: a few at a time (roles with thousands).
    const permissions = role.permissions ?? [];
    for (let start = 0; start < permissions.length; start += GRANT_CONCURRENCY) {
      const outcomes = await Promise.all(
        permissions.slice(start, start + GRANT_CONCURRENCY).map((perm) =>
          client.call('Auth', 'RoleGrantPermission', {
            name: role.name,
            perm: { permType: PROTO_PERM_TYPE[perm.permType], key: Buffer.from(perm.key), range_end: Buffer.from(perm.rangeEnd ?? '') },
          }),
        ),
      );
      for (const outcome of outcomes) expectOk(`RoleGrantPermission ${role.name}`, outcome);
    }
  }
  for (const user of setup.users ?? []) {
    expectOk(`UserAdd ${user.name}`, await client.call('Auth', 'UserAdd', { name: user.name, password: user.password, options: {} }));
    for (const role of user.roles ?? []) {
      expectOk(`UserGrantRole ${user.name}`, await client.call('Auth', 'UserGrantRole', { user: user.name, role }));
    }
  }
  for (const lease of setup.leases ?? []) {
    expectOk(`LeaseGrant ${lease.id}`, await client.call('Lease', 'LeaseGrant', { ID: lease.id, TTL: String(lease.ttlSeconds) }));
  }
  if (setup.enable === false) return undefined;
  expectOk('AuthEnable', await client.call('Auth', 'AuthEnable', {}));
  return client.authenticate('root', rootPassword);
}
