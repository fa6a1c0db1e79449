/**
 * The `ward-mesh` executable: runs one command and exits with its code, or, for `serve`,
 * starts the HTTP function until SIGINT/SIGTERM.
 */
import { runCli } from './cli/run-cli';
import { EXIT } from './commands/command-result';
import { serveFromEnvironment } from './http/serve';

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === 'serve') {
    process.exitCode = await serveFromEnvironment(process.env, argv.slice(1));
    return;
  }
  const result = await runCli(argv, { stdin: process.stdin });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`ward-mesh: internal error: ${message}\n`);
  process.exitCode = EXIT.internal;
});
