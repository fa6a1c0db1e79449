/** `ward-mesh serve`: reads MESH_COMPILER_* configuration, starts the HTTP function, stops on a signal. */
import { ConfigError, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { EXIT } from '../commands/command-result';
import { MESH_COMPILER_CONFIG } from '../config';
import { createMeshCompilerHttp } from './http-app';
import { registerXdsRoutes, startControlPlane, type ControlPlane } from '../xds/control-plane';

interface ServeArgs {
  readonly xds?: string;
  readonly policies?: string;
}

/** `--xds <host:port>` and `--policies <dir>` (only with `--xds`). */
export function parseServeArgs(argv: readonly string[]): ServeArgs | string {
  const out: { xds?: string; policies?: string } = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (flag !== '--xds' && flag !== '--policies') return `serve: unknown argument ${JSON.stringify(arg)}; configure the HTTP function with MESH_COMPILER_* variables`;
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') return `serve: ${flag} needs a value`;
    if (flag === '--xds') {
      if (!/^(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$/u.test(value) || Number(value.slice(value.lastIndexOf(':') + 1)) > 65535) return `serve: --xds takes host:port, got ${JSON.stringify(value)}`;
      out.xds = value;
    } else {
      out.policies = value;
    }
  }
  if (out.policies !== undefined && out.xds === undefined) return 'serve: --policies needs --xds';
  return out;
}

/** Starts the server and resolves with the exit code once it has stopped. */
export async function serveFromEnvironment(env: Readonly<Record<string, string | undefined>>, argv: readonly string[]): Promise<number> {
  const args = parseServeArgs(argv);
  if (typeof args === 'string') {
    process.stderr.write(`ward-mesh: ${args}\n`);
    return EXIT.usage;
  }
  let config;
  try {
    config = loadConfig(MESH_COMPILER_CONFIG, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ward-mesh: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  }
  const logger = createLogger({ name: 'mesh-compiler', level: config.logLevel });
  const metrics = createMetrics({ prefix: 'ward_mesh_compiler_', collectProcessMetrics: config.processMetrics });
  const app = createMeshCompilerHttp({ config, logger, metrics });
  let plane: ControlPlane | undefined;
  if (args.xds !== undefined) {
    plane = await startControlPlane({ address: args.xds, logger, ...(args.policies !== undefined ? { directory: args.policies } : {}) });
    registerXdsRoutes(app, plane);
    logger.info({ xdsPort: plane.port, policies: args.policies ?? null, version: plane.store.snapshot.version }, 'xds control plane listening');
  }
  await app.listen({ host: config.httpHost, port: config.httpPort });
  logger.info({ address: app.server.address() }, 'mesh compiler listening');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await app.close();
  await plane?.close();
  logger.info('mesh compiler stopped');
  return EXIT.ok;
}
