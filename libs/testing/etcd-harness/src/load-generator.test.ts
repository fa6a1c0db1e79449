import { describe, expect, it } from 'vitest';
import { percentile } from './load-generator';

describe('percentile', () => {
  it('takes the nearest rank', () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 0.5)).toBe(50);
    expect(percentile(sorted, 0.99)).toBe(99);
    expect(percentile(sorted, 1)).toBe(100);
    expect(percentile(Float64Array.of(7), 0.99)).toBe(7);
  });

  it('is NaN without samples', () => {
    expect(percentile(new Float64Array(0), 0.5)).toBeNaN();
  });
});
