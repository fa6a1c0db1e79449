// Integration-test fixture: real raft-node processes (@ward/testing/cluster) and in-process
// gateways in front of them, plus etcd clients and the auth setup most scenarios start from.
import { Writable } from 'node:stream';
import { LocalCluster, buildRaftNodeBundle } from '@ward/testing/cluster';
import { createLogger } from '@ward/platform/logging';
import { createGateway, gatewayConfig, type Gateway, type GatewayConfig, type GatewayDeps } from '../../src/index';
import { etcdTestClient, must, type EtcdTestClient } from '../../src/testing/etcd-client';

export { login, must } from '../../src/testing/etcd-client';

export interface WardCluster {
  readonly cluster: LocalCluster;
  readonly gateways: Gateway[];
  /** Every line the gateways logged. */
  readonly logLines: string[];
  /** One more gateway in front of the same members. */
  addGateway(overrides?: Partial<GatewayConfig>, deps?: GatewayDeps): Promise<Gateway>;
  client(gateway?: Gateway): EtcdTestClient;
  stop(): Promise<void>;
}

export async function startWardCluster(options: { size?: number; gateway?: Partial<GatewayConfig>; raftEnv?: Record<string, string> } = {}): Promise<WardCluster> {
  const entry = buildRaftNodeBundle();
  const cluster = await LocalCluster.start({ entry, size: options.size ?? 3, env: { RAFT_NODE_LOG_LEVEL: 'info', ...options.raftEnv } });
  await cluster.waitForLeader(20_000);
  const gateways: Gateway[] = [];
  const clients: EtcdTestClient[] = [];
  const logLines: string[] = [];
  const destination = new Writable({ write: (chunk, _encoding, done) => (logLines.push(String(chunk)), done()) });
  const logger = createLogger({ name: 'etcd-gateway', level: 'debug', destination });
  const addGateway = async (overrides: Partial<GatewayConfig> = {}, deps: GatewayDeps = {}): Promise<Gateway> => {
    const config = gatewayConfig({
      grpcPort: 0,
      httpPort: 0,
      nodeEndpoints: cluster.members.map((m) => m.apiAddress),
      bcryptCost: 4,
      logLevel: 'debug',
      ...options.gateway,
      ...overrides,
    });
    const gateway = await createGateway(config, { logger, ...deps });
    gateways.push(gateway);
    return gateway;
  };
  await addGateway();
  return {
    cluster,
    gateways,
    logLines,
    addGateway,
    client(gateway = gateways[0]!) {
      const client = etcdTestClient(gateway.grpcAddress);
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.close();
      await Promise.allSettled(gateways.map((gateway) => gateway.stop()));
      await cluster.stop();
    },
  };
}

export const bytes = (text: string): Buffer => Buffer.from(text);

/** root (with the root role), role `rw-<prefix>` on a prefix, a user holding it, auth enabled. */
export async function setUpAuth(etcd: EtcdTestClient, users: { rootPassword: string; user: string; password: string; prefix: string }): Promise<void> {
  const role = `rw-${users.prefix}`;
  const end = Buffer.from(users.prefix);
  end[end.length - 1]! += 1;
  await must(etcd.call('Auth', 'UserAdd', { name: 'root', password: users.rootPassword }), 'UserAdd root');
  await must(etcd.call('Auth', 'UserGrantRole', { user: 'root', role: 'root' }), 'grant root');
  await must(etcd.call('Auth', 'RoleAdd', { name: role }), 'RoleAdd');
  await must(etcd.call('Auth', 'RoleGrantPermission', { name: role, perm: { permType: 'Readwrite', key: bytes(users.prefix), range_end: end } }), 'grant perm');
  await must(etcd.call('Auth', 'UserAdd', { name: users.user, password: users.password }), 'UserAdd user');
  await must(etcd.call('Auth', 'UserGrantRole', { user: users.user, role }), 'grant role');
  await must(etcd.call('Auth', 'AuthEnable', {}), 'AuthEnable');
}
