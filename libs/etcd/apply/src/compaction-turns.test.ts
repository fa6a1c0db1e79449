import { describe, expect, it } from 'vitest';
import { CompactionTurns, type CompactionTarget } from './compaction-turns';

/** A compaction of `keys` keys, cut `budget` at a time; each step advances the fake clock by 1 ms. */
class FakeCompaction implements CompactionTarget {
  steps = 0;
  constructor(
    public keysLeft: number,
    private readonly clock: { ms: number },
  ) {}
  get compactionPending(): boolean {
    return this.keysLeft > 0;
  }
  compactionStep(budget = 1): boolean {
    this.steps++;
    this.clock.ms += 1;
    this.keysLeft = Math.max(0, this.keysLeft - budget);
    return this.keysLeft === 0;
  }
}

function harness(keys: number) {
  const clock = { ms: 0 };
  const queue: Array<() => void> = [];
  let target: CompactionTarget | undefined = new FakeCompaction(keys, clock);
  const turns = new CompactionTurns({ target: () => target, turnMs: 5, now: () => clock.ms, defer: (turn) => queue.push(turn) });
  const runTurn = (): void => queue.shift()!();
  return { clock, queue, turns, runTurn, target: () => target as FakeCompaction, replace: (next: CompactionTarget | undefined) => (target = next) };
}

describe('CompactionTurns', () => {
  it('does nothing when no compaction is in progress, and answers a waiter at once', () => {
    const h = harness(0);
    h.turns.kick();
    expect(h.queue).toHaveLength(0);
    let answered = false;
    h.turns.whenDone(() => (answered = true));
    expect(answered).toBe(true);
  });

  it('cuts in turns no longer than turnMs, one chain of turns at a time, and answers waiters after the last', () => {
    const h = harness(100_000);
    const order: string[] = [];
    h.turns.whenDone(() => order.push('first'));
    h.turns.kick();
    h.turns.whenDone(() => order.push('second'));
    expect(h.queue).toHaveLength(1);
    let turns = 0;
    while (h.queue.length > 0) {
      const before = h.clock.ms;
      h.runTurn();
      turns++;
      // One step may start before the deadline and end after it: at most turnMs + one step.
      expect(h.clock.ms - before).toBeLessThanOrEqual(6);
      expect(h.queue.length).toBeLessThanOrEqual(1);
      if (h.queue.length > 0) expect(order).toEqual([]);
    }
    expect(h.target().keysLeft).toBe(0);
    expect(turns).toBeGreaterThan(1);
    expect(order).toEqual(['first', 'second']);
    expect(h.turns.busy).toBe(false);
  });

  it('ends when the target is replaced by one with nothing to cut (a snapshot restored)', () => {
    const h = harness(1_000_000);
    let answered = false;
    h.turns.whenDone(() => (answered = true));
    h.runTurn();
    expect(answered).toBe(false);
    h.replace(new FakeCompaction(0, h.clock));
    h.runTurn();
    expect(answered).toBe(true);
    expect(h.queue).toHaveLength(0);
  });

  it('stops: no more turns, waiters dropped, later waiters answered at once', () => {
    const h = harness(1_000_000);
    let dropped = false;
    h.turns.whenDone(() => (dropped = true));
    h.turns.stop();
    h.runTurn();
    expect(h.queue).toHaveLength(0);
    expect(dropped).toBe(false);
    expect(h.turns.busy).toBe(false);
    let later = false;
    h.turns.whenDone(() => (later = true));
    expect(later).toBe(true);
  });

  it('refuses a turn length that is not positive', () => {
    expect(() => new CompactionTurns({ target: () => undefined, turnMs: 0, now: () => 0, defer: () => undefined })).toThrow(TypeError);
  });
});
