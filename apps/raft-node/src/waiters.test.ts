import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppliedWaiters } from './applied-waiters';
import { ProposalWaiters } from './proposals';
import { ReadIndexBatcher } from './read-index';
import { RequestIdGenerator } from './request-ids';
import { TokenTtlKeeper } from './token-ttl';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const OK = { ok: true as const, header: { revision: 2 }, result: { type: 'put' as const, response: { revision: 2 } } };

describe('ProposalWaiters', () => {
  it('resolves on apply, times out, refuses beyond its bound, and stops', async () => {
    const waiters = new ProposalWaiters(2);
    const a = waiters.register(1n, 1000);
    const b = waiters.register(2n, 1000);
    expect(waiters.hasRoom()).toBe(false);
    waiters.applied(1n, OK);
    waiters.applied(99n, OK); // someone else's entry: ignored
    expect(await a).toEqual({ kind: 'applied', result: OK });
    vi.advanceTimersByTime(1000);
    expect(await b).toEqual({ kind: 'timeout' });
    const c = waiters.register(3n, 1000);
    waiters.close();
    expect(await c).toEqual({ kind: 'stopped' });
    expect(() => new ProposalWaiters(0)).toThrow(TypeError);
  });
});

describe('AppliedWaiters', () => {
  it('answers at once when applied, later when it gets there, false at the deadline', async () => {
    let applied = 5;
    const waiters = new AppliedWaiters(10, () => applied);
    expect(await waiters.wait(5, 100)).toBe(true);
    const later = waiters.wait(7, 100);
    const never = waiters.wait(100, 100);
    applied = 7;
    waiters.applied(7);
    expect(await later).toBe(true);
    vi.advanceTimersByTime(100);
    expect(await never).toBe(false);
    expect(waiters.size).toBe(0);
  });

  it('releases exactly the waiters at or below the applied index, skipping those that timed out, also after many timeouts', async () => {
    const waiters = new AppliedWaiters(1_000, () => 0);
    const expired = Array.from({ length: 300 }, (_, i) => waiters.wait(10 + (i % 7), 50));
    vi.advanceTimersByTime(50);
    expect(await Promise.all(expired)).toEqual(expired.map(() => false));
    const order: number[] = [];
    const pending = [30, 12, 25, 12, 40].map((index) => waiters.wait(index, 1_000).then((reached) => order.push(reached ? index : -index)));
    expect(waiters.size).toBe(5);
    waiters.applied(25);
    await Promise.resolve();
    expect(order.sort((a, b) => a - b)).toEqual([12, 12, 25]);
    expect(waiters.size).toBe(2);
    waiters.applied(35);
    waiters.close();
    await Promise.all(pending);
    expect(order.sort((a, b) => a - b)).toEqual([-40, 12, 12, 25, 30]);
    expect(waiters.size).toBe(0);
  });
});

describe('ReadIndexBatcher', () => {
  it('batches everyone queued before a request is issued, re-issues unanswered ones, and times out', async () => {
    const issued: string[] = [];
    const ids = new RequestIdGenerator(0x1n, 1_700_000_000_000);
    const batcher = new ReadIndexBatcher({ issue: (context) => issued.push(Buffer.from(context).toString('hex')), nextId: () => ids.next(), retryMs: 50, maxWaiting: 10 });
    const first = batcher.request(1000);
    const second = batcher.request(1000); // queued behind the first (in flight)
    expect(issued.length).toBe(1);
    batcher.onReadStates([{ index: 4, context: Buffer.from(issued[0]!, 'hex') }]);
    expect(await first).toBe(4);
    expect(issued.length).toBe(2); // the queued one got its own request, issued after the first answer
    vi.advanceTimersByTime(50); // unanswered: re-issued with a fresh context
    expect(issued.length).toBe(3);
    batcher.onReadStates([{ index: 9, context: Buffer.from(issued[1]!, 'hex') }]); // stale context: ignored
    batcher.onReadStates([{ index: 6, context: Buffer.from(issued[2]!, 'hex') }]);
    expect(await second).toBe(6);
    const third = batcher.request(120);
    vi.advanceTimersByTime(120);
    expect(await third).toBeUndefined();
  });
});

describe('ReadIndexBatcher across a restart', () => {
  it('a late answer to the previous process\'s request does not answer the restarted one (contexts are unique across restarts)', async () => {
    const before: string[] = [];
    const beforeIds = new RequestIdGenerator(0x2n, 1_700_000_000_000);
    const crashed = new ReadIndexBatcher({ issue: (context) => before.push(Buffer.from(context).toString('hex')), nextId: () => beforeIds.next(), retryMs: 500, maxWaiting: 10 });
    void crashed.request(1000);
    // The member restarts; the leader's answer to the old request (index 4) is still on its way.
    const after: string[] = [];
    const afterIds = new RequestIdGenerator(0x2n, 1_700_000_005_000);
    const restarted = new ReadIndexBatcher({ issue: (context) => after.push(Buffer.from(context).toString('hex')), nextId: () => afterIds.next(), retryMs: 500, maxWaiting: 10 });
    const read = restarted.request(1000);
    expect(after[0]).not.toBe(before[0]);
    restarted.onReadStates([{ index: 4, context: Buffer.from(before[0]!, 'hex') }]); // the stale answer: ignored
    restarted.onReadStates([{ index: 9, context: Buffer.from(after[0]!, 'hex') }]);
    expect(await read).toBe(9);
    crashed.close();
  });
});

describe('TokenTtlKeeper on a new leader', () => {
  it('tracks the state machine\'s tokens it never saw issued (restored from a snapshot), so they expire', () => {
    const keeper = new TokenTtlKeeper({ ttlMs: 1000, maxTokens: 10, maxTokensPerProposal: 10, reproposeAfterMs: 5000 });
    keeper.touch('seen.5', 0);
    keeper.renewAll(100, ['seen.5', 'restored.3', 'restored.4']);
    expect(keeper.size).toBe(3);
    expect(keeper.expired(1099, () => true)).toEqual([]);
    expect(keeper.expired(1100, () => true).sort()).toEqual(['restored.3', 'restored.4', 'seen.5']);
  });
});

describe('TokenTtlKeeper bound', () => {
  it('forgets dead tokens at every pass, so a full keeper never evicts a live token in their place', () => {
    const keeper = new TokenTtlKeeper({ ttlMs: 1000, maxTokens: 2, maxTokensPerProposal: 10, reproposeAfterMs: 5000 });
    const live = new Set(['live.1', 'new.3']);
    keeper.touch('live.1', 0);
    keeper.touch('dead.2', 0); // its user's password changed since: gone from the state machine
    expect(keeper.expired(500, (t) => live.has(t))).toEqual([]);
    keeper.touch('new.3', 600);
    expect(keeper.expired(1000, (t) => live.has(t))).toEqual(['live.1']);
    expect(keeper.expired(1600, (t) => live.has(t))).toEqual(['new.3']);
  });
});

describe('RequestIdGenerator', () => {
  it('puts the member in the top 16 bits and counts in the low 48', () => {
    const ids = new RequestIdGenerator(0xabcd1234n, 1_700_000_000_000);
    const a = ids.next();
    const b = ids.next();
    expect(a >> 48n).toBe(0x1234n);
    expect(b - a).toBe(1n);
    expect(new RequestIdGenerator(0x1234n, 1_700_000_000_001).next()).not.toBe(a);
  });
});

describe('TokenTtlKeeper', () => {
  it('expires tokens idle past the TTL (sliding), forgets dead ones, does not repropose at once', () => {
    const keeper = new TokenTtlKeeper({ ttlMs: 1000, maxTokens: 3, maxTokensPerProposal: 10, reproposeAfterMs: 5000 });
    keeper.touch('a.1', 0);
    keeper.touch('b.2', 0);
    keeper.touch('c.3', 0);
    keeper.touch('b.2', 900); // used: slides
    // (a clock that starts near 0, as a fresh process's monotonic clock does, proposes at once)
    expect(keeper.expired(1000, (t) => t !== 'c.3')).toEqual(['a.1']);
    expect(keeper.size).toBe(2); // c.3 no longer live: forgotten
    expect(keeper.expired(1200, () => true)).toEqual([]); // a.1 just proposed
    expect(keeper.expired(1900, () => true)).toEqual(['b.2']);
    expect(keeper.expired(6000, () => true)).toEqual(['a.1']); // proposed again after reproposeAfterMs
    keeper.renewAll(7000, ['a.1', 'b.2']);
    expect(keeper.expired(7500, () => true)).toEqual([]);
    keeper.touch('d.4', 7500);
    keeper.touch('e.5', 7500); // beyond maxTokens: the oldest tracked is dropped
    expect(keeper.size).toBe(3);
  });
});
