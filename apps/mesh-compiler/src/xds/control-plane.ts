/**
 * `ward-mesh serve --xds <addr> [--policies <dir>]`: the ADS server, fed by a watched policy
 * directory and by `PUT /xds/policies`; `GET /xds/status` shows versions, ACKs and NACKs.
 */
import type { FastifyInstance } from 'fastify';
import type { SourceText } from '../cli/read-inputs';
import { AdsServer, adsTlsCredentials, type AdsLimits, type AdsLogger, type AdsTlsMaterial } from './ads-server';
import { PolicyStore, readPolicyDirectory, watchPolicyDirectory, type ApplyOutcome, type DirectoryWatcher } from './policy-source';

export interface ControlPlaneOptions {
  /** `host:port` of the ADS server (port 0 picks one). */
  readonly address: string;
  /** Policy directory to watch; without it policies come only from the HTTP API. */
  readonly directory?: string;
  readonly logger: AdsLogger;
  readonly limits?: Partial<AdsLimits>;
  /** Quiet time after the last file event before reloading (default 50 ms). */
  readonly debounceMs?: number;
  /** Periodic re-read of the directory (default 2 s). */
  readonly pollMs?: number;
  /** Serve ADS over mTLS with this material (default: plaintext). */
  readonly tls?: AdsTlsMaterial;
}

export interface ControlPlane {
  readonly port: number;
  readonly ads: AdsServer;
  readonly store: PolicyStore;
  apply(sources: readonly SourceText[], origin: string): ApplyOutcome;
  reloadDirectory(): Promise<ApplyOutcome | undefined>;
  close(): Promise<void>;
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const store = new PolicyStore();
  const ads = new AdsServer({
    logger: options.logger,
    snapshot: store.snapshot,
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    ...(options.tls !== undefined ? { credentials: adsTlsCredentials(options.tls) } : {}),
  });
  const apply = (sources: readonly SourceText[], origin: string, problems: Parameters<PolicyStore['apply']>[1] = []): ApplyOutcome => {
    const outcome = store.apply(sources, problems);
    if (!outcome.accepted) {
      options.logger.warn({ origin, keptVersion: outcome.keptVersion, report: outcome.report }, 'policy change refused; the last good configuration stays served');
    } else if (!outcome.unchanged) {
      options.logger.info({ origin, version: outcome.snapshot.version, authorizationPolicies: outcome.snapshot.authorizationPolicies.length, peerAuthentications: outcome.snapshot.peerAuthentications.length, services: outcome.snapshot.services.length }, 'policy change accepted');
      ads.setSnapshot(outcome.snapshot);
    }
    return outcome;
  };
  // The directory is applied when its content changed since it was last read, so the periodic
  // re-read never undoes a set put through the HTTP API in between, nor repeats a refusal.
  let lastDirectoryKey: string | undefined;
  const reloadDirectory = async (): Promise<ApplyOutcome | undefined> => {
    if (options.directory === undefined) return undefined;
    const read = await readPolicyDirectory(options.directory);
    const key = JSON.stringify([read.sources.map((s) => [s.sourceName, s.text]), read.problems.map((p) => p.message)]);
    if (key === lastDirectoryKey) return undefined;
    lastDirectoryKey = key; // a refused content is reported once, not on every re-read
    return apply(read.sources, options.directory, read.problems);
  };
  await reloadDirectory();
  let watcher: DirectoryWatcher | undefined;
  if (options.directory !== undefined) {
    watcher = watchPolicyDirectory(options.directory, async () => void (await reloadDirectory()), { debounceMs: options.debounceMs ?? 50, pollMs: options.pollMs ?? 2_000 });
  }
  let port: number;
  try {
    port = await ads.listen(options.address);
  } catch (error) {
    watcher?.close();
    await ads.close();
    throw error;
  }
  return {
    port,
    ads,
    store,
    apply: (sources, origin) => apply(sources, origin),
    reloadDirectory,
    async close() {
      watcher?.close();
      await ads.close();
    },
  };
}

const MAX_INPUTS = 1_000;

/** `PUT /xds/policies` (body `{"inputs": [{"name", "content"}]}`, the whole set) and `GET /xds/status`. */
export function registerXdsRoutes(app: FastifyInstance, plane: ControlPlane): void {
  app.put(
    '/xds/policies',
    {
      schema: {
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['inputs'],
          properties: {
            inputs: {
              type: 'array',
              maxItems: MAX_INPUTS,
              items: { type: 'object', additionalProperties: false, required: ['name', 'content'], properties: { name: { type: 'string', maxLength: 4096 }, content: { type: 'string' } } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const body = request.body as { inputs: Array<{ name: string; content: string }> };
      const outcome = plane.apply(body.inputs.map((i) => ({ sourceName: i.name, text: i.content })), 'http');
      if (!outcome.accepted) return reply.code(422).send({ accepted: false, version: outcome.keptVersion, report: outcome.report });
      return reply.send({ accepted: true, version: outcome.snapshot.version, unchanged: outcome.unchanged, report: outcome.report });
    },
  );
  app.get('/xds/status', async () => plane.ads.status());
}
