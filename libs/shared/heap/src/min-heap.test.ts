import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MinHeap } from './index';

const less = (a: number, b: number): boolean => a < b;

describe('MinHeap', () => {
  it('pops in ascending order whatever was built, pushed and popped before (against a sorted list)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 })), fc.array(fc.option(fc.integer({ min: -50, max: 50 }))), (initial, steps) => {
        const heap = new MinHeap(less, [...initial]);
        const model = [...initial].sort((a, b) => a - b);
        for (const step of steps) {
          if (step === null) {
            expect(heap.pop()).toBe(model.shift());
          } else {
            heap.push(step);
            model.push(step);
            model.sort((a, b) => a - b);
          }
          expect(heap.size).toBe(model.length);
          expect(heap.peek()).toBe(model[0]);
        }
        const rest: number[] = [];
        for (let item = heap.pop(); item !== undefined; item = heap.pop()) rest.push(item);
        expect(rest).toEqual(model);
      }),
      { numRuns: 500 },
    );
  });

  it('restores the order after the top item moved later in place (topChanged)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { minLength: 1 }), fc.integer({ min: 0, max: 200 }), (values, raise) => {
        const boxes = values.map((value) => ({ value }));
        const heap = new MinHeap<{ value: number }>((a, b) => a.value < b.value, [...boxes]);
        heap.peek()!.value += raise;
        heap.topChanged();
        const popped: number[] = [];
        for (let box = heap.pop(); box !== undefined; box = heap.pop()) popped.push(box.value);
        expect(popped).toEqual(boxes.map((box) => box.value).sort((a, b) => a - b));
      }),
      { numRuns: 500 },
    );
  });
});
