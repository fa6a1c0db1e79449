import { describe, expect, it } from 'vitest';
import { ReadIndexRounds } from './read-index-rounds';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('ReadIndexRounds', () => {
  it('shares one round among the reads queued before it is asked; later reads wait for the next', async () => {
    const asks: ReturnType<typeof deferred<number>>[] = [];
    const rounds = new ReadIndexRounds({ ask: () => (asks.push(deferred<number>()), asks.at(-1)!.promise), maxWaiting: 100, overloaded: () => new Error('too many') });
    const first = rounds.request();
    // Arrives while round 1 is in flight: round 1 may predate it.
    const second = rounds.request();
    const third = rounds.request();
    expect(asks).toHaveLength(1);
    asks[0]!.resolve(10);
    expect(await first).toBe(10);
    await Promise.resolve();
    expect(asks).toHaveLength(2);
    asks[1]!.resolve(12);
    expect(await second).toBe(12);
    expect(await third).toBe(12);
  });

  it('fails the reads of a failed round and goes on with the next', async () => {
    let calls = 0;
    const rounds = new ReadIndexRounds({ ask: () => (++calls === 1 ? Promise.reject(new Error('no leader')) : Promise.resolve(7)), maxWaiting: 10, overloaded: () => new Error('too many') });
    const failed = rounds.request();
    const next = rounds.request();
    await expect(failed).rejects.toThrow('no leader');
    expect(await next).toBe(7);
  });

  it('refuses beyond maxWaiting', async () => {
    const pending = deferred<number>();
    const rounds = new ReadIndexRounds({ ask: () => pending.promise, maxWaiting: 2, overloaded: () => new Error('too many') });
    const a = rounds.request();
    const b = rounds.request();
    await expect(rounds.request()).rejects.toThrow('too many');
    pending.resolve(3);
    expect([await a, await b]).toEqual([3, 3]);
  });
});
