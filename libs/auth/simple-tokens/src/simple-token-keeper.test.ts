import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { SimpleTokenKeeper, SimpleTokenTable } from './index';

describe('SimpleTokenKeeper (single-owner mode, injected clock)', () => {
  // The spec's live etcd 3.4.23 observation with --auth-token-ttl 4: a token used every 2 s stayed
  // valid for 12 s; after 6 s idle it was invalid.
  it('reproduces etcd 3.4.23 with ttl=4s: used every 2s stays valid; 6s idle expires', () => {
    const clock = new ManualClock(1_000_000);
    const table = new SimpleTokenTable({ ttlMs: 4000 });
    const keeper = new SimpleTokenKeeper(table, clock);
    const { token } = table.assign({ prefix: 'qLVEbLmctfpktPPy', index: 51, username: 'root', nowMs: clock.nowMs() });
    for (let elapsedMs = 0; elapsedMs < 12_000; elapsedMs += 2000) {
      clock.advance(2000);
      keeper.sweep();
      expect(keeper.resolve(token)?.username).toBe('root');
    }
    clock.advance(6000);
    expect(keeper.sweep()).toBe(1);
    expect(keeper.resolve(token)).toBeUndefined();
    expect(table.size).toBe(0);
  });

  it('treats an expired-but-unswept token as invalid and never revives it', () => {
    const clock = new ManualClock(0);
    const table = new SimpleTokenTable({ ttlMs: 1000 });
    const keeper = new SimpleTokenKeeper(table, clock);
    const { token } = table.assign({ prefix: 'abcdefghijklmnop', index: 1, username: 'u', nowMs: 0 });
    clock.advance(1000);
    expect(keeper.resolve(token)).toBeUndefined();
    clock.advance(0);
    expect(table.lookup(token, 999)).toBeDefined(); // still held until the sweep…
    expect(keeper.sweep()).toBe(1); // …which removes it
  });
});
