// Entry point of one etcd-gateway process. The only module that reads process.env.
import { describeConfig, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { configOrExit, runUntilSignalled } from '@ward/platform/process';
import { gatewayConfigSchema } from './config';
import { createGateway } from './gateway';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(`etcd-gateway: etcd's v3 API in front of ward's raft-nodes.\n\n${describeConfig(gatewayConfigSchema)}`);
    return;
  }
  const config = configOrExit(() => loadConfig(gatewayConfigSchema, process.env));
  const logger = createLogger({ name: 'etcd-gateway', level: config.logLevel });
  const gateway = await createGateway(config, { logger, collectProcessMetrics: true });
  logger.info({ grpc: gateway.grpcAddress, http: gateway.httpAddress, tokenType: gateway.tokenType, passwordTier: gateway.passwordTier }, 'ready for etcd clients');
  runUntilSignalled(logger, () => gateway.stop());
}

main().catch((error: unknown) => {
  console.error('etcd-gateway failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
