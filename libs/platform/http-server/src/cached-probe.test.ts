import { describe, expect, it } from 'vitest';
import { cachedProbe } from './cached-probe';

describe('cachedProbe', () => {
  it('asks at most once per interval, and a throwing check is not ready', async () => {
    let now = 0;
    let calls = 0;
    let answer: boolean | 'throw' = true;
    const probe = cachedProbe(async () => {
      calls += 1;
      if (answer === 'throw') throw new Error('cluster unreachable');
      return answer;
    }, () => now);
    expect(await probe()).toBe(true);
    answer = false;
    now = 999;
    expect(await probe()).toBe(true);
    expect(calls).toBe(1);
    now = 1000;
    expect(await probe()).toBe(false);
    answer = 'throw';
    now = 2000;
    expect(await probe()).toBe(false);
    expect(calls).toBe(3);
  });
});
