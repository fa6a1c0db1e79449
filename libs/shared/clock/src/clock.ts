/** Wall-clock and monotonic time, injected so that domain code stays deterministic. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Monotonic milliseconds, for measuring intervals. */
  monotonicMs(): number;
}

/** A clock that only moves when told to: for tests and simulations. */
export class ManualClock implements Clock {
  private currentMs: number;

  constructor(startMs = 0) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  monotonicMs(): number {
    return this.currentMs;
  }

  advance(deltaMs: number): void {
    if (!(deltaMs >= 0)) throw new TypeError(`ManualClock.advance: deltaMs must be >= 0, got ${deltaMs}`);
    this.currentMs += deltaMs;
  }
}

/** The process's real clock. Only adapters and apps construct it; domain code receives a Clock. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => (globalThis as unknown as { performance: { now(): number } }).performance.now(),
};
