// Callers waiting until the applied index reaches some index (a read index, a simple token's
// issuing entry), with a deadline and a bound on how many may wait. A heap by index hands
// applied(index) the k waiters it releases in O(k log n); a waiter that times out leaves the heap
// lazily (skipped when popped, or dropped when the heap is rebuilt from the live waiters once it
// holds more than twice as many).
import { MinHeap } from '@ward/shared/heap';

interface Waiter {
  readonly index: number;
  readonly resolve: (reached: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/** Heap entries of timed-out waiters tolerated before a rebuild, whatever the live count. */
const REBUILD_SLACK_COUNT = 64;

const earlier = (a: Waiter, b: Waiter): boolean => a.index < b.index;

/** Resolves `true` once applied >= index, `false` at the deadline or when closed. */
export class AppliedWaiters {
  /** The live waiters. */
  private readonly waiters = new Set<Waiter>();
  /** The live waiters and some timed-out ones, smallest index first. */
  private byIndex = new MinHeap<Waiter>(earlier);
  private closed = false;

  /** `appliedIndex` reads the state machine's applied index. */
  constructor(
    private readonly maxWaiters: number,
    private readonly appliedIndex: () => number,
  ) {
    if (!Number.isSafeInteger(maxWaiters) || maxWaiters < 1) throw new TypeError('AppliedWaiters: maxWaiters must be a positive integer');
  }

  get size(): number {
    return this.waiters.size;
  }

  /** False when the bound is reached (the caller answers "too many requests"). */
  hasRoom(): boolean {
    return this.waiters.size < this.maxWaiters;
  }

  wait(index: number, timeoutMs: number): Promise<boolean> {
    if (index <= this.appliedIndex()) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        index,
        resolve,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          resolve(false);
          if (this.byIndex.size > 2 * this.waiters.size + REBUILD_SLACK_COUNT) this.byIndex = new MinHeap(earlier, [...this.waiters]);
        }, timeoutMs),
      };
      this.waiters.add(waiter);
      this.byIndex.push(waiter);
    });
  }

  /** The state machine applied up to `index`. */
  applied(index: number): void {
    for (let top = this.byIndex.peek(); top !== undefined && top.index <= index; top = this.byIndex.peek()) {
      this.byIndex.pop();
      if (!this.waiters.delete(top)) continue; // timed out already
      clearTimeout(top.timer);
      top.resolve(true);
    }
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
    this.byIndex = new MinHeap(earlier);
  }
}
