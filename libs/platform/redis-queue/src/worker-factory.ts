import { Worker, type Job } from 'bullmq';
import { CodedError } from '@ward/shared/errors';
import { redisOptions, type RedisConnectionOptions } from './redis-connection';
import { checkQueueName } from './queue-factory';
import { toWorkerKeepJobs, type JobRemoval, type JobRetention } from './retention';

/** A processor exceeded its time budget; the job fails this try (and is retried if tries remain). */
export class JobTimeoutError extends CodedError<'ERR_QUEUE_JOB_TIMEOUT'> {
  constructor(readonly timeoutMs: number) {
    super('ERR_QUEUE_JOB_TIMEOUT', `ERR_QUEUE_JOB_TIMEOUT: job exceeded ${timeoutMs} ms`);
  }
}

/** What a processor receives: the job, and a signal aborted when its time budget is spent. */
export type JobProcessor<Data, Result, Name extends string> = (job: Job<Data, Result, Name>, signal: AbortSignal) => Promise<Result>;

export interface WorkerFactoryOptions<Data, Result, Name extends string> {
  readonly name: string;
  readonly prefix: string;
  readonly connection: RedisConnectionOptions;
  readonly processor: JobProcessor<Data, Result, Name>;
  /** Shown on jobs this worker takes (`processedBy`). */
  readonly workerName: string;
  /** Jobs processed at once by this worker. */
  readonly concurrencyCount: number;
  /** A job's lock lives this long unless renewed (renewed every half); a dead worker's jobs stall after it. */
  readonly lockDurationMs: number;
  /** How often this worker looks for stalled jobs (locks that expired) and returns them to the queue. */
  readonly stalledIntervalMs: number;
  /** Times a job may stall before it fails for good. */
  readonly maxStalledCount: number;
  /** A processor that has not settled after this fails the try with JobTimeoutError. */
  readonly processorTimeoutMs: number;
  /** Seconds a blocking fetch waits on an empty queue. */
  readonly drainDelaySeconds: number;
  readonly removeOnComplete: JobRemoval;
  readonly removeOnFail: JobRetention;
}

/** A BullMQ Worker with every option explicit and a per-job time budget. Not started: call `run()`. */
export function createWorker<Data, Result, Name extends string>(options: WorkerFactoryOptions<Data, Result, Name>): Worker<Data, Result, Name> {
  checkQueueName('queue name', options.name);
  checkQueueName('queue prefix', options.prefix);
  for (const name of ['concurrencyCount', 'lockDurationMs', 'stalledIntervalMs', 'maxStalledCount', 'processorTimeoutMs', 'drainDelaySeconds'] as const) {
    if (!Number.isSafeInteger(options[name]) || options[name] < 1) throw new TypeError(`worker: ${name} must be a positive integer, got ${options[name]}`);
  }
  if (options.processorTimeoutMs >= options.lockDurationMs * 10) {
    throw new TypeError('worker: processorTimeoutMs should stay within a few lock renewals (below 10 × lockDurationMs)');
  }
  const processor = withTimeBudget(options.processor, options.processorTimeoutMs);
  return new Worker<Data, Result, Name>(options.name, processor, {
    connection: redisOptions(options.connection, 'blocking'),
    prefix: options.prefix,
    name: options.workerName,
    autorun: false,
    concurrency: options.concurrencyCount,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    maxStalledCount: options.maxStalledCount,
    drainDelay: options.drainDelaySeconds,
    removeOnComplete: toWorkerKeepJobs(options.removeOnComplete),
    removeOnFail: toWorkerKeepJobs(options.removeOnFail),
  });
}

function withTimeBudget<Data, Result, Name extends string>(processor: JobProcessor<Data, Result, Name>, timeoutMs: number) {
  return (job: Job<Data, Result, Name>): Promise<Result> => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const budget = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new JobTimeoutError(timeoutMs));
      }, timeoutMs);
    });
    return Promise.race([processor(job, controller.signal), budget]).finally(() => clearTimeout(timer));
  };
}
