// The PasswordVerifier the gateway uses: BullMQ workers when Redis is configured and reachable at
// boot, else bcrypt in process (native, on libuv threads) behind a bounded pool.
import type { PasswordVerifier } from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier, EmbeddedPasswordPool } from '@ward/auth/password-hashing';
import { PayloadSealer, QueuePasswordVerifier, parseSealingKeys } from '@ward/auth/password-queue';
import { createRedisConnection, type RedisConnectionOptions } from '@ward/platform/redis-queue';
import type { Logger } from '@ward/platform/logging';
import type { Clock } from '@ward/shared/clock';
import type { GatewayConfig } from '../config';

export interface PasswordTier {
  readonly verifier: PasswordVerifier;
  readonly kind: 'in-process' | 'queue';
  close(): Promise<void>;
}

/** `redis[s]://[user[:password]@]host[:port][/db]` as connection options. */
function redisConnectionFromUrl(url: string, connectTimeoutMs: number, connectionName: string): RedisConnectionOptions {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new TypeError('redis URL: scheme must be redis: or rediss:');
  const dbText = parsed.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0 || db > 15) throw new TypeError('redis URL: database must be 0..15');
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port,
    db,
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    tls: parsed.protocol === 'rediss:',
    connectTimeoutMs,
    reconnectDelayMsMax: 2000,
    connectionName,
  };
}

async function redisReachable(connection: RedisConnectionOptions, timeoutMs: number): Promise<boolean> {
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

function inProcessTier(config: GatewayConfig): PasswordTier {
  const bcrypt = new BcryptPasswordVerifier({ cost: config.bcryptCost, maxVerifyCost: config.bcryptMaxVerifyCost });
  const pool = new EmbeddedPasswordPool(bcrypt, {
    maxConcurrent: config.passwordConcurrencyCount,
    maxQueued: config.passwordQueueCount,
    requestTimeoutMs: config.passwordTimeoutMs,
  });
  return { verifier: pool, kind: 'in-process', close: () => pool.close() };
}

/** Builds the tier named by the config; an unreachable Redis falls back to bcrypt in process. */
export async function createPasswordTier(config: GatewayConfig, deps: { logger: Logger; clock: Clock }): Promise<PasswordTier> {
  if (config.redisUrl === '') return inProcessTier(config);
  const connection = redisConnectionFromUrl(config.redisUrl, config.redisConnectTimeoutMs, `etcd-gateway:${process.pid}`);
  if (!(await redisReachable(connection, config.redisConnectTimeoutMs))) {
    deps.logger.warn({ redisHost: connection.host, redisPort: connection.port }, 'redis unreachable; verifying passwords in process');
    return inProcessTier(config);
  }
  const verifier = await QueuePasswordVerifier.create({
    queueName: config.passwordQueueName,
    prefix: config.passwordQueuePrefix,
    connection,
    sealer: new PayloadSealer(parseSealingKeys(config.passwordPayloadKeys)),
    requestTimeoutMs: config.passwordTimeoutMs,
    maxOutstanding: Math.max(1, config.passwordQueueCount + config.passwordConcurrencyCount),
    attempts: 2,
    backoffDelayMs: 50,
    failedRetention: { ageSeconds: 3600, count: 1000 },
    eventsMaxLenCount: 10_000,
    clock: deps.clock,
  });
  return { verifier, kind: 'queue', close: () => verifier.close() };
}
