// ioredis connections with every option explicit. The one place ward builds Redis options.
import { Redis, type RedisOptions as IORedisOptions } from 'ioredis';
import type { RedisOptions } from 'bullmq';

export interface RedisConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  /** Give up a connection attempt after this. */
  readonly connectTimeoutMs: number;
  /** Longest pause between reconnection attempts (backoff grows 100 ms per attempt up to it). */
  readonly reconnectDelayMsMax: number;
  /** Shown by `CLIENT LIST`: which process and role holds the connection. */
  readonly connectionName: string;
}

/**
 * - `command`: a producer's connection (Queue.add, reads). While disconnected a command waits for
 *   at most 2 reconnection attempts, then fails: callers learn of an outage in bounded time.
 * - `blocking`: Worker and QueueEvents connections. BullMQ needs `maxRetriesPerRequest: null`
 *   (a blocking read must wait through reconnections) and the offline queue.
 */
export type RedisConnectionRole = 'command' | 'blocking';

/** The options object handed to BullMQ (and to ioredis for direct connections). */
export function redisOptions(options: RedisConnectionOptions, role: RedisConnectionRole): RedisOptions {
  checkConnectionOptions(options);
  return {
    host: options.host,
    port: options.port,
    db: options.db,
    username: options.username,
    password: options.password,
    tls: options.tls ? {} : undefined,
    connectTimeout: options.connectTimeoutMs,
    connectionName: options.connectionName,
    maxRetriesPerRequest: role === 'blocking' ? null : 2,
    enableOfflineQueue: true,
    enableReadyCheck: true,
    lazyConnect: false,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, options.reconnectDelayMsMax),
  };
}

/** A direct connection (health checks, tooling, tests). The caller quits it. */
export function createRedisConnection(options: RedisConnectionOptions, role: RedisConnectionRole): Redis {
  return new Redis(redisOptions(options, role) as IORedisOptions);
}

export type { Redis } from 'ioredis';

function checkConnectionOptions(options: RedisConnectionOptions): void {
  if (options.host.length === 0) throw new TypeError('redis: host must not be empty');
  if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65_535) throw new TypeError(`redis: port ${options.port} is invalid`);
  if (!Number.isInteger(options.db) || options.db < 0 || options.db > 15) throw new TypeError(`redis: db ${options.db} is invalid`);
  for (const name of ['connectTimeoutMs', 'reconnectDelayMsMax'] as const) {
    if (!Number.isSafeInteger(options[name]) || options[name] <= 0) throw new TypeError(`redis: ${name} must be a positive integer`);
  }
}
