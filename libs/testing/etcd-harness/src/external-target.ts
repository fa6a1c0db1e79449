// The target switch: with WARD_TARGET_ENDPOINTS set (e.g. `127.0.0.1:2379,127.0.0.1:22379`, the
// gateways of the docker compose topology), suites that speak to ward only from outside run
// against that deployment instead of starting raft-node and gateway processes. Unset (`npm test`),
// they start local processes as always.
import { EtcdGrpcClient } from './grpc-client';
import type { Target } from './target';
import { waitUntil } from './wait-until';
import { startWardCluster, type WardClusterOptions } from './ward-cluster';

export const TARGET_ENDPOINTS_VARIABLE = 'WARD_TARGET_ENDPOINTS';
/** Base URLs of the gateways' HTTP ports (JSON gateway, /readyz), in the order of the endpoints. */
export const TARGET_HTTP_URLS_VARIABLE = 'WARD_TARGET_HTTP_URLS';

const MAX_ENDPOINTS = 16;
const READY_TIMEOUT_MS = 60_000;
const HEALTH_POLL_MS = 500;

export interface ExternalTargetConfig {
  readonly endpoints: readonly string[];
  readonly httpUrls: readonly string[];
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
  return { endpoints, httpUrls };
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

/** Waits until every endpoint serves a Range, then watches the gateways' /readyz for allAlive(). */
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
  // allAlive() is synchronous: it reports the last /readyz round (every gateway answered 2xx).
  let healthy = true;
  let stopped = false;
  const poll = async (): Promise<void> => {
    while (!stopped && config.httpUrls.length > 0) {
      const results = await Promise.all(
        config.httpUrls.map((url) =>
          fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
            async (response) => (await response.arrayBuffer(), response.ok),
            () => false,
          ),
        ),
      );
      healthy = results.every(Boolean);
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
