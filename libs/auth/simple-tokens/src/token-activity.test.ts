import { describe, expect, it } from 'vitest';
import { TokenActivity } from './index';

describe('TokenActivity', () => {
  it('deduplicates uses and drains in batches, oldest first', () => {
    const activity = new TokenActivity(10);
    for (const token of ['a', 'b', 'a', 'c', 'b']) expect(activity.touch(token)).toBe(true);
    expect(activity.size).toBe(3);
    expect(activity.drain(2)).toEqual(['a', 'b']);
    expect(activity.drain(5)).toEqual(['c']);
    expect(activity.drain(5)).toEqual([]);
  });

  it('is bounded: a new token beyond the bound is refused, a known one is still accepted', () => {
    const activity = new TokenActivity(2);
    expect(activity.touch('a')).toBe(true);
    expect(activity.touch('b')).toBe(true);
    expect(activity.touch('c')).toBe(false);
    expect(activity.touch('a')).toBe(true);
    expect(activity.size).toBe(2);
  });

  it('rejects invalid bounds', () => {
    expect(() => new TokenActivity(0)).toThrow(TypeError);
    expect(() => new TokenActivity(1).drain(0)).toThrow(TypeError);
  });
});
