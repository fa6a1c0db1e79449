import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { WORKSPACE_ROOT, appBundlePath, buildAppBundle, freePorts } from '@ward/testing/cluster';
import { EtcdGrpcClient } from './grpc-client';
import { ManagedProcess } from './managed-process';
import type { Target } from './target';
import { httpOk, waitUntil } from './wait-until';


const WARD_READY_TIMEOUT_MS = 60_000;
const START_ATTEMPTS = 3;

export interface WardClusterOptions {
  /** raft-node processes (default 3). */
  readonly nodes?: 1 | 3 | 5;
  /** bcrypt cost of the gateway (tests use 4; default 10 like etcd). */
  readonly bcryptCost?: number;
  /** GATEWAY_AUTH_TOKEN (default `simple`). */
  readonly authToken?: string;
  /** Extra GATEWAY_* variables. */
  readonly gatewayEnv?: Readonly<Record<string, string>>;
  /** Extra RAFT_NODE_* variables for every node. */
  readonly nodeEnv?: Readonly<Record<string, string>>;
  /** Extra Node.js options for every process (V8 flags for an A/B, say). */
  readonly nodeArgs?: readonly string[];
  /** Write a V8 CPU profile of every process here when it stops (`node --cpu-prof`). */
  readonly cpuProfileDir?: string;
  /** Build the app bundles first (default true; esbuild takes about a second per app). */
  readonly build?: boolean;
  /**
   * Run the bundles of another checkout of this workspace (built there, from its sources) instead
   * of this one's: an A/B of two builds with both clusters up at once.
   */
  readonly workspaceRoot?: string;
  /**
   * Run a token-service process too (extra TOKEN_SERVICE_* variables): the gateway then hands
   * Authenticate to it and verifies its JWTs against the cluster's signing-key directory.
   */
  readonly tokenServiceEnv?: Readonly<Record<string, string>>;
  /** Run password-verifier processes (the BullMQ tier) with these VERIFIER_* variables. */
  readonly verifierEnv?: Readonly<Record<string, string>>;
}

/** ward as processes: raft-nodes behind one etcd-gateway, all on 127.0.0.1, data in a temp dir. */
export interface WardCluster extends Target {
  readonly kind: 'ward';
  readonly nodes: readonly ManagedProcess[];
  readonly gateway: ManagedProcess;
  /** The token-service process, when one was asked for. */
  readonly tokenService: ManagedProcess | undefined;
  /** Its HTTP address (JWKS, health, metrics). */
  readonly tokenServiceUrl: string | undefined;
  /** Its gRPC address (host:port). */
  readonly tokenServiceEndpoint: string | undefined;
  /** The password-verifier process, when one was asked for. */
  readonly verifier: ManagedProcess | undefined;
  /** host:port of every raft-node's internal API. */
  readonly nodeApiEndpoints: readonly string[];
  /** Base URL of every raft-node's HTTP server (/healthz, /readyz, /metrics). */
  readonly nodeHttpUrls: readonly string[];
  /** Data dir of every raft-node. */
  readonly nodeDataDirs: readonly string[];
  /** Stops raft-node `index` (SIGTERM, then SIGKILL); its data stays. */
  stopNode(index: number): Promise<void>;
  /** Starts raft-node `index` again from its data dir (after stopNode). */
  startNode(index: number): void;
  readonly dataDir: string;
}

/** Workspace roots whose bundles this process built already. */
const bundlesBuilt = new Set<string>();

/** Builds the raft-node and etcd-gateway bundles (dist/apps/<app>/main.js) once per process. */
export function buildWardBundles(root = WORKSPACE_ROOT): { raftNode: string; gateway: string } {
  if (!bundlesBuilt.has(root)) {
    // All four apps: token-service and password-verifier processes are optional per cluster.
    for (const app of ['raft-node', 'etcd-gateway', 'token-service', 'password-verifier']) buildAppBundle(app, root);
    bundlesBuilt.add(root);
  }
  return buildWardBundlesPaths(root);
}

/** Node.js options of every process: the caller's, then a CPU profile's when asked for. */
function nodeArgsOf(options: WardClusterOptions): string[] {
  const profile = options.cpuProfileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`];
  return [...(options.nodeArgs ?? []), ...profile];
}

/** Environment for a child: this process's, without any inherited RAFT_NODE_* or GATEWAY_* settings. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(RAFT_NODE|GATEWAY|TOKEN_SERVICE|VERIFIER)_/.test(name)) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Starts ward and waits until the gateway serves a Range. Retries on fresh ports if a start fails. */
export async function startWardCluster(options: WardClusterOptions = {}): Promise<WardCluster> {
  const root = options.workspaceRoot ?? WORKSPACE_ROOT;
  const bundles = options.build === false ? buildWardBundlesPaths(root) : buildWardBundles(root);
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'ward-cluster-'));
    const launched = await launch(options, bundles, dataDir);
    try {
      await waitReady(launched);
      return handle(launched, dataDir);
    } catch (error) {
      const all = allOf(launched);
      const output = all.map((p) => `--- ${p.name}\n${p.output().slice(-2000)}`).join('\n');
      await Promise.all(all.map((p) => p.stop('SIGKILL')));
      await rm(dataDir, { recursive: true, force: true });
      lastError = new Error(`startWardCluster attempt ${attempt}: ${(error as Error).message}\n${output}`);
    }
  }
  throw lastError;
}

function buildWardBundlesPaths(root: string): { raftNode: string; gateway: string } {
  return { raftNode: appBundlePath('raft-node', root), gateway: appBundlePath('etcd-gateway', root) };
}

interface Launched {
  readonly nodes: ManagedProcess[];
  readonly gateway: ManagedProcess;
  readonly tokenService: ManagedProcess | undefined;
  readonly tokenServiceUrl: string | undefined;
  readonly tokenServiceEndpoint: string | undefined;
  readonly verifier: ManagedProcess | undefined;
  readonly nodeHttpPorts: number[];
  readonly nodeApiEndpoints: string[];
  readonly grpcEndpoint: string;
  readonly httpUrl: string;
}

async function launch(options: WardClusterOptions, bundles: { raftNode: string; gateway: string }, dataDir: string): Promise<Launched> {
  const count = options.nodes ?? 3;
  const ports = await freePorts(count * 3 + 4);
  const [tokenGrpcPort, tokenHttpPort] = ports.slice(count * 3 + 2) as [number, number];
  const apiPorts = ports.slice(0, count);
  const peerPorts = ports.slice(count, 2 * count);
  const nodeHttpPorts = ports.slice(2 * count, 3 * count);
  const [grpcPort, httpPort] = ports.slice(3 * count) as [number, number];
  const members = apiPorts.map((apiPort, i) => `${i + 1}=node-${i + 1}=127.0.0.1:${peerPorts[i]}=127.0.0.1:${apiPort}`).join(',');
  const nodeApiEndpoints = apiPorts.map((port) => `127.0.0.1:${port}`);
  const nodes = apiPorts.map(
    (_, i) =>
      new ManagedProcess({
        name: `raft-node-${i + 1}`,
        command: process.execPath,
        args: [...nodeArgsOf(options), bundles.raftNode],
        env: childEnv({
          RAFT_NODE_MEMBER_ID: String(i + 1),
          RAFT_NODE_MEMBERS: members,
          RAFT_NODE_DATA_DIR: join(dataDir, `node-${i + 1}`),
          RAFT_NODE_HTTP_ADDRESS: `127.0.0.1:${nodeHttpPorts[i]}`,
          RAFT_NODE_LOG_LEVEL: 'warn',
          ...options.nodeEnv,
        }),
      }),
  );
  const bundle = (app: string): string => join(dirname(bundles.gateway), '..', app, 'main.js');
  const verifier =
    options.verifierEnv === undefined
      ? undefined
      : new ManagedProcess({
          name: 'password-verifier',
          command: process.execPath,
          args: [...nodeArgsOf(options), bundle('password-verifier')],
          env: childEnv({ VERIFIER_HTTP_PORT: '0', VERIFIER_BCRYPT_COST: String(options.bcryptCost ?? 10), VERIFIER_LOG_LEVEL: 'warn', ...options.verifierEnv }),
        });
  const tokenService =
    options.tokenServiceEnv === undefined
      ? undefined
      : new ManagedProcess({
          name: 'token-service',
          command: process.execPath,
          args: [...nodeArgsOf(options), bundle('token-service')],
          env: childEnv({
            TOKEN_SERVICE_GRPC_PORT: String(tokenGrpcPort),
            TOKEN_SERVICE_HTTP_PORT: String(tokenHttpPort),
            TOKEN_SERVICE_NODE_ENDPOINTS: nodeApiEndpoints.join(','),
            TOKEN_SERVICE_BCRYPT_COST: String(options.bcryptCost ?? 10),
            TOKEN_SERVICE_LOG_LEVEL: 'warn',
            ...options.tokenServiceEnv,
          }),
        });
  const gateway = new ManagedProcess({
    name: 'etcd-gateway',
    command: process.execPath,
    args: [...nodeArgsOf(options), bundles.gateway],
    env: childEnv({
      GATEWAY_GRPC_PORT: String(grpcPort),
      GATEWAY_HTTP_PORT: String(httpPort),
      GATEWAY_NODE_ENDPOINTS: nodeApiEndpoints.join(','),
      GATEWAY_BCRYPT_COST: String(options.bcryptCost ?? 10),
      GATEWAY_AUTH_TOKEN: options.authToken ?? 'simple',
      GATEWAY_LOG_LEVEL: 'warn',
      ...(tokenService === undefined ? {} : { GATEWAY_TOKEN_SERVICE_ENDPOINTS: `127.0.0.1:${tokenGrpcPort}` }),
      ...options.gatewayEnv,
    }),
  });
  const tokenServiceUrl = tokenService === undefined ? undefined : `http://127.0.0.1:${tokenHttpPort}`;
  const tokenServiceEndpoint = tokenService === undefined ? undefined : `127.0.0.1:${tokenGrpcPort}`;
  return { nodes, gateway, tokenService, tokenServiceUrl, tokenServiceEndpoint, verifier, nodeHttpPorts, nodeApiEndpoints, grpcEndpoint: `127.0.0.1:${grpcPort}`, httpUrl: `http://127.0.0.1:${httpPort}` };
}

function allOf(launched: Launched): ManagedProcess[] {
  return [...launched.nodes, launched.gateway, ...(launched.tokenService === undefined ? [] : [launched.tokenService]), ...(launched.verifier === undefined ? [] : [launched.verifier])];
}

async function waitReady(launched: Launched): Promise<void> {
  const all = allOf(launched);
  const client = new EtcdGrpcClient(launched.grpcEndpoint);
  try {
    await waitUntil(
      'ward (raft-nodes healthy, gateway serving a Range)',
      async () => {
        const dead = all.find((p) => !p.alive);
        if (dead) throw new Error(`${dead.name} exited during start (${JSON.stringify(dead.exit)})`);
        const nodesUp = await Promise.all(launched.nodeHttpPorts.map((port) => httpOk(`http://127.0.0.1:${port}/healthz`).catch(() => false)));
        if (!nodesUp.every(Boolean)) return false;
        const range = await client.call('KV', 'Range', { key: Buffer.from('ward-ready') }, { deadlineMs: 2000 });
        // Any etcd answer proves the path gateway -> leader works (auth may already be on after a restart).
        const gatewayUp = range.ok || (range.code !== 14 && range.code !== 4 && range.code !== 2);
        // A token-service is ready once its keys are in the cluster's directory.
        return gatewayUp && (launched.tokenServiceUrl === undefined || (await httpOk(`${launched.tokenServiceUrl}/readyz`).catch(() => false)));
      },
      WARD_READY_TIMEOUT_MS,
      200,
    );
  } finally {
    client.close();
  }
}

function handle(launched: Launched, dataDir: string): WardCluster {
  const all = (): ManagedProcess[] => allOf(launched);
  let stopping: Promise<void> | undefined;
  return {
    kind: 'ward',
    nodes: launched.nodes,
    gateway: launched.gateway,
    tokenService: launched.tokenService,
    tokenServiceUrl: launched.tokenServiceUrl,
    tokenServiceEndpoint: launched.tokenServiceEndpoint,
    verifier: launched.verifier,
    nodeApiEndpoints: launched.nodeApiEndpoints,
    nodeHttpUrls: launched.nodeHttpPorts.map((port) => `http://127.0.0.1:${port}`),
    nodeDataDirs: launched.nodes.map((_, i) => join(dataDir, `node-${i + 1}`)),
    stopNode: (index) => launched.nodes[index]!.stop(),
    startNode: (index) => {
      launched.nodes[index] = launched.nodes[index]!.respawn();
    },
    dataDir,
    serverProcesses: () => all().flatMap((p) => (p.pid === undefined ? [] : [{ name: p.name, pid: p.pid }])),
    clientEndpoint: launched.grpcEndpoint,
    clientEndpoints: [launched.grpcEndpoint, ...launched.nodeApiEndpoints],
    jsonGatewayUrl: launched.httpUrl,
    allAlive: () => all().every((p) => p.alive),
    stop: () => {
      stopping ??= (async () => {
        await launched.gateway.stop();
        await Promise.all([launched.tokenService?.stop(), launched.verifier?.stop()]);
        await Promise.all(launched.nodes.map((p) => p.stop()));
        await rm(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
