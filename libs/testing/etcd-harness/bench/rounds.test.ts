import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../src/index';
import { medianRounds, type Results } from './rounds';

function result(operationsPerSecond: number): LoadResult {
  return { concurrency: 1, operations: operationsPerSecond, errors: 0, elapsedMs: 1000, operationsPerSecond, p50Ms: 1, p99Ms: 2, serverCpuMicros: new Map(), serverActivity: new Map(), clientCpuMicros: 0 };
}

const rounds = (...values: number[]): Results[] => values.map((value) => new Map([['put@1', result(value)]]));

describe('medianRounds', () => {
  it("takes both systems' results from the round whose throughput ratio is the median, and lists every round's ratio", () => {
    const reference = rounds(100, 100, 200);
    const other = rounds(50, 120, 180);
    const paired = medianRounds(reference, other);
    // Ratios 0.5, 1.2, 0.9: the median is the third round's, though neither system's own median is there.
    expect(paired.reference.get('put@1')).toBe(reference[2]!.get('put@1'));
    expect(paired.other.get('put@1')).toBe(other[2]!.get('put@1'));
    expect(paired.ratios.get('put@1')).toEqual([0.5, 1.2, 0.9]);
  });

  it('takes the lower middle round of an even count, and the only round of one', () => {
    const even = medianRounds(rounds(100, 100, 100, 100), rounds(40, 130, 90, 110));
    expect(even.other.get('put@1')!.operationsPerSecond).toBe(90);
    const one = medianRounds(rounds(100), rounds(70));
    expect(one.other.get('put@1')!.operationsPerSecond).toBe(70);
    expect(one.ratios.get('put@1')).toEqual([0.7]);
  });
});
