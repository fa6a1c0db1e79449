import { describe, expect, it } from 'vitest';
import { MemoryThrottleStore, throttleDelayMs, type ThrottleLimits } from './throttle';

const limits: ThrottleLimits = { freeFailures: 3, baseDelayMs: 100, maxDelayMs: 1000, forgetAfterMs: 60_000 };

function store(maxTracked = 100): { store: MemoryThrottleStore; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { store: new MemoryThrottleStore(limits, maxTracked, () => clock.now), clock };
}

const mallory = { user: 'alice', address: '10.0.0.66' };

describe('throttle delay', () => {
  it('is free for the first failures, then doubles up to the maximum', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 64].map((f) => throttleDelayMs(f, limits))).toEqual([0, 0, 0, 100, 200, 400, 800, 1000, 1000]);
  });
});

describe('MemoryThrottleStore', () => {
  it('lets the free failures through without a wait, then spaces checks of the address by the delay', async () => {
    const { store: s } = store();
    for (let i = 0; i < 3; i++) {
      expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
      await s.failure(mallory);
    }
    // The third failure set a 100 ms delay from its time; the next reservations queue behind it.
    const first = await s.reserve(mallory);
    const second = await s.reserve(mallory);
    expect(first).toMatchObject({ kind: 'wait', waitMs: 100 });
    expect(first.kind === 'wait' && first.throttledBy).toEqual(['address', 'user']);
    expect(second).toMatchObject({ kind: 'wait', waitMs: 200 });
  });

  it('refuses an address whose next slot is beyond the maximal delay, but never the user', async () => {
    const { store: s } = store();
    for (let i = 0; i < 10; i++) await s.failure(mallory);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await s.reserve(mallory));
    expect(answers.map((a) => a.kind)).toEqual(['wait', 'refused', 'refused', 'refused']);
    expect(answers[1]).toEqual({ kind: 'refused', by: 'address' });
    // The same user from a clean address: delayed at most the maximum, every time, never refused.
    for (let i = 0; i < 20; i++) {
      const answer = await s.reserve({ user: 'alice', address: '192.168.1.5' });
      expect(answer.kind).toBe('wait');
      expect(answer.kind === 'wait' && answer.waitMs).toBeLessThanOrEqual(limits.maxDelayMs);
    }
  });

  it('a success resets the user; the address forgets after forgetAfterMs', async () => {
    const { store: s, clock } = store();
    for (let i = 0; i < 6; i++) await s.failure(mallory);
    await s.success(mallory);
    clock.now += 1000;
    expect(await s.reserve({ user: 'alice', address: '192.168.1.5' })).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
    // The address still spaces its checks (800 ms after 6 failures); the first slot is free by now.
    expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
    expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 800, throttledBy: ['address'] });
    clock.now += limits.forgetAfterMs + 1;
    expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
  });

  it('remembers at most maxTrackedKeys per kind, forgetting the oldest', async () => {
    const { store: s } = store(10);
    for (let i = 0; i < 50; i++) await s.failure({ user: `u${i}`, address: `10.0.0.${i}` });
    expect(s.tracked).toEqual({ user: 10, address: 10 });
  });
});
