import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import { backoffDelayMs, sleep } from './backoff';

const bounds = { maxAttemptsCount: 8, baseDelayMs: 20, maxDelayMs: 500 };

describe('backoffDelayMs', () => {
  it('stays within the doubling ceiling and the maximum (full jitter)', () => {
    const rng = new SeededRng(7);
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(500, 20 * 2 ** (attempt - 1));
      for (let i = 0; i < 200; i++) {
        const delay = backoffDelayMs(attempt, bounds, rng);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('is jittered: two gateways do not retry in lockstep', () => {
    const a = Array.from({ length: 20 }, () => backoffDelayMs(6, bounds, new SeededRng(1)));
    const spread = new Set(Array.from({ length: 50 }, (_, i) => backoffDelayMs(6, bounds, new SeededRng(i))));
    expect(new Set(a).size).toBe(1); // same seed, same delay
    expect(spread.size).toBeGreaterThan(10);
  });

  it('refuses attempt numbers below 1', () => {
    expect(() => backoffDelayMs(0, bounds, new SeededRng(1))).toThrow(TypeError);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason', async () => {
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort(new Error('gone'));
    await expect(pending).rejects.toThrow('gone');
  });
});
