// What a service needs to put the BullMQ password tier behind its PasswordVerifier: the Redis URL
// as connection options, a bounded reachability probe, the queue verifier with the tier's fixed
// job settings, and the tier a service's settings name: the BullMQ tier watched for Redis outages,
// or (only when asked for with the fallback option) bcrypt in process when Redis is down at boot.
import type { PasswordTier } from '@ward/auth/password-jobs';
import type { Logger } from '@ward/platform/logging';
import { createRedisConnection, type RedisConnectionOptions } from '@ward/platform/redis-queue';
import type { Clock } from '@ward/shared/clock';
import { PayloadSealer, parseSealingKeys } from './payload-sealer';
import { QueuePasswordVerifier } from './queue-password-verifier';
import { RedisWatchedVerifier } from './redis-watched-verifier';

/** How often a service on the BullMQ tier checks that Redis answers (readiness and Authenticate follow it). */
export const REDIS_PROBE_INTERVAL_MS = 1000;

/** `redis[s]://[user[:password]@]host[:port][/db]` as connection options. */
export function redisConnectionFromUrl(url: string, connectTimeoutMs: number, connectionName: string): RedisConnectionOptions {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new TypeError('redis URL: scheme must be redis: or rediss:');
  const dbText = parsed.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0 || db > 15) throw new TypeError('redis URL: database must be 0..15');
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db,
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    tls: parsed.protocol === 'rediss:',
    connectTimeoutMs,
    reconnectDelayMsMax: 2000,
    connectionName,
  };
}

/** True when Redis answers a PING within `timeoutMs`. */
export async function redisReachable(connection: RedisConnectionOptions, timeoutMs: number): Promise<boolean> {
  const probe = createRedisConnection(connection, 'command');
  probe.on('error', () => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    return (await Promise.race([probe.ping(), timeout])) === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
}

export interface QueueTierOptions {
  readonly connection: RedisConnectionOptions;
  readonly queueName: string;
  readonly prefix: string;
  /** The sealing key ring (`VERIFIER_PAYLOAD_KEYS` syntax). */
  readonly payloadKeys: string;
  readonly requestTimeoutMs: number;
  /** Checks in flight and queued at once from this service. */
  readonly maxOutstanding: number;
  readonly clock: Clock;
}

/** The BullMQ tier's verifier, with the job settings every service uses. */
export function createQueueTierVerifier(options: QueueTierOptions): Promise<QueuePasswordVerifier> {
  return QueuePasswordVerifier.create({
    queueName: options.queueName,
    prefix: options.prefix,
    connection: options.connection,
    sealer: new PayloadSealer(parseSealingKeys(options.payloadKeys)),
    requestTimeoutMs: options.requestTimeoutMs,
    maxOutstanding: Math.max(1, options.maxOutstanding),
    attempts: 2,
    backoffDelayMs: 50,
    failedRetention: { ageSeconds: 3600, count: 1000 },
    eventsMaxLenCount: 10_000,
    clock: options.clock,
  });
}

/** The settings every service names alike (GATEWAY_*, TOKEN_SERVICE_*). */
export interface PasswordTierSettings {
  /** '' for no Redis: the in-process tier. */
  readonly redisUrl: string;
  readonly redisConnectTimeoutMs: number;
  readonly passwordQueueName: string;
  readonly passwordQueuePrefix: string;
  readonly passwordPayloadKeys: string;
  readonly passwordTimeoutMs: number;
  readonly passwordQueueCount: number;
  readonly passwordConcurrencyCount: number;
  /** 'in-process': bcrypt in process for the service's life when Redis is unreachable at boot. */
  readonly passwordFallback: 'none' | 'in-process';
}

/**
 * The tier the settings name. No Redis URL: `inProcess()`. A Redis URL: the BullMQ tier, probed
 * now and every REDIS_PROBE_INTERVAL_MS; while Redis does not answer, checks fail at once with
 * TIER_FAILED and `health()` says why, and it connects by itself once Redis answers. Only with
 * `passwordFallback: 'in-process'` does a Redis unreachable at boot give `inProcess()` instead
 * (logged), for the service's life.
 */
export async function createPasswordTier(
  settings: PasswordTierSettings,
  deps: { readonly logger: Logger; readonly clock: Clock; readonly connectionName: string; readonly inProcess: () => PasswordTier },
): Promise<PasswordTier> {
  if (settings.redisUrl === '') return deps.inProcess();
  const connection = redisConnectionFromUrl(settings.redisUrl, settings.redisConnectTimeoutMs, deps.connectionName);
  const where = `${connection.host}:${connection.port}`;
  if (settings.passwordFallback === 'in-process' && !(await redisReachable(connection, settings.redisConnectTimeoutMs))) {
    deps.logger.warn({ redisHost: connection.host, redisPort: connection.port }, 'redis unreachable; verifying passwords in process (password fallback in-process)');
    return deps.inProcess();
  }
  const probe = createRedisConnection({ ...connection, connectionName: `${deps.connectionName}:probe` }, 'command');
  probe.on('error', () => undefined);
  const watched = new RedisWatchedVerifier({
    where,
    ping: () => pingWithin(probe, settings.redisConnectTimeoutMs),
    connect: () =>
      createQueueTierVerifier({
        connection,
        queueName: settings.passwordQueueName,
        prefix: settings.passwordQueuePrefix,
        payloadKeys: settings.passwordPayloadKeys,
        requestTimeoutMs: settings.passwordTimeoutMs,
        maxOutstanding: settings.passwordQueueCount + settings.passwordConcurrencyCount,
        clock: deps.clock,
      }),
    // The queue's own connections and its event stream: a few round trips on a healthy Redis.
    connectTimeoutMs: settings.redisConnectTimeoutMs * 3,
    logger: deps.logger,
    closeProbe: () => probe.disconnect(),
  });
  await watched.check();
  watched.startProbing(REDIS_PROBE_INTERVAL_MS);
  return { verifier: watched, kind: 'queue', health: () => watched.health(), close: () => watched.close() };
}

/** True when `redis` answers a PING within `timeoutMs` (false on an error or no answer). */
async function pingWithin(redis: ReturnType<typeof createRedisConnection>, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const ping = redis.ping();
    let answer: string | undefined;
    ping.then((value) => (answer = value), () => undefined);
    // After the deadline, I/O already waiting is read first: a PONG that arrived while the event
    // loop was busy elsewhere still counts.
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => setImmediate(() => resolve('timeout')), timeoutMs)));
    const first = await Promise.race([ping, timeout]);
    return first === 'PONG' || answer === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
