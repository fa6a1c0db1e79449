import { describe, expect, it } from 'vitest';
import { createQueue, createWorker, redisOptions, toKeepJobs, toWorkerKeepJobs, type RedisConnectionOptions } from './index';

const connection: RedisConnectionOptions = {
  host: '127.0.0.1',
  port: 6379,
  db: 0,
  username: undefined,
  password: undefined,
  tls: false,
  connectTimeoutMs: 1000,
  reconnectDelayMsMax: 500,
  connectionName: 'unit',
};

describe('redisOptions', () => {
  it('gives blocking connections the options BullMQ requires, command connections fail-fast ones', () => {
    const blocking = redisOptions(connection, 'blocking');
    const command = redisOptions(connection, 'command');
    expect(blocking.maxRetriesPerRequest).toBeNull();
    expect(blocking.enableOfflineQueue).toBe(true);
    expect(command.maxRetriesPerRequest).toBe(2);
    expect(command.enableOfflineQueue).toBe(true);
    expect(command.retryStrategy?.(1)).toBe(100);
    expect(command.retryStrategy?.(100)).toBe(500);
    expect(command.tls).toBeUndefined();
    expect(redisOptions({ ...connection, tls: true }, 'command').tls).toEqual({});
  });

  it.each<[string, Partial<RedisConnectionOptions>]>([
    ['an empty host', { host: '' }],
    ['port 0', { port: 0 }],
    ['port 70000', { port: 70_000 }],
    ['db 16', { db: 16 }],
    ['a zero connect timeout', { connectTimeoutMs: 0 }],
  ])('refuses %s', (_name, override) => {
    expect(() => redisOptions({ ...connection, ...override }, 'command')).toThrow(TypeError);
  });
});

describe('retention', () => {
  it('maps removal settings to BullMQ’s forms', () => {
    expect(toKeepJobs(true)).toBe(true);
    expect(toKeepJobs({ ageSeconds: 60, count: 10 })).toEqual({ age: 60, count: 10 });
    expect(toWorkerKeepJobs(true)).toEqual({ count: 0 });
    expect(() => toKeepJobs({ ageSeconds: 0, count: 1 })).toThrow(TypeError);
    expect(() => toKeepJobs({ ageSeconds: 1, count: -1 })).toThrow(TypeError);
  });
});

describe('factories check options before any I/O', () => {
  const jobs = {
    attempts: 3,
    backoffDelayMs: 100,
    removeOnComplete: true as const,
    removeOnFail: { ageSeconds: 60, count: 100 },
    stackTraceLimit: 0,
    dataLimitBytes: 4096,
  };

  it.each<[string, Record<string, unknown>]>([
    ['a queue name with a colon', { name: 'a:b' }],
    ['an empty prefix', { prefix: '' }],
    ['zero attempts', { jobs: { ...jobs, attempts: 0 } }],
    ['no event stream bound', { eventsMaxLenCount: 0 }],
  ])('createQueue refuses %s', (_name, override) => {
    expect(() => createQueue({ name: 'q', prefix: 'p', connection, jobs, eventsMaxLenCount: 100, ...override } as never)).toThrow(TypeError);
  });

  const worker = {
    name: 'q',
    prefix: 'p',
    connection,
    processor: async () => 1,
    workerName: 'w',
    concurrencyCount: 1,
    lockDurationMs: 1000,
    stalledIntervalMs: 1000,
    maxStalledCount: 1,
    processorTimeoutMs: 1000,
    drainDelaySeconds: 1,
    removeOnComplete: true as const,
    removeOnFail: { ageSeconds: 60, count: 10 },
  };
  it.each<[string, Record<string, unknown>]>([
    ['zero concurrency', { concurrencyCount: 0 }],
    ['a fractional lock duration', { lockDurationMs: 1.5 }],
    ['a zero stalled interval', { stalledIntervalMs: 0 }],
    ['a processor budget far beyond the lock', { processorTimeoutMs: 100_000 }],
  ])('createWorker refuses %s', (_name, override) => {
    expect(() => createWorker({ ...worker, ...override } as never)).toThrow(TypeError);
  });
});
