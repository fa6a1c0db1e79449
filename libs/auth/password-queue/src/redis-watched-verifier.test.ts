import { describe, expect, it } from 'vitest';
import { PasswordError } from '@ward/auth/password-jobs';
import { createLogger } from '@ward/platform/logging';
import { RedisWatchedVerifier, type ClosableVerifier } from './redis-watched-verifier';

const logger = createLogger({ name: 'test', level: 'silent' });

function fakeQueueVerifier(): ClosableVerifier & { closed: number; fail?: PasswordError } {
  const fake = {
    closed: 0,
    fail: undefined as PasswordError | undefined,
    hash: async () => {
      if (fake.fail) throw fake.fail;
      return new Uint8Array([1]);
    },
    verify: async () => {
      if (fake.fail) throw fake.fail;
      return true;
    },
    close: async () => void (fake.closed += 1),
  };
  return fake;
}

function watched(options: { answers: () => boolean; connect?: () => Promise<ClosableVerifier> }) {
  let pings = 0;
  let connects = 0;
  const queue = fakeQueueVerifier();
  const verifier = new RedisWatchedVerifier({
    where: '127.0.0.1:6380',
    ping: async () => ((pings += 1), options.answers()),
    connect: options.connect ?? (async () => ((connects += 1), queue)),
    connectTimeoutMs: 1000,
    logger,
  });
  return { verifier, queue, counts: () => ({ pings, connects }) };
}

async function failure(promise: Promise<unknown>): Promise<PasswordError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PasswordError);
  return error as PasswordError;
}

describe('RedisWatchedVerifier', () => {
  it('is not ready and fails at once with TIER_FAILED before Redis ever answered', async () => {
    const { verifier, counts } = watched({ answers: () => false });
    expect(verifier.health()).toEqual({ ready: false, reason: 'password tier: connecting to redis at 127.0.0.1:6380' });
    await verifier.check();
    expect(verifier.health()).toEqual({ ready: false, reason: 'password tier: redis at 127.0.0.1:6380 unreachable' });
    const error = await failure(verifier.verify(new Uint8Array([1]), new Uint8Array()));
    expect(error.code).toBe('ERR_AUTH_PASSWORD_TIER_FAILED');
    expect(error.reason).toBe('redis-unreachable');
    expect(counts()).toEqual({ pings: 1, connects: 0 });
  });

  it('connects once Redis answers, follows an outage and recovers without a new connection', async () => {
    let up = false;
    const { verifier, counts } = watched({ answers: () => up });
    await verifier.check();
    up = true;
    await verifier.check();
    expect(verifier.health()).toEqual({ ready: true });
    expect(await verifier.hash(new Uint8Array([7]))).toEqual(new Uint8Array([1]));
    up = false;
    await verifier.check();
    // One failed probe of a tier that was up is not yet an outage (a stalled event loop, a slow PING).
    expect(verifier.health().ready).toBe(true);
    await verifier.check();
    expect(verifier.health().ready).toBe(false);
    expect((await failure(verifier.hash(new Uint8Array([7])))).reason).toBe('redis-unreachable');
    up = true;
    await verifier.check();
    expect(await verifier.verify(new Uint8Array([7]), new Uint8Array())).toBe(true);
    expect(counts()).toEqual({ pings: 5, connects: 1 });
  });

  it('counts a failed connect as unreachable and tries again on the next probe', async () => {
    let attempts = 0;
    const queue = fakeQueueVerifier();
    const { verifier } = watched({
      answers: () => true,
      connect: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('NOSCRIPT');
        return queue;
      },
    });
    await verifier.check();
    expect(verifier.health().ready).toBe(false);
    await verifier.check();
    expect(verifier.health().ready).toBe(true);
    expect(attempts).toBe(2);
  });

  it('joins a probe already running', async () => {
    const { verifier, counts } = watched({ answers: () => true });
    await Promise.all([verifier.check(), verifier.check(), verifier.check()]);
    expect(counts()).toEqual({ pings: 1, connects: 1 });
  });

  it('passes the queue verifier’s own errors through', async () => {
    const { verifier, queue } = watched({ answers: () => true });
    await verifier.check();
    queue.fail = new PasswordError('ERR_AUTH_PASSWORD_TIER_TIMEOUT', { limit: 10 });
    expect((await failure(verifier.hash(new Uint8Array([1])))).code).toBe('ERR_AUTH_PASSWORD_TIER_TIMEOUT');
  });

  it('closes the queue verifier once and then refuses with TIER_CLOSED', async () => {
    const { verifier, queue } = watched({ answers: () => true });
    await verifier.check();
    await verifier.close();
    await verifier.close();
    expect(queue.closed).toBe(1);
    expect((await failure(verifier.hash(new Uint8Array([1])))).code).toBe('ERR_AUTH_PASSWORD_TIER_CLOSED');
  });

  it('refuses a non-positive connect timeout', () => {
    expect(() => new RedisWatchedVerifier({ where: 'x:1', ping: async () => true, connect: async () => fakeQueueVerifier(), connectTimeoutMs: 0, logger })).toThrow(TypeError);
  });
});
