// The PasswordVerifier behind Issue: BullMQ password-verifiers when Redis is configured, else bcrypt
// in process behind a bounded pool (the gateway's two tiers, from the same libraries).
import type { PasswordVerifier } from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier, EmbeddedPasswordPool } from '@ward/auth/password-hashing';
import { PayloadSealer, QueuePasswordVerifier, parseSealingKeys } from '@ward/auth/password-queue';
import type { Clock } from '@ward/shared/clock';
import type { TokenServiceConfig } from './config';

export interface PasswordTier {
  readonly verifier: PasswordVerifier;
  readonly kind: 'in-process' | 'queue';
  close(): Promise<void>;
}

/** `redis[s]://[user[:password]@]host[:port][/db]`. */
function redisConnection(url: string, connectTimeoutMs: number) {
  const parsed = new URL(url);
  const db = parsed.pathname.replace(/^\//, '') === '' ? 0 : Number(parsed.pathname.slice(1));
  if (!Number.isInteger(db) || db < 0 || db > 15) throw new TypeError('TOKEN_SERVICE_REDIS_URL: database must be 0..15');
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db,
    username: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
    password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
    tls: parsed.protocol === 'rediss:',
    connectTimeoutMs,
    reconnectDelayMsMax: 2000,
    connectionName: `token-service:${process.pid}`,
  };
}

export async function createPasswordTier(config: TokenServiceConfig, clock: Clock): Promise<PasswordTier> {
  if (config.redisUrl === '') {
    const bcrypt = new BcryptPasswordVerifier({ cost: config.bcryptCost, maxVerifyCost: config.bcryptMaxVerifyCost });
    const pool = new EmbeddedPasswordPool(bcrypt, { maxConcurrent: config.passwordConcurrencyCount, maxQueued: config.passwordQueueCount, requestTimeoutMs: config.passwordTimeoutMs });
    return { verifier: pool, kind: 'in-process', close: () => pool.close() };
  }
  const verifier = await QueuePasswordVerifier.create({
    queueName: config.passwordQueueName,
    prefix: config.passwordQueuePrefix,
    connection: redisConnection(config.redisUrl, config.redisConnectTimeoutMs),
    sealer: new PayloadSealer(parseSealingKeys(config.passwordPayloadKeys)),
    requestTimeoutMs: config.passwordTimeoutMs,
    maxOutstanding: Math.max(1, config.passwordQueueCount + config.passwordConcurrencyCount),
    attempts: 2,
    backoffDelayMs: 50,
    failedRetention: { ageSeconds: 3600, count: 1000 },
    eventsMaxLenCount: 10_000,
    clock,
  });
  return { verifier, kind: 'queue', close: () => verifier.close() };
}
