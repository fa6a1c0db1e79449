// Entry point of one password-verifier process. The only module that reads process.env.
import { describeConfig, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { configOrExit, runUntilSignalled } from '@ward/platform/process';
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
  const config = configOrExit(() => loadConfig(verifierConfigSchema, process.env));
  const logger = createLogger({ name: 'password-verifier', level: config.logLevel });
  const threadpoolSize = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
  const service = await startPasswordVerifier(config, { logger, clock: systemClock, threadpoolSize });
  logger.info(
    { httpPort: service.httpPort, worker: service.workerName, queue: config.queueName, concurrency: config.concurrencyCount, bcryptCost: config.bcryptCost, threadpoolSize },
    'password verifier started',
  );
  runUntilSignalled(logger, () => service.close());
}

main().catch((error: unknown) => {
  console.error('password-verifier failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
