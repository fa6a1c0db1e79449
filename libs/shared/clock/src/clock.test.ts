import { describe, expect, it } from 'vitest';
import { ManualClock, SeededRng } from './index';

describe('SeededRng', () => {
  it('replays the same stream for the same seed and differs for another seed', () => {
    const a = new SeededRng(42);
    const b = new SeededRng(42);
    const c = new SeededRng(43);
    const streamA = Array.from({ length: 64 }, () => a.nextUint32());
    const streamB = Array.from({ length: 64 }, () => b.nextUint32());
    const streamC = Array.from({ length: 64 }, () => c.nextUint32());
    expect(streamA).toEqual(streamB);
    expect(streamA).not.toEqual(streamC);
  });

  it('stays within bounds and covers every value of a small range', () => {
    const rng = new SeededRng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const value = rng.nextInt(10);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(10);
      seen.add(value);
      const float = rng.nextFloat();
      expect(float).toBeGreaterThanOrEqual(0);
      expect(float).toBeLessThan(1);
    }
    expect(seen.size).toBe(10);
  });

  it('is roughly uniform (chi-square over 16 buckets)', () => {
    const rng = new SeededRng(1);
    const buckets = new Array<number>(16).fill(0);
    const samples = 160_000;
    for (let i = 0; i < samples; i++) buckets[rng.nextInt(16)]! += 1;
    const expected = samples / 16;
    const chiSquare = buckets.reduce((sum, count) => sum + (count - expected) ** 2 / expected, 0);
    // 15 degrees of freedom: p = 0.001 at 37.7.
    expect(chiSquare).toBeLessThan(37.7);
  });

  it('rejects invalid seeds and bounds', () => {
    expect(() => new SeededRng(1.5)).toThrow(TypeError);
    expect(() => new SeededRng(1).nextInt(0)).toThrow(TypeError);
  });
});

describe('ManualClock', () => {
  it('moves only when advanced, never backwards', () => {
    const clock = new ManualClock(1000);
    expect(clock.nowMs()).toBe(1000);
    clock.advance(250);
    expect(clock.nowMs()).toBe(1250);
    expect(clock.monotonicMs()).toBe(1250);
    expect(() => clock.advance(-1)).toThrow(TypeError);
  });
});
