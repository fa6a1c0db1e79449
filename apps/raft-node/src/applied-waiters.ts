// Callers waiting until the applied index reaches some index (a read index, a simple token's
// issuing entry), with a deadline and a bound on how many may wait.

interface Waiter {
  readonly index: number;
  readonly resolve: (reached: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/** Resolves `true` once applied >= index, `false` at the deadline or when closed. */
export class AppliedWaiters {
  private readonly waiters = new Set<Waiter>();
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
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** The state machine applied up to `index`. */
  applied(index: number): void {
    for (const waiter of this.waiters) {
      if (waiter.index <= index) {
        clearTimeout(waiter.timer);
        this.waiters.delete(waiter);
        waiter.resolve(true);
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.waiters.clear();
  }
}
