import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { scrub, scrubString } from './redaction';

export type { Logger } from 'pino';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export interface CreateLoggerOptions {
  /** The process or component name, e.g. `raft-node`. */
  readonly name: string;
  readonly level: LogLevel;
  /** Where lines go; stdout when omitted. Tests pass an in-memory stream. */
  readonly destination?: DestinationStream;
  /** Fields on every line, e.g. `{ nodeId }`. Scrubbed like everything else. */
  readonly base?: Readonly<Record<string, unknown>>;
}

/**
 * The process's root logger: pino, JSON lines, every object scrubbed of secrets (fields named like
 * passwords, tokens, authorization or private keys at any depth, and JWT/bcrypt/PEM-looking
 * strings anywhere, the message included). Bind child loggers per unit of work.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const pinoOptions: LoggerOptions = {
    name: options.name,
    level: options.level,
    base: (scrub({ ...(options.base ?? {}) }) as Record<string, unknown>) ?? {},
    messageKey: 'msg',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: {
      level: (label) => ({ level: label }),
      // Runs on the object of every call (child bindings: see scrubChildBindings).
      log: (object) => scrub(object) as Record<string, unknown>,
    },
    serializers: { err: (error: unknown) => scrub(error) },
    hooks: {
      // Scrub the message and any interpolation arguments too.
      logMethod(args, method) {
        const cleaned = args.map((arg) => (typeof arg === 'string' ? scrubString(arg) : arg));
        return method.apply(this, cleaned as Parameters<typeof method>);
      },
    },
  };
  const root = options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
  return scrubChildBindings(root);
}

/** pino writes child bindings verbatim; scrub them on the way in, for children of children too. */
function scrubChildBindings(logger: Logger): Logger {
  const child = logger.child.bind(logger) as unknown as (bindings: Record<string, unknown>, childOptions?: object) => Logger;
  const scrubbingChild = (bindings: Record<string, unknown>, childOptions?: object): Logger =>
    scrubChildBindings(child(scrub(bindings) as Record<string, unknown>, childOptions));
  logger.child = scrubbingChild as unknown as Logger['child'];
  return logger;
}
