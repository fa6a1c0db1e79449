// Entry point of one etcd-gateway process. The only module that reads process.env.
import { ConfigError, describeConfig, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { gatewayConfigSchema } from './config';
import { createGateway } from './gateway';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(`etcd-gateway: etcd's v3 API in front of ward's raft-nodes.\n\n${describeConfig(gatewayConfigSchema)}`);
    return;
  }
  let config;
  try {
    config = loadConfig(gatewayConfigSchema, process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ name: 'etcd-gateway', level: config.logLevel });
  const gateway = await createGateway(config, { logger, collectProcessMetrics: true });
  logger.info({ grpc: gateway.grpcAddress, http: gateway.httpAddress, tokenType: gateway.tokenType, passwordTier: gateway.passwordTier }, 'ready for etcd clients');
  let signals = 0;
  const stop = (signal: string): void => {
    signals += 1;
    if (signals > 1) process.exit(1);
    logger.info({ signal }, 'shutting down');
    gateway.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled rejection');
    process.exit(1);
  });
}

main().catch((error: unknown) => {
  console.error('etcd-gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
