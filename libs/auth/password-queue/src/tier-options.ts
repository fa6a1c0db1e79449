// The configuration options of a service's password tier (the in-process pool and the BullMQ
// tier), named alike in every service (GATEWAY_*, TOKEN_SERVICE_*): what PasswordTierSettings and
// the in-process tier read.
import { BCRYPT_MAX_COST, BCRYPT_MIN_COST, PASSWORD_QUEUE_NAME } from '@ward/auth/password-jobs';
import { int, oneOf, string } from '@ward/platform/config';

/** The options, with the highest stored-hash cost verified by default (password-hashing's). */
export function passwordTierOptions(defaultMaxVerifyCost: number) {
  return {
    bcryptMaxVerifyCost: int({ default: defaultMaxVerifyCost, min: BCRYPT_MIN_COST, max: BCRYPT_MAX_COST, why: 'stored hashes above this cost are refused instead of pinning a thread' }),
    passwordConcurrencyCount: int({ default: 4, min: 1, max: 64, why: 'in-process bcrypt operations at once (keep ≤ UV_THREADPOOL_SIZE)' }),
    passwordQueueCount: int({ default: 256, min: 0, max: 100_000, why: 'bcrypt operations waiting at most; more are refused (too many requests)' }),
    passwordTimeoutMs: int({ default: 10_000, min: 100, max: 120_000, why: 'a hash or verify not answered within this fails' }),
    redisUrl: string({
      default: '',
      maxLengthChars: 1024,
      secret: true,
      pattern: /^$|^rediss?:\/\/\S+$/,
      why: 'Redis of the BullMQ password tier, redis[s]://[user:password@]host:port[/db] (empty: bcrypt in process)',
    }),
    passwordPayloadKeys: string({ default: '', maxLengthChars: 1024, secret: true, why: 'sealing keys shared with the password-verifiers (id:base64url,…)' }),
    passwordQueuePrefix: string({ default: 'ward', pattern: /^[A-Za-z0-9._-]{1,64}$/, why: 'key prefix shared with the password-verifiers' }),
    passwordQueueName: string({ default: PASSWORD_QUEUE_NAME, pattern: /^[A-Za-z0-9._-]{1,64}$/, why: 'queue shared with the password-verifiers' }),
    redisConnectTimeoutMs: int({ default: 2000, min: 100, max: 60_000, why: 'a Redis PING (at boot, then every second) not answered within this counts as Redis unreachable' }),
    passwordFallback: oneOf({
      default: 'none',
      values: ['none', 'in-process'] as const,
      why: "with a Redis URL: none = while Redis is unreachable the service is not ready and password checks fail with 'unhealthy cluster' (it reconnects by itself); in-process = Redis unreachable at boot means bcrypt in process for the process's life",
    }),
  };
}
