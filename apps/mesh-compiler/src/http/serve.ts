/** `ward-mesh serve`: reads MESH_COMPILER_* configuration, starts the HTTP function, stops on a signal. */
import { ConfigError, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { EXIT } from '../commands/command-result';
import { MESH_COMPILER_CONFIG } from '../config';
import { createMeshCompilerHttp } from './http-app';

/** Starts the server and resolves with the exit code once it has stopped. */
export async function serveFromEnvironment(env: Readonly<Record<string, string | undefined>>, argv: readonly string[]): Promise<number> {
  if (argv.length > 0) {
    process.stderr.write('ward-mesh: serve takes no arguments; configure it with MESH_COMPILER_* variables\n');
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
  await app.listen({ host: config.httpHost, port: config.httpPort });
  logger.info({ address: app.server.address() }, 'mesh compiler listening');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await app.close();
  logger.info('mesh compiler stopped');
  return EXIT.ok;
}
