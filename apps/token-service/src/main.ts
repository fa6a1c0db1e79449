// Entry point of one token-service process. The only module that reads process.env.
import { describeConfig, loadConfig } from '@ward/platform/config';
import { createLogger } from '@ward/platform/logging';
import { configOrExit, runUntilSignalled } from '@ward/platform/process';
import { tokenServiceConfigSchema } from './config';
import { revokeKeyCommand } from './revoke-command';
import { createTokenService } from './token-service';

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(
      `token-service: issues ward's JWTs (etcd's Authenticate rule) and publishes their keys.\n` +
        `  token-service revoke-key <kid> [--endpoint host:port] [--user name]   revokes a key everywhere (password on stdin)\n\n${describeConfig(tokenServiceConfigSchema)}`,
    );
    return;
  }
  if (process.argv[2] === 'revoke-key') {
    process.exitCode = await revokeKeyCommand(process.argv.slice(3), { stdin: process.stdin, out: (line) => console.log(line) });
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
