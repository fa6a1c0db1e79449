import { QueueEvents } from 'bullmq';
import { createRedisConnection, redisOptions, type RedisConnectionOptions } from './redis-connection';
import { checkQueueName } from './queue-factory';

export interface QueueEventsFactoryOptions {
  readonly name: string;
  readonly prefix: string;
  readonly connection: RedisConnectionOptions;
  /** Longest blocking XREAD on the event stream (the loop then re-issues it). */
  readonly blockingTimeoutMs: number;
}

/**
 * A started QueueEvents that sees every event written after this call returns. (BullMQ starts
 * reading at `$`, so events written before its first blocking read would be missed; here the
 * stream's current last id is read first and reading starts right after it.)
 */
export async function createQueueEvents(options: QueueEventsFactoryOptions): Promise<QueueEvents> {
  checkQueueName('queue name', options.name);
  checkQueueName('queue prefix', options.prefix);
  if (!Number.isSafeInteger(options.blockingTimeoutMs) || options.blockingTimeoutMs < 1) throw new TypeError('queue events: blockingTimeoutMs must be positive');
  const probe = createRedisConnection({ ...options.connection, connectionName: `${options.connection.connectionName}:probe` }, 'command');
  let lastEventId: string;
  try {
    const newest = (await probe.xrevrange(`${options.prefix}:${options.name}:events`, '+', '-', 'COUNT', 1)) as [string, string[]][];
    lastEventId = newest[0]?.[0] ?? '0-0';
  } finally {
    probe.disconnect();
  }
  const events = new QueueEvents(options.name, {
    connection: redisOptions(options.connection, 'blocking'),
    prefix: options.prefix,
    autorun: true,
    lastEventId,
    blockingTimeout: options.blockingTimeoutMs,
  });
  await events.waitUntilReady();
  return events;
}
