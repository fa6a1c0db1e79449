// The target switch: with WARD_TARGET_ENDPOINTS set (e.g. `127.0.0.1:2379,127.0.0.1:22379`, the
// gateways of the docker compose topology), suites that speak to ward only from outside run
// against that deployment instead of starting raft-node and gateway processes. Unset (`npm test`),
// they start local processes as always.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EtcdGrpcClient } from './grpc-client';
import type { Target } from './target';
import { waitUntil } from './wait-until';
import { startWardCluster, type WardClusterOptions } from './ward-cluster';

export const TARGET_ENDPOINTS_VARIABLE = 'WARD_TARGET_ENDPOINTS';
/** Base URLs of the gateways' HTTP ports (JSON gateway, /readyz), in the order of the endpoints. */
export const TARGET_HTTP_URLS_VARIABLE = 'WARD_TARGET_HTTP_URLS';

/** The compose project whose containers allAlive() watches (set by `npm run test:compose`). */
export const TARGET_COMPOSE_PROJECT_VARIABLE = 'WARD_COMPOSE_PROJECT';

const execFileAsync = promisify(execFile);
const MAX_ENDPOINTS = 16;
const DOCKER_TIMEOUT_MS = 10_000;
const READY_TIMEOUT_MS = 60_000;
const HEALTH_POLL_MS = 500;

export interface ExternalTargetConfig {
  readonly endpoints: readonly string[];
  readonly httpUrls: readonly string[];
  /** The compose project of the deployment, when known: its containers are watched too. */
  readonly composeProject?: string;
}

/** Reads the switch from `env`; undefined when it is unset. Throws on a malformed value. */
export function externalTargetConfig(env: NodeJS.ProcessEnv = process.env): ExternalTargetConfig | undefined {
  const raw = env[TARGET_ENDPOINTS_VARIABLE]?.trim() ?? '';
  if (raw === '') return undefined;
  const endpoints = raw.split(',').map((item) => item.trim());
  if (endpoints.length > MAX_ENDPOINTS) throw new Error(`${TARGET_ENDPOINTS_VARIABLE}: at most ${MAX_ENDPOINTS} endpoints`);
  for (const endpoint of endpoints) {
    if (!/^[A-Za-z0-9.-]{1,253}:\d{1,5}$/.test(endpoint)) throw new Error(`${TARGET_ENDPOINTS_VARIABLE}: "${endpoint}" is not host:port`);
  }
  const httpRaw = env[TARGET_HTTP_URLS_VARIABLE]?.trim() ?? '';
  const httpUrls = httpRaw === '' ? [] : httpRaw.split(',').map((item) => item.trim().replace(/\/+$/, ''));
  for (const url of httpUrls) {
    if (!/^https?:\/\/[A-Za-z0-9.-]{1,253}:\d{1,5}$/.test(url)) throw new Error(`${TARGET_HTTP_URLS_VARIABLE}: "${url}" is not http://host:port`);
  }
  if (httpUrls.length !== 0 && httpUrls.length !== endpoints.length) {
    throw new Error(`${TARGET_HTTP_URLS_VARIABLE} needs one URL per endpoint of ${TARGET_ENDPOINTS_VARIABLE}`);
  }
  const composeProject = env[TARGET_COMPOSE_PROJECT_VARIABLE]?.trim() ?? '';
  if (composeProject !== '' && !/^[a-z0-9][a-z0-9_-]{0,62}$/.test(composeProject)) throw new Error(`${TARGET_COMPOSE_PROJECT_VARIABLE}: "${composeProject}" is not a compose project name`);
  return composeProject === '' ? { endpoints, httpUrls } : { endpoints, httpUrls, composeProject };
}

/**
 * Each container of a compose project, by name: its state and when it last started (a container
 * the engine restarted after a crash starts again later). Undefined when docker does not answer.
 */
export async function composeContainers(project: string): Promise<Map<string, string> | undefined> {
  try {
    const options = { encoding: 'utf8' as const, timeout: DOCKER_TIMEOUT_MS, maxBuffer: 1024 * 1024 };
    const ids = (await execFileAsync('docker', ['ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${project}`], options)).stdout.split('\n').filter(Boolean);
    if (ids.length === 0) return new Map();
    const lines = (await execFileAsync('docker', ['inspect', '--format', '{{.Name}} {{.State.Status}} {{.State.StartedAt}}', ...ids], options)).stdout.split('\n').filter(Boolean);
    return new Map(lines.map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]));
  } catch {
    return undefined;
  }
}

/** What changed between two views of the containers (exited, restarted, gone, new); empty when nothing did. */
export function containerChanges(before: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): string[] {
  const changes: string[] = [];
  for (const [name, state] of before) {
    const current = now.get(name);
    if (current === undefined) changes.push(`${name} is gone`);
    else if (current !== state) changes.push(`${name}: ${state} -> ${current}`);
  }
  for (const [name, state] of now) if (!before.has(name)) changes.push(`${name} is new: ${state}`);
  return changes;
}

/** True when the suites run against an external deployment. */
export function usesExternalTarget(): boolean {
  return externalTargetConfig() !== undefined;
}

/**
 * ward for a suite that only speaks to it from outside: the external deployment when the switch
 * is set, else local processes started with `options` (options that need local processes, such as
 * extra GATEWAY_* variables, are refused with the switch set: the deployment's config is its own).
 */
export async function startWardTarget(options: WardClusterOptions = {}): Promise<Target> {
  const config = externalTargetConfig();
  if (config === undefined) return startWardCluster(options);
  const local: string[] = (['gatewayEnv', 'nodeEnv', 'tokenServiceEnv', 'verifierEnv', 'cpuProfileDir'] as const).filter((name) => options[name] !== undefined);
  if ((options.authToken ?? 'simple') !== 'simple') local.push('authToken');
  if (local.length > 0) throw new Error(`${TARGET_ENDPOINTS_VARIABLE} is set but the suite asks for ${local.join(', ')}, which only local processes take`);
  return connectExternalTarget(config);
}

/** Waits until every endpoint serves a Range, then watches the gateways' /healthz and the project's containers for allAlive(). */
export async function connectExternalTarget(config: ExternalTargetConfig): Promise<Target> {
  for (const endpoint of config.endpoints) {
    const client = new EtcdGrpcClient(endpoint);
    try {
      await waitUntil(
        `${endpoint} serving a Range`,
        async () => {
          const range = await client.call('KV', 'Range', { key: Buffer.from('ward-ready') }, { deadlineMs: 2000 });
          return range.ok || (range.code !== 14 && range.code !== 4 && range.code !== 2);
        },
        READY_TIMEOUT_MS,
        250,
      );
    } finally {
      client.close();
    }
  }
  // allAlive() is synchronous: it reports the last round of checks. Alive means every gateway's
  // process answers /healthz and, with the compose project known, every container runs as it did
  // at the start (none exited, none restarted by the engine after a crash). Readiness (/readyz: a
  // leader known) is not liveness: a leader election under load is not a crashed process.
  const containersAtStart = config.composeProject === undefined ? undefined : await composeContainers(config.composeProject);
  if (containersAtStart !== undefined) {
    const notRunning = [...containersAtStart].filter(([, state]) => !state.startsWith('running '));
    if (notRunning.length > 0) throw new Error(`containers of ${config.composeProject} are not running: ${notRunning.map(([name, state]) => `${name} ${state}`).join(', ')}`);
  }
  let healthy = true;
  let stopped = false;
  let reported = '';
  const poll = async (): Promise<void> => {
    while (!stopped) {
      const [answers, containers] = await Promise.all([
        Promise.all(
          config.httpUrls.map((url) =>
            fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
              async (response) => (await response.arrayBuffer(), response.ok ? '' : `${url}/healthz answered ${response.status}`),
              () => `${url}/healthz did not answer within 2 s`,
            ),
          ),
        ),
        containersAtStart === undefined ? undefined : composeContainers(config.composeProject!),
      ]);
      // docker not answering within its timeout says nothing about the containers.
      const problems = [...answers.filter(Boolean), ...(containers === undefined ? [] : containerChanges(containersAtStart!, containers))];
      healthy = problems.length === 0;
      const report = problems.join('; ');
      if (report !== reported && report !== '') console.error(`ward target: not every process is alive: ${report}`);
      reported = report;
      await new Promise((done) => setTimeout(done, HEALTH_POLL_MS).unref());
    }
  };
  void poll();
  const [clientEndpoint] = config.endpoints as [string, ...string[]];
  const jsonGatewayUrl = config.httpUrls[0] ?? `http://${clientEndpoint.replace(/:\d+$/, ':2381')}`;
  return {
    kind: 'ward',
    clientEndpoint,
    clientEndpoints: config.endpoints,
    jsonGatewayUrl,
    serverProcesses: () => [],
    allAlive: () => healthy,
    stop: async () => {
      stopped = true;
    },
  };
}
