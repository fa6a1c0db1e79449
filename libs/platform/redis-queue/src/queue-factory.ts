import { Queue } from 'bullmq';
import { redisOptions, type RedisConnectionOptions } from './redis-connection';
import { toKeepJobs, type JobRemoval, type JobRetention } from './retention';

export interface QueueFactoryOptions {
  readonly name: string;
  /** Key prefix: every key is `<prefix>:<name>:<type>`. */
  readonly prefix: string;
  readonly connection: RedisConnectionOptions;
  readonly jobs: {
    /** Total tries of a job (1 = no retry). */
    readonly attempts: number;
    /** Exponential backoff between tries: delay · 2^(try-1). */
    readonly backoffDelayMs: number;
    readonly removeOnComplete: JobRemoval;
    readonly removeOnFail: JobRetention;
    /** Stack lines kept on failure (0: keep none; stacks are not for Redis). */
    readonly stackTraceLimit: number;
    /** Largest serialized job data accepted by `add`. */
    readonly dataLimitBytes: number;
  };
  /** Approximate bound of the queue's event stream (BullMQ's `streams.events.maxLen`). */
  readonly eventsMaxLenCount: number;
}

const NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export function checkQueueName(what: string, value: string): void {
  if (!NAME_PATTERN.test(value)) throw new TypeError(`${what} must match ${NAME_PATTERN}, got ${JSON.stringify(value)}`);
}

function positive(what: string, value: number, min = 1): number {
  if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`${what} must be an integer ≥ ${min}, got ${value}`);
  return value;
}

/** A BullMQ Queue (producer side) with every job default explicit. */
export function createQueue<Data, Result, Name extends string>(options: QueueFactoryOptions) {
  checkQueueName('queue name', options.name);
  checkQueueName('queue prefix', options.prefix);
  const { jobs } = options;
  return new Queue<Data, Result, Name>(options.name, {
    connection: redisOptions(options.connection, 'command'),
    prefix: options.prefix,
    streams: { events: { maxLen: positive('eventsMaxLenCount', options.eventsMaxLenCount) } },
    defaultJobOptions: {
      attempts: positive('attempts', jobs.attempts),
      backoff: { type: 'exponential', delay: positive('backoffDelayMs', jobs.backoffDelayMs, 0) },
      removeOnComplete: toKeepJobs(jobs.removeOnComplete),
      removeOnFail: toKeepJobs(jobs.removeOnFail),
      stackTraceLimit: positive('stackTraceLimit', jobs.stackTraceLimit, 0),
      sizeLimit: positive('dataLimitBytes', jobs.dataLimitBytes),
    },
  });
}
