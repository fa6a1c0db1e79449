import { describe, expect, it } from 'vitest';
import { protoDurationText } from './go-duration';

describe('protojson durations', () => {
  it('prints protojson seconds with 0, 3, 6 or 9 fraction digits', () => {
    expect([0n, 1_000_000_000n, 250_000_000n, 1_500n, 1n, -2_000_000_000n].map(protoDurationText)).toEqual(['0s', '1s', '0.250s', '0.000001500s', '0.000000001s', '-2s']);
  });
});
