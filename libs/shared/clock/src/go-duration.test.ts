import { describe, expect, it } from 'vitest';
import { parseGoDuration } from './go-duration';

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
});
