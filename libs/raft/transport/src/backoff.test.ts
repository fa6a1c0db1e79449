import { describe, expect, it } from 'vitest';
import { SeededRng } from '@ward/shared/clock';
import { DEFAULT_BACKOFF, backoffDelayMs, checkBackoff } from './backoff';
import { MessageQueue } from './message-queue';

describe('backoffDelayMs', () => {
  it('grows exponentially to the bound, without jitter', () => {
    const options = { initialMs: 50, maxMs: 1000, multiplier: 2, jitter: 0 };
    expect([0, 1, 2, 3, 4, 5, 100].map((a) => backoffDelayMs(options, a, () => 0.5))).toEqual([50, 100, 200, 400, 800, 1000, 1000]);
  });

  it('spreads delays by the jitter fraction and never passes maxMs', () => {
    const rng = new SeededRng(7);
    const delays = Array.from({ length: 2000 }, () => backoffDelayMs(DEFAULT_BACKOFF, 2, () => rng.nextFloat()));
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(200 * 0.8);
    expect(Math.max(...delays)).toBeLessThanOrEqual(200 * 1.2);
    expect(new Set(delays.map((d) => Math.round(d))).size).toBeGreaterThan(50);
    const capped = Array.from({ length: 200 }, () => backoffDelayMs(DEFAULT_BACKOFF, 50, () => rng.nextFloat()));
    expect(Math.max(...capped)).toBeLessThanOrEqual(DEFAULT_BACKOFF.maxMs);
  });

  it('rejects nonsense options', () => {
    expect(() => checkBackoff({ ...DEFAULT_BACKOFF, initialMs: 0 })).toThrow(TypeError);
    expect(() => checkBackoff({ ...DEFAULT_BACKOFF, maxMs: 10 })).toThrow(TypeError);
    expect(() => checkBackoff({ ...DEFAULT_BACKOFF, jitter: 2 })).toThrow(TypeError);
  });
});

describe('MessageQueue', () => {
  it('bounds count and bytes and hands out batches in FIFO order', () => {
    const queue = new MessageQueue(5, 100);
    for (let i = 0; i < 5; i++) expect(queue.push(new Uint8Array(10).fill(i), 0)).toBe(true);
    expect(queue.push(new Uint8Array(1), 0)).toBe(false);
    expect(queue.take(2, 1000).map((m) => m[0])).toEqual([0, 1]);
    expect(queue.push(new Uint8Array(71), 0)).toBe(false);
    expect(queue.push(new Uint8Array(70), 0)).toBe(true);
    expect(queue.queuedBytes).toBe(100);
    // Byte budget: 10 + 10 fit in 25, the third does not.
    expect(queue.take(10, 25).map((m) => m[0])).toEqual([2, 3]);
    // A message larger than the budget still goes, alone.
    expect(queue.take(10, 5)).toHaveLength(1);
    expect(queue.take(10, 5)).toHaveLength(1);
    expect(queue.length).toBe(0);
    expect(queue.queuedBytes).toBe(0);
  });

  it('keeps order across many pushes and takes', () => {
    const queue = new MessageQueue(10_000, 1 << 30);
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 97; i++) queue.push(Uint8Array.of(next++ & 0xff), 0);
      for (const message of queue.take(83, 1 << 20)) expect(message[0]).toBe(expected++ & 0xff);
    }
    expect(queue.length).toBe(next - expected);
  });
});
