import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DelayLine } from './delay-line';

describe('DelayLine', () => {
  it('releases chunks when due and never out of order, whatever the jittered delays', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 100 })), { maxLength: 200 }), (steps) => {
        const line = new DelayLine();
        let nowMs = 0;
        let pushed = 0;
        const released: number[] = [];
        for (const [advanceMs, delayMs] of steps) {
          nowMs += advanceMs;
          const dueMs = line.push(Uint8Array.of(pushed & 0xff), nowMs, delayMs);
          expect(dueMs).toBeGreaterThanOrEqual(nowMs + delayMs);
          pushed++;
          for (const chunk of line.takeDue(nowMs)) released.push(chunk[0]!);
        }
        for (const chunk of line.takeDue(nowMs + 1000)) released.push(chunk[0]!);
        expect(released).toEqual(Array.from({ length: pushed }, (_, i) => i & 0xff));
        expect(line.isEmpty).toBe(true);
        expect(line.heldBytes).toBe(0);
      }),
    );
  });

  it('holds a chunk until its time, counts held bytes, and gives everything up on takeAll', () => {
    const line = new DelayLine();
    line.push(new Uint8Array(10), 0, 50);
    line.push(new Uint8Array(5), 10, 5);
    expect(line.takeDue(49)).toEqual([]);
    expect(line.heldBytes).toBe(15);
    expect(line.nextDueMs()).toBe(50);
    expect(line.takeDue(50).map((c) => c.length)).toEqual([10, 5]);
    line.push(new Uint8Array(3), 60, 1000);
    expect(line.takeAll().map((c) => c.length)).toEqual([3]);
    expect(line.nextDueMs()).toBeUndefined();
  });
});
