import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PasswordError } from '@ward/auth/password-jobs';
import { createLogger } from '@ward/platform/logging';
import { createMetrics } from '@ward/platform/metrics';
import { PasswordAdmission } from './password-admission';
import { MemoryThrottleStore } from './throttle';

const logger = createLogger({ name: 'test', level: 'silent' });

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A check that finishes when the test says so. */
function gate(): { promise: Promise<string>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<string>((resolve) => (open = () => resolve('ok')));
  return { promise, open };
}

function admission(overrides: Partial<ConstructorParameters<typeof PasswordAdmission>[0]> = {}): PasswordAdmission {
  return new PasswordAdmission({
    maxInFlight: 1,
    queue: { maxQueued: 10, maxQueuedPerUser: 10, maxQueuedPerAddress: 10 },
    queueTimeoutMs: 60_000,
    maxDelayed: 10,
    refusalHoldMs: 0,
    throttle: new MemoryThrottleStore({ freeFailures: 1, addressFreeFailures: 100, baseDelayMs: 1000, maxDelayMs: 4000, forgetAfterMs: 600_000 }, 100, () => Date.now()),
    logger,
    nowMs: () => Date.now(),
    ...overrides,
  });
}

const neutral = () => 'neutral' as const;

describe('PasswordAdmission', () => {
  it('runs checks in fair turn: a user arriving behind a flood goes after one turn of it, not after all of it', async () => {
    const a = admission();
    const order: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const start = (user: string, id: string) => {
      const g = gate();
      gates.set(id, g);
      return a.run({ user, address: '10.0.0.1' }, () => (order.push(id), g.promise), neutral);
    };
    const runs = [start('root', 'r0'), start('root', 'r1'), start('root', 'r2'), start('root', 'r3')];
    await vi.advanceTimersByTimeAsync(0);
    runs.push(start('bob', 'b0'));
    await vi.advanceTimersByTimeAsync(0);
    for (const id of ['r0', 'r1', 'b0', 'r2', 'r3']) {
      await vi.advanceTimersByTimeAsync(0);
      gates.get(id)?.open();
      await vi.advanceTimersByTimeAsync(0);
    }
    await Promise.all(runs);
    expect(order).toEqual(['r0', 'r1', 'b0', 'r2', 'r3']);
  });

  it('refuses at once beyond the queue bound with TIER_BUSY (too many requests)', async () => {
    const metrics = createMetrics({ prefix: 't_', collectProcessMetrics: false });
    const a = admission({ queue: { maxQueued: 1, maxQueuedPerUser: 10, maxQueuedPerAddress: 10 }, metrics });
    const g = gate();
    const first = a.run({ user: 'u', address: 'x' }, () => g.promise, neutral);
    await vi.advanceTimersByTimeAsync(0);
    const second = a.run({ user: 'v', address: 'y' }, () => Promise.resolve('ok'), neutral);
    await vi.advanceTimersByTimeAsync(0);
    const third = await a.run({ user: 'w', address: 'z' }, () => Promise.resolve('ok'), neutral).catch((error: unknown) => error);
    expect(third).toBeInstanceOf(PasswordError);
    expect((third as PasswordError).code).toBe('ERR_AUTH_PASSWORD_TIER_BUSY');
    expect((third as PasswordError).reason).toBe('queue-full');
    expect(a.stats).toEqual({ queued: 1, inFlight: 1, delayed: 0 });
    expect(await metrics.render()).toContain('t_auth_refused_total{reason="queue-full"} 1');
    g.open();
    expect(await first).toBe('ok');
    expect(await second).toBe('ok');
    expect(a.stats).toEqual({ queued: 0, inFlight: 0, delayed: 0 });
  });

  it('delays the next check after failures, and a success resets the user', async () => {
    const a = admission({ maxInFlight: 4 });
    const key = { user: 'alice', address: '10.0.0.7' };
    const fail = () => a.run(key, () => Promise.reject(new Error('wrong')), () => 'failure').catch(() => undefined);
    await fail();
    let ran = false;
    const delayed = a.run(key, async () => ((ran = true), 'ok'), () => 'success');
    await vi.advanceTimersByTimeAsync(10);
    expect(ran).toBe(false);
    expect(a.stats.delayed).toBe(1);
    await vi.advanceTimersByTimeAsync(4000);
    expect(await delayed).toBe('ok');
    expect(ran).toBe(true);
    // The user is reset; a check from a clean address goes straight through.
    let again = false;
    const clean = a.run({ user: 'alice', address: '10.0.0.8' }, async () => ((again = true), 'ok'), () => 'success');
    await vi.advanceTimersByTimeAsync(0);
    expect(again).toBe(true);
    await clean;
  });

  it('an unreachable throttle store fails at once with TIER_FAILED', async () => {
    const a = admission({
      throttle: { reserve: () => Promise.reject(new Error('down')), failure: async () => undefined, success: async () => undefined },
    });
    const error = await a.run({ user: 'u', address: 'x' }, () => Promise.resolve('ok'), neutral).catch((e: unknown) => e);
    expect((error as PasswordError).code).toBe('ERR_AUTH_PASSWORD_TIER_FAILED');
  });

  it('a user at its cluster-wide slot bound is refused (user-busy), and the slot is released after a check', async () => {
    let held = 0;
    const a = admission({
      maxInFlight: 4,
      userSlots: { acquire: async () => (held >= 1 ? undefined : ((held += 1), () => (held -= 1))) },
    });
    const g = gate();
    const first = a.run({ user: 'u', address: 'x' }, () => g.promise, neutral);
    await vi.advanceTimersByTimeAsync(0);
    const second = await a.run({ user: 'u', address: 'y' }, () => Promise.resolve('ok'), neutral).catch((e: unknown) => e);
    expect((second as PasswordError).reason).toBe('user-busy');
    g.open();
    await first;
    expect(held).toBe(0);
    expect(a.stats.inFlight).toBe(0);
  });
});
