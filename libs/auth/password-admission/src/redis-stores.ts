// The BullMQ tier's admission state in Redis, shared by every gateway and token-service on the same
// Redis and kept across their restarts: the failure throttle (throttle.ts's rule, as Lua run
// atomically with Redis's clock) and a cluster-wide bound on one user's checks in flight. Keys
// name a SHA-256 digest of the user name or address, never the name, and hold only counters and
// times: no password, no hash. Every call fails fast while Redis is unreachable (the connection is
// not ready) and is bounded by a timeout, so an Authenticate never hangs on it.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from '@ward/platform/redis-queue';
import { checkThrottleLimits, type CallerKey, type KeyKind, type Reservation, type ThrottleLimits, type ThrottleStore } from './throttle';

/** The time in milliseconds on Redis's clock, and the rule's delay; shared by the scripts below. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free, base, maxd, forget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local function load(k)
  local v = redis.call('HMGET', k, 'f', 'n', 'l')
  local f, n, l = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or now
  if now - l > forget then return 0, 0 end
  return f, n
end
local function delay(f)
  if f < free then return 0 end
  return math.min(maxd, math.floor(base * 2 ^ math.min(f - free, 40)))
end
`;

/** KEYS: address, user. Returns {wait, address throttled, user throttled}, or {-1} refused (address). */
const RESERVE = `${PRELUDE}
local af, an = load(KEYS[1])
local uf, un = load(KEYS[2])
local ad, aw = delay(af), 0
if ad > 0 then
  local slot = math.max(now, an)
  aw = slot - now
  if aw > maxd then return {-1, 0, 0} end
  redis.call('HSET', KEYS[1], 'n', slot + ad)
end
local ud, uw = delay(uf), 0
if ud > 0 then
  local slot = math.max(now, un)
  uw = math.min(slot - now, maxd)
  redis.call('HSET', KEYS[2], 'n', math.min(slot + ud, now + maxd))
end
return {math.max(aw, uw), aw > 0 and 1 or 0, uw > 0 and 1 or 0}
`;

/** KEYS: address, user. One more failure on both. */
const FAILURE = `${PRELUDE}
for i = 1, 2 do
  local f, n = load(KEYS[i])
  f = math.min(64, f + 1)
  redis.call('HSET', KEYS[i], 'f', f, 'n', math.max(n, now + delay(f)), 'l', now)
  redis.call('PEXPIRE', KEYS[i], forget + maxd)
end
return 1
`;

/** KEYS: the user's slot set. ARGV: cap, lease ms, token. 1 when a slot was taken. */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`;

export class RedisUnavailableError extends Error {
  constructor(reason: string) {
    super(`redis unavailable: ${reason}`);
  }
}

/** The key of `name` of `kind` under `prefix` (a digest: names never appear in Redis). */
export function admissionKey(prefix: string, kind: KeyKind | 'slots', name: string): string {
  return `${prefix}:auth:${kind}:${createHash('sha256').update(`${kind}\u0000${name}`).digest('hex').slice(0, 32)}`;
}

/** Runs a Redis command only on a ready connection, within `timeoutMs`. */
async function bounded<T>(redis: Redis, timeoutMs: number, run: () => Promise<T>): Promise<T> {
  if (redis.status !== 'ready') throw new RedisUnavailableError(redis.status);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([run(), new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new RedisUnavailableError('timeout')), timeoutMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RedisAdmissionOptions {
  readonly redis: Redis;
  /** The tier's key prefix (GATEWAY_PASSWORD_QUEUE_PREFIX): shared by every service on the queue. */
  readonly prefix: string;
  /** Longest wait for one Redis call. */
  readonly timeoutMs: number;
}

export class RedisThrottleStore implements ThrottleStore {
  private readonly args: string[];

  constructor(
    private readonly options: RedisAdmissionOptions,
    limits: ThrottleLimits,
  ) {
    checkThrottleLimits(limits);
    this.args = [limits.freeFailures, limits.baseDelayMs, limits.maxDelayMs, limits.forgetAfterMs].map(String);
  }

  async reserve(key: CallerKey): Promise<Reservation> {
    const answer = (await bounded(this.options.redis, this.options.timeoutMs, () => this.options.redis.eval(RESERVE, 2, ...this.keys(key), ...this.args))) as number[];
    const [wait, byAddress, byUser] = answer.map(Number) as [number, number, number];
    if (wait < 0) return { kind: 'refused', by: 'address' };
    const throttledBy: KeyKind[] = [];
    if (byAddress === 1) throttledBy.push('address');
    if (byUser === 1) throttledBy.push('user');
    return { kind: 'wait', waitMs: wait, throttledBy };
  }

  async failure(key: CallerKey): Promise<void> {
    await bounded(this.options.redis, this.options.timeoutMs, () => this.options.redis.eval(FAILURE, 2, ...this.keys(key), ...this.args));
  }

  async success(key: CallerKey): Promise<void> {
    await bounded(this.options.redis, this.options.timeoutMs, () => this.options.redis.del(admissionKey(this.options.prefix, 'user', key.user)));
  }

  private keys(key: CallerKey): [string, string] {
    return [admissionKey(this.options.prefix, 'address', key.address), admissionKey(this.options.prefix, 'user', key.user)];
  }
}

/**
 * At most `perUser` checks of one user in flight over every service sharing the Redis: a flood of
 * one user name cannot take every verifier, whichever gateways it comes through. A slot is a
 * lease (`leaseMs`, the request timeout): a service that dies holding one frees it when it lapses.
 */
export class RedisUserSlots {
  constructor(
    private readonly options: RedisAdmissionOptions & { readonly perUser: number; readonly leaseMs: number },
  ) {
    if (!Number.isSafeInteger(options.perUser) || options.perUser < 1) throw new TypeError('RedisUserSlots: perUser must be a positive integer');
  }

  async acquire(user: string): Promise<(() => void) | undefined> {
    const { redis, timeoutMs } = this.options;
    const key = admissionKey(this.options.prefix, 'slots', user);
    const token = randomBytes(12).toString('base64url');
    const taken = await bounded(redis, timeoutMs, () => redis.eval(ACQUIRE, 1, key, String(this.options.perUser), String(this.options.leaseMs), token));
    if (Number(taken) !== 1) return undefined;
    // Best effort: a release that cannot reach Redis lapses with its lease.
    return () => void bounded(redis, timeoutMs, () => redis.zrem(key, token)).catch(() => undefined);
  }
}
