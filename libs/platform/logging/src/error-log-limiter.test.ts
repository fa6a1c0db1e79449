import { describe, expect, it } from 'vitest';
import { ErrorLogLimiter, OVERFLOW_CAUSE, errorCause } from './error-log-limiter';

function limiterAt(limits = { burstLines: 3, refillIntervalMs: 1000, maxCauses: 4 }): { limiter: ErrorLogLimiter; clock: { nowMs: number } } {
  const clock = { nowMs: 0 };
  return { limiter: new ErrorLogLimiter(() => clock.nowMs, limits), clock };
}

const logged = (limiter: ErrorLogLimiter, cause: string, times: number): number => {
  let lines = 0;
  for (let i = 0; i < times; i++) if (limiter.admit(cause).log) lines++;
  return lines;
};

describe('ErrorLogLimiter', () => {
  it('a flood of one cause writes its burst, then one line per interval carrying the suppressed count', () => {
    const { limiter, clock } = limiterAt();
    expect(logged(limiter, 'TypeError: x', 10_000)).toBe(3);
    clock.nowMs = 1000;
    expect(limiter.admit('TypeError: x')).toEqual({ log: true, cause: 'TypeError: x', suppressedCount: 9_997 });
    expect(limiter.admit('TypeError: x')).toEqual({ log: false });
    clock.nowMs = 2500;
    expect(limiter.admit('TypeError: x')).toEqual({ log: true, cause: 'TypeError: x', suppressedCount: 1 });
  });

  it('one flooding cause does not silence another', () => {
    const { limiter } = limiterAt();
    logged(limiter, 'TypeError: x', 100);
    expect(limiter.admit('RangeError: y')).toEqual({ log: true, cause: 'RangeError: y', suppressedCount: 0 });
  });

  it('tracks a bounded number of causes: idle ones are forgotten, the rest share the overflow bucket', () => {
    const { limiter, clock } = limiterAt();
    for (let i = 0; i < 4; i++) logged(limiter, `E: ${i}`, 10); // four causes, all throttled
    let lines = 0;
    for (let i = 4; i < 10_000; i++) if (limiter.admit(`E: ${i}`).log) lines++;
    expect(lines).toBe(3); // the overflow bucket's burst
    expect(limiter.trackedCauses).toBe(5);
    clock.nowMs = 60_000; // everything refilled; the suppressed counts are reported once
    expect(limiter.admit('E: 0')).toMatchObject({ log: true, suppressedCount: 7 });
    expect(limiter.admit('E: new')).toMatchObject({ log: true, cause: OVERFLOW_CAUSE, suppressedCount: 9_993 });
    expect(limiter.trackedCauses).toBeLessThanOrEqual(5);
  });

  it('names a cause by class and first message line, bounded in length', () => {
    expect(errorCause(new TypeError('bad\nstack'))).toBe('TypeError: bad');
    expect(errorCause(new Error('x'.repeat(1000))).length).toBe(160);
    expect(errorCause('thrown string')).toBe('string');
  });

  it('refuses limits that are not positive integers', () => {
    expect(() => new ErrorLogLimiter(() => 0, { burstLines: 0, refillIntervalMs: 1, maxCauses: 1 })).toThrow(TypeError);
  });
});
