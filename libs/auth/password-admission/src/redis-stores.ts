// The BullMQ tier's admission state in Redis, shared by every gateway and token-service on the same
// Redis and kept across their restarts: the failure throttle (throttle.ts's rule, as Lua run
// atomically with Redis's clock) and a cluster-wide bound on one user's checks in flight. Keys
// name a SHA-256 digest of the user name or address, never the name, and hold only counters and
// times: no password, no hash. Every call fails fast while Redis is unreachable (the connection is
// not ready) and is bounded by a timeout, so an Authenticate never hangs on it.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from '@ward/platform/redis-queue';
import { KEY_KINDS, checkThrottleLimits, keyName, type CallerKey, type KeyKind, type Reservation, type ThrottleLimits, type ThrottleStore } from './throttle';

/** The time in milliseconds on Redis's clock, and the rule's delay; shared by the scripts below. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free, addressFree, base, maxd, forget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local function load(k)
  local v = redis.call('HMGET', k, 'f', 'n', 'l')
  local f, n, l = tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or now
  if now - l > forget then return 0, 0 end
  return f, n
end
-- KEYS[1] pair, KEYS[2] address, KEYS[3] user (throttle.ts's KEY_KINDS order)
local function delay(i, f)
  local fr = free
  if i == 2 then fr = addressFree end
  if f < fr then return 0 end
  return math.min(maxd, math.floor(base * 2 ^ math.min(f - fr, 40)))
end
`;

/**
 * KEYS: pair, address, user. Returns {wait, pair, address, user throttled (1/0)}, or {-1, i}
 * refused by key i (a pair or an address with more than the maximal delay ahead).
 */
const RESERVE = `${PRELUDE}
local slots, wait, by = {}, 0, {0, 0, 0}
for i = 1, 3 do
  local f, n = load(KEYS[i])
  local d = delay(i, f)
  if d > 0 then
    local slot = math.max(now, n)
    local w = slot - now
    if i < 3 then
      if w > maxd then return {-1, i} end
      slots[i] = slot + d
    else
      w = math.min(w, maxd)
      slots[i] = math.min(slot + d, now + maxd)
    end
    if w > 0 then by[i] = 1 end
    wait = math.max(wait, w)
  end
end
for i = 1, 3 do
  if slots[i] ~= nil then redis.call('HSET', KEYS[i], 'n', slots[i]) end
end
return {wait, by[1], by[2], by[3]}
`;

/** KEYS: pair, address, user. One more failure on each. */
const FAILURE = `${PRELUDE}
for i = 1, 3 do
  local f, n = load(KEYS[i])
  f = math.min(64, f + 1)
  redis.call('HSET', KEYS[i], 'f', f, 'n', math.max(n, now + delay(i, f)), 'l', now)
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
    this.args = [limits.freeFailures, limits.addressFreeFailures, limits.baseDelayMs, limits.maxDelayMs, limits.forgetAfterMs].map(String);
  }

  async reserve(key: CallerKey): Promise<Reservation> {
    const answer = ((await bounded(this.options.redis, this.options.timeoutMs, () => this.options.redis.eval(RESERVE, 3, ...this.keys(key), ...this.args))) as unknown[]).map(Number);
    if (answer[0]! < 0) return { kind: 'refused', by: KEY_KINDS[answer[1]! - 1] ?? 'address' };
    return { kind: 'wait', waitMs: answer[0]!, throttledBy: KEY_KINDS.filter((_, i) => answer[i + 1] === 1) };
  }

  async failure(key: CallerKey): Promise<void> {
    await bounded(this.options.redis, this.options.timeoutMs, () => this.options.redis.eval(FAILURE, 3, ...this.keys(key), ...this.args));
  }

  async success(key: CallerKey): Promise<void> {
    await bounded(this.options.redis, this.options.timeoutMs, () => this.options.redis.del(admissionKey(this.options.prefix, 'user', key.user), admissionKey(this.options.prefix, 'pair', keyName('pair', key))));
  }

  /** In KEY_KINDS order: pair, address, user. */
  private keys(key: CallerKey): string[] {
    return KEY_KINDS.map((kind) => admissionKey(this.options.prefix, kind, keyName(kind, key)));
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
