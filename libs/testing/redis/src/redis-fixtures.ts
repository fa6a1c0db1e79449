// Helpers for integration tests against the real Redis on 127.0.0.1:6379: unique key prefixes per
// test, a full dump of every key and value (to prove what is, and is not, stored), cleanup.
import { randomBytes } from 'node:crypto';
import { createRedisConnection, type Redis, type RedisConnectionOptions } from '@ward/platform/redis-queue';

/** Connection options for the test Redis (REDIS_HOST / REDIS_PORT override the defaults). */
export function testRedisOptions(connectionName: string): RedisConnectionOptions {
  return {
    host: process.env['REDIS_HOST'] ?? '127.0.0.1',
    port: Number(process.env['REDIS_PORT'] ?? 6379),
    db: 0,
    username: undefined,
    password: undefined,
    tls: false,
    connectTimeoutMs: 2000,
    reconnectDelayMsMax: 500,
    connectionName,
  };
}

/** A key prefix no other test (or engineer) uses: every key of the test lives under `<prefix>:`. */
export function uniquePrefix(label: string): string {
  return `ward-test-${label}-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** One key and everything stored under it, as strings (binary-safe enough for substring checks). */
export interface RedisEntry {
  readonly key: string;
  readonly type: string;
  readonly values: readonly string[];
}

/** Every key matching `pattern` with all its values (strings, hashes, lists, sets, zsets, streams). */
export async function dumpKeys(redis: Redis, pattern: string): Promise<RedisEntry[]> {
  const entries: RedisEntry[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    for (const key of keys) entries.push(await dumpKey(redis, key));
  } while (cursor !== '0');
  return entries;
}

async function dumpKey(redis: Redis, key: string): Promise<RedisEntry> {
  const type = await redis.type(key);
  let values: string[] = [];
  if (type === 'string') values = [(await redis.get(key)) ?? ''];
  else if (type === 'hash') values = Object.entries(await redis.hgetall(key)).flat();
  else if (type === 'list') values = await redis.lrange(key, 0, -1);
  else if (type === 'set') values = await redis.smembers(key);
  else if (type === 'zset') values = await redis.zrange(key, 0, -1, 'WITHSCORES');
  else if (type === 'stream') {
    const items = (await redis.xrange(key, '-', '+')) as [string, string[]][];
    values = items.flatMap(([id, fields]) => [id, ...fields]);
  }
  return { key, type, values };
}

/** Deletes every key matching `pattern`; returns how many. */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** A command connection to the test Redis. */
export function connectTestRedis(name: string): Redis {
  return createRedisConnection(testRedisOptions(name), 'command');
}
