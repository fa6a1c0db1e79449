// The password-verifier process minus its entry point: a BullMQ worker answering sealed
// password jobs with bcrypt, plus /healthz, /readyz and /metrics. Run as many as you like.
import { hostname } from 'node:os';
import type { Clock } from '@ward/shared/clock';
import type { Logger } from '@ward/platform/logging';
import { LATENCY_BUCKETS_SECONDS, createMetrics } from '@ward/platform/metrics';
import { createHttpServer } from '@ward/platform/http-server';
import { createRedisConnection, createWorker, type Job, type RedisConnectionOptions } from '@ward/platform/redis-queue';
import { BcryptPasswordVerifier } from '@ward/auth/password-hashing';
import { PayloadSealer, createPasswordJobProcessor, parseSealingKeys } from '@ward/auth/password-queue';
import type { PasswordResultEnvelope } from '@ward/auth/password-jobs';
import type { VerifierConfig } from './config';
import { instrumentedProcessor } from './job-instrumentation';

export interface PasswordVerifierDeps {
  readonly logger: Logger;
  readonly clock: Clock;
  /** libuv's threadpool size (UV_THREADPOOL_SIZE, default 4), for metrics and a warning. */
  readonly threadpoolSize: number;
}

export interface PasswordVerifierService {
  readonly httpPort: number;
  readonly workerName: string;
  /** Stops taking jobs, lets running ones finish (up to shutdownGraceMs), closes everything. Idempotent. */
  close(): Promise<void>;
}

export function redisConnectionOf(config: VerifierConfig, connectionName: string): RedisConnectionOptions {
  return {
    host: config.redisHost,
    port: config.redisPort,
    db: Number(config.redisDb),
    username: config.redisUsername === '' ? undefined : config.redisUsername,
    password: config.redisPassword === '' ? undefined : config.redisPassword,
    tls: config.redisTls,
    connectTimeoutMs: config.redisConnectTimeoutMs,
    reconnectDelayMsMax: 2000,
    connectionName,
  };
}

export async function startPasswordVerifier(config: VerifierConfig, deps: PasswordVerifierDeps): Promise<PasswordVerifierService> {
  const workerName = config.workerName === '' ? `${hostname()}:${process.pid}` : config.workerName;
  const log = deps.logger.child({ queue: config.queueName, worker: workerName });
  const hasher = new BcryptPasswordVerifier({ cost: config.bcryptCost, maxVerifyCost: config.bcryptMaxVerifyCost });
  const sealer = new PayloadSealer(parseSealingKeys(config.payloadKeys));
  const metrics = createMetrics({ prefix: 'ward_password_verifier_', collectProcessMetrics: true });
  metrics.gauge({ name: 'bcrypt_cost', help: 'log2 rounds of new hashes' }).set(config.bcryptCost);
  metrics.gauge({ name: 'uv_threadpool_size', help: 'libuv threads bcrypt runs on' }).set(deps.threadpoolSize);
  metrics.gauge({ name: 'concurrency', help: 'jobs processed at once' }).set(config.concurrencyCount);
  const processor = instrumentedProcessor(createPasswordJobProcessor({ sealer, hasher, clock: deps.clock }), {
    log,
    clock: deps.clock,
    jobs: metrics.counter({ name: 'jobs_total', help: 'jobs finished, by job name and outcome', labelNames: ['name', 'outcome'] }),
    durations: metrics.histogram({ name: 'job_duration_seconds', help: 'job processing time', labelNames: ['name'], buckets: LATENCY_BUCKETS_SECONDS }),
    inFlight: metrics.gauge({ name: 'jobs_in_flight', help: 'jobs being processed' }),
  });
  const worker = createWorker<unknown, PasswordResultEnvelope, string>({
    name: config.queueName,
    prefix: config.queuePrefix,
    connection: redisConnectionOf(config, `password-verifier:${workerName}`),
    processor: (job: Job<unknown, PasswordResultEnvelope, string>) => processor(job),
    workerName,
    concurrencyCount: config.concurrencyCount,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    maxStalledCount: config.maxStalledCount,
    processorTimeoutMs: config.jobTimeoutMs,
    drainDelaySeconds: config.drainDelaySeconds,
    removeOnComplete: true,
    removeOnFail: { ageSeconds: config.failedRetentionSeconds, count: config.failedRetentionCount },
  });
  worker.on('error', (error) => log.error({ err: error }, 'worker error'));
  // Readiness probe: its own small connection (BullMQ does not expose the worker's).
  const probe = createRedisConnection(redisConnectionOf(config, `password-verifier:${workerName}:probe`), 'command');
  probe.on('error', () => undefined); // state is read from probe.status; reconnection is automatic
  const http = createHttpServer({
    logger: log,
    metrics,
    bodyLimitBytes: 1024,
    requestTimeoutMs: 5000,
    keepAliveTimeoutMs: 5000,
    readiness: () => worker.isRunning() && probe.status === 'ready',
  });
  await http.listen({ host: config.httpHost, port: config.httpPort });
  await worker.waitUntilReady();
  worker.run().catch((error: unknown) => log.error({ err: error }, 'worker stopped with an error'));
  if (config.concurrencyCount > deps.threadpoolSize) {
    log.warn({ concurrency: config.concurrencyCount, threadpoolSize: deps.threadpoolSize }, 'concurrency exceeds the libuv threadpool; jobs will wait for threads');
  }
  const address = http.server.address();
  const httpPort = typeof address === 'object' && address !== null ? address.port : config.httpPort;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= closeInOrder(log, [
    ['worker', () => closeWorkerWithGrace(worker, config.shutdownGraceMs)],
    ['http', () => http.close()],
    ['probe', () => probe.quit()],
  ]));
  return { httpPort, workerName, close };
}

/** Waits for running jobs up to the grace period, then closes without waiting. */
async function closeWorkerWithGrace(worker: { close(force?: boolean): Promise<void> }, graceMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const graceful = worker.close(false);
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), graceMs)));
  const outcome = await Promise.race([graceful.then(() => 'closed' as const), expired]);
  clearTimeout(timer);
  if (outcome === 'expired') await worker.close(true);
}

/** Runs every step in order; a failing step is logged and the rest still run (bullmq's close()). */
async function closeInOrder(log: Logger, steps: readonly [string, () => Promise<unknown>][]): Promise<void> {
  for (const [name, step] of steps) {
    try {
      await step();
    } catch (error) {
      log.error({ err: error, step: name }, 'shutdown step failed');
    }
  }
  log.info('password verifier closed');
}
