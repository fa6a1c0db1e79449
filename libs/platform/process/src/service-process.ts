// The life of a service process, shared by the apps' entry points: configuration errors exit 2
// with the message, the first SIGINT/SIGTERM stops the service gracefully (exit 0, or 1 when the
// stop fails), a second signal exits at once, and an unhandled rejection is fatal.
import { ConfigError } from '@ward/platform/config';
import type { Logger } from '@ward/platform/logging';

/** The parts of `process` used here (tests pass a fake). */
export interface ProcessLike {
  on(event: 'SIGINT' | 'SIGTERM' | 'unhandledRejection', listener: (value?: unknown) => void): unknown;
  exit(code: number): void;
}

/** Exit code for a configuration the schema refuses. */
export const EXIT_CONFIG = 2;

/** `load()`'s configuration; a ConfigError prints its message and exits with EXIT_CONFIG. */
export function configOrExit<T>(load: () => T, print: (message: string) => void = console.error, proc: ProcessLike = process): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    print(error.message);
    proc.exit(EXIT_CONFIG);
    throw error;
  }
}

/** Stops the service on the first SIGINT/SIGTERM, exits on the second; unhandled rejections are fatal. */
export function runUntilSignalled(logger: Logger, stop: () => Promise<void>, proc: ProcessLike = process): void {
  let signals = 0;
  const onSignal = (signal: string): void => {
    signals += 1;
    if (signals > 1) return proc.exit(1);
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => proc.exit(0),
      () => proc.exit(1),
    );
  };
  proc.on('SIGTERM', () => onSignal('SIGTERM'));
  proc.on('SIGINT', () => onSignal('SIGINT'));
  proc.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled rejection');
    proc.exit(1);
  });
}
