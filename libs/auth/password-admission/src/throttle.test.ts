import { describe, expect, it } from 'vitest';
import { MemoryThrottleStore, throttleDelayMs, type ThrottleLimits } from './throttle';

const limits: ThrottleLimits = { freeFailures: 3, addressFreeFailures: 20, baseDelayMs: 100, maxDelayMs: 1000, forgetAfterMs: 60_000 };

function store(maxTracked = 100): { store: MemoryThrottleStore; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { store: new MemoryThrottleStore(limits, maxTracked, () => clock.now), clock };
}

const mallory = { user: 'alice', address: '10.0.0.66' };

describe('throttle delay', () => {
  it('is free for the first failures, then doubles up to the maximum; an address has more free failures', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 64].map((f) => throttleDelayMs(f, limits, 'pair'))).toEqual([0, 0, 0, 100, 200, 400, 800, 1000, 1000]);
    expect([19, 20, 21].map((f) => throttleDelayMs(f, limits, 'address'))).toEqual([0, 100, 200]);
  });
});

describe('MemoryThrottleStore', () => {
  it('lets the free failures through without a wait, then spaces checks of the pair (and the user) by the delay', async () => {
    const { store: s } = store();
    for (let i = 0; i < 3; i++) {
      expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
      await s.failure(mallory);
    }
    // The third failure set a 100 ms delay from its time; the next reservations queue behind it.
    expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 100, throttledBy: ['pair', 'user'] });
    expect(await s.reserve(mallory)).toMatchObject({ kind: 'wait', waitMs: 200 });
    // Another user from the same address (a NAT): not delayed, the address has 20 free failures.
    expect(await s.reserve({ user: 'bob', address: mallory.address })).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
  });

  it('refuses a pair whose next slot is beyond the maximal delay, but never the user', async () => {
    const { store: s } = store();
    for (let i = 0; i < 10; i++) await s.failure(mallory);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await s.reserve(mallory));
    expect(answers.map((a) => a.kind)).toEqual(['wait', 'refused', 'refused', 'refused']);
    expect(answers[1]).toEqual({ kind: 'refused', by: 'pair' });
    // The same user from a clean address: delayed at most the maximum, every time, never refused.
    for (let i = 0; i < 20; i++) {
      const answer = await s.reserve({ user: 'alice', address: '192.168.1.5' });
      expect(answer.kind).toBe('wait');
      expect(answer.kind === 'wait' && answer.waitMs).toBeLessThanOrEqual(limits.maxDelayMs);
    }
  });

  it('an address spraying many users is throttled as an address, and refused beyond the maximal delay', async () => {
    const { store: s } = store();
    for (let i = 0; i < 25; i++) await s.failure({ user: `u${i}`, address: '10.9.9.9' });
    const fresh = await s.reserve({ user: 'never-tried', address: '10.9.9.9' });
    expect(fresh).toMatchObject({ kind: 'wait', throttledBy: ['address'] });
    const next = await s.reserve({ user: 'never-tried-either', address: '10.9.9.9' });
    expect(next).toEqual({ kind: 'refused', by: 'address' });
  });

  it('a success resets the user and the pair; the address forgets after forgetAfterMs', async () => {
    const { store: s, clock } = store();
    for (let i = 0; i < 25; i++) await s.failure({ user: i < 6 ? 'alice' : `u${i}`, address: mallory.address });
    await s.success(mallory);
    clock.now += 2000;
    expect(await s.reserve({ user: 'alice', address: '192.168.1.5' })).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
    // The address still spaces its checks; its first slot is free by now, the next one is not.
    expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
    expect(await s.reserve(mallory)).toMatchObject({ kind: 'wait', throttledBy: ['address'] });
    clock.now += limits.forgetAfterMs + 1;
    expect(await s.reserve(mallory)).toEqual({ kind: 'wait', waitMs: 0, throttledBy: [] });
  });

  it('remembers at most maxTrackedKeys per kind, forgetting the oldest', async () => {
    const { store: s } = store(10);
    for (let i = 0; i < 50; i++) await s.failure({ user: `u${i}`, address: `10.0.0.${i}` });
    expect(s.tracked).toEqual({ user: 10, address: 10, pair: 10 });
  });
});
