// Entry point of one password-verifier process. The only module that reads process.env.
import { ConfigError, describeConfig, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { systemClock } from '@ward/shared/clock';
import { generateSealingKeyEntry } from '@ward/auth/password-queue';
import { verifierConfigSchema } from './config';
import { startPasswordVerifier } from './verifier-service';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(`password-verifier: bcrypt workers for ward's password queue.\n\n${describeConfig(verifierConfigSchema)}`);
    return;
  }
  if (process.argv.includes('--generate-payload-key')) {
    console.log(generateSealingKeyEntry(`k${Math.floor(Date.now() / 1000).toString(36)}`));
    return;
  }
  let config;
  try {
    config = loadConfig(verifierConfigSchema, process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ name: 'password-verifier', level: config.logLevel });
  const threadpoolSize = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
  const service = await startPasswordVerifier(config, { logger, clock: systemClock, threadpoolSize });
  logger.info(
    { httpPort: service.httpPort, worker: service.workerName, queue: config.queueName, concurrency: config.concurrencyCount, bcryptCost: config.bcryptCost, threadpoolSize },
    'password verifier started',
  );
  let signals = 0;
  const stop = (signal: string): void => {
    signals += 1;
    if (signals > 1) process.exit(1);
    logger.info({ signal }, 'shutting down');
    service.close().then(
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
  console.error('password-verifier failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
