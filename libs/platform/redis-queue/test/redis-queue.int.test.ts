// Against the real Redis on 127.0.0.1:6379; every test uses its own key prefix and deletes it.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import {
  UnrecoverableError,
  createQueue,
  createQueueEvents,
  createRedisConnection,
  createWorker,
  type Job,
  type QueueEvents,
  type RedisConnectionOptions,
  type Worker,
} from '../src/index';

// Local helpers (libs/testing/redis builds on this library, so it cannot be used here).
function testRedisOptions(connectionName: string): RedisConnectionOptions {
  return { host: '127.0.0.1', port: 6379, db: 0, username: undefined, password: undefined, tls: false, connectTimeoutMs: 2000, reconnectDelayMsMax: 500, connectionName };
}
const uniquePrefix = (label: string): string => `ward-test-${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
const connectTestRedis = (name: string) => createRedisConnection(testRedisOptions(name), 'command');
async function deleteKeys(redis: ReturnType<typeof connectTestRedis>, pattern: string): Promise<void> {
  const keys = await redis.keys(pattern);
  if (keys.length > 0) await redis.del(...keys);
}

const redis = connectTestRedis('redis-queue-int');
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await redis.quit();
});

function setup(label: string, processor: (job: Job<{ n: number }, number, 'square'>, signal: AbortSignal) => Promise<number>, overrides: { processorTimeoutMs?: number; attempts?: number } = {}) {
  const prefix = uniquePrefix(label);
  const connection = testRedisOptions(label);
  const queue = createQueue<{ n: number }, number, 'square'>({
    name: 'q',
    prefix,
    connection,
    jobs: {
      attempts: overrides.attempts ?? 2,
      backoffDelayMs: 10,
      removeOnComplete: true,
      removeOnFail: { ageSeconds: 3600, count: 100 },
      stackTraceLimit: 0,
      dataLimitBytes: 1024,
    },
    eventsMaxLenCount: 1000,
  });
  const worker: Worker<{ n: number }, number, 'square'> = createWorker({
    name: 'q',
    prefix,
    connection,
    processor,
    workerName: `${label}-worker`,
    concurrencyCount: 2,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    maxStalledCount: 1,
    processorTimeoutMs: overrides.processorTimeoutMs ?? 2000,
    drainDelaySeconds: 1,
    removeOnComplete: true,
    removeOnFail: { ageSeconds: 3600, count: 100 },
  });
  cleanups.push(() => deleteKeys(redis, `${prefix}:*`), () => queue.close(), () => worker.close());
  return { prefix, connection, queue, worker };
}

async function eventsFor(prefix: string, connection: ReturnType<typeof testRedisOptions>): Promise<QueueEvents> {
  const events = await createQueueEvents({ name: 'q', prefix, connection, blockingTimeoutMs: 1000 });
  cleanups.push(() => events.close());
  return events;
}

function next(events: QueueEvents, event: 'completed' | 'failed', jobId: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => events.once(`${event}:${jobId}` as 'completed', (args: unknown) => resolve(args as Record<string, unknown>)));
}

describe('redis-queue against Redis', () => {
  it('runs a job to completion and removes it at once (removeOnComplete)', async () => {
    const { prefix, connection, queue, worker } = setup('complete', async (job) => job.data.n * job.data.n);
    const events = await eventsFor(prefix, connection);
    void worker.run();
    const job = await queue.add('square', { n: 12 }, { jobId: 'j1' });
    const completed = await next(events, 'completed', job.id!);
    expect(completed['returnvalue']).toBe(144);
    expect(await queue.getJob('j1')).toBeUndefined();
  });

  it('sees an event written right after createQueueEvents returns (no "$" gap)', async () => {
    const { prefix, connection, queue, worker } = setup('gap', async () => 1);
    void worker.run();
    // Warm the stream so it exists, then subscribe and add at once.
    await queue.add('square', { n: 1 }, { jobId: 'warm' });
    const events = await eventsFor(prefix, connection);
    const job = await queue.add('square', { n: 2 }, { jobId: 'immediate' });
    expect((await next(events, 'completed', job.id!))['jobId']).toBe('immediate');
  });

  it('fails a processor over its time budget with ERR_QUEUE_JOB_TIMEOUT after all attempts, and aborts its signal', async () => {
    let aborted = 0;
    const { prefix, connection, queue, worker } = setup(
      'timeout',
      (_job, signal) =>
        new Promise<number>(() => {
          signal.addEventListener('abort', () => (aborted += 1));
        }),
      { processorTimeoutMs: 200, attempts: 2 },
    );
    const events = await eventsFor(prefix, connection);
    void worker.run();
    const job = await queue.add('square', { n: 3 }, { jobId: 'slow' });
    const failed = await next(events, 'failed', job.id!);
    expect(String(failed['failedReason'])).toMatch(/^ERR_QUEUE_JOB_TIMEOUT/);
    const stored = await queue.getJob('slow');
    expect(stored?.attemptsMade).toBe(2);
    expect(stored?.stacktrace).toEqual([]);
    expect(aborted).toBe(2);
  });

  it('does not retry an UnrecoverableError', async () => {
    let tries = 0;
    const { prefix, connection, queue, worker } = setup('unrecoverable', async () => {
      tries += 1;
      throw new UnrecoverableError('bad payload');
    }, { attempts: 5 });
    const events = await eventsFor(prefix, connection);
    void worker.run();
    await queue.add('square', { n: 4 }, { jobId: 'bad' });
    await next(events, 'failed', 'bad');
    expect(tries).toBe(1);
  });

  it('refuses job data over the size limit', async () => {
    const { queue } = setup('size', async () => 1);
    await expect(queue.add('square', { n: 1, pad: 'x'.repeat(2000) } as never)).rejects.toThrow();
  });
});
