import { describe, expect, it } from 'vitest';
import { parseGoDuration, protoDurationText } from './go-duration';

describe('Go durations (time.ParseDuration)', () => {
  it.each([
    ['0', 0n],
    ['1s', 1_000_000_000n],
    ['100ms', 100_000_000n],
    ['1h2m3.5s', 3_723_500_000_000n],
    ['-1.5s', -1_500_000_000n],
    ['1.s', 1_000_000_000n],
    ['.5s', 500_000_000n],
    ['2us', 2_000n],
    ['3µs', 3_000n],
  ])('%s is %s ns', (text, nanos) => {
    expect(parseGoDuration(text)).toBe(nanos);
  });

  it.each(['', '1', 's', '.s', '1x', '1s2', ' 1s', '-', '99999999999h'])('rejects %j', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });

  it('prints protojson seconds with 0, 3, 6 or 9 fraction digits', () => {
    expect([0n, 1_000_000_000n, 250_000_000n, 1_500n, 1n, -2_000_000_000n].map(protoDurationText)).toEqual(['0s', '1s', '0.250s', '0.000001500s', '0.000000001s', '-2s']);
  });
});
