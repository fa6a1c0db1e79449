// Entry point of one token-service process. The only module that reads process.env.
import { describeConfig, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { configOrExit, runUntilSignalled } from '@ward/platform/process';
import { tokenServiceConfigSchema } from './config';
import { createTokenService } from './token-service';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(`token-service: issues ward's JWTs (etcd's Authenticate rule) and publishes their keys.\n\n${describeConfig(tokenServiceConfigSchema)}`);
    return;
  }
  const config = configOrExit(() => loadConfig(tokenServiceConfigSchema, process.env));
  const logger = createLogger({ name: 'token-service', level: config.logLevel });
  const service = await createTokenService(config, { logger, collectProcessMetrics: true });
  logger.info({ grpc: service.grpcAddress, http: service.httpUrl }, 'ready to issue tokens');
  runUntilSignalled(logger, () => service.stop());
}

main().catch((error: unknown) => {
  console.error('token-service failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
