// The host's side of a compaction (see KVStore.compactionPending): its dropped records are cut
// from the key space in turns of at most `turnMs`, the event loop let in between (a member's Ready
// loop, peers and clients, a replica's feed), one compaction at a time.

/** What the turns cut: the state machine's applier as it is at each turn (a restore replaces it). */
export interface CompactionTarget {
  readonly compactionPending: boolean;
  compactionStep(budget?: number): boolean;
}

export interface CompactionTurnsOptions {
  /** The applier now, or undefined when there is none (a replica between states). */
  readonly target: () => CompactionTarget | undefined;
  /** Longest turn, in ms (default COMPACTION_TURN_MS). */
  readonly turnMs?: number;
  /** Monotonic ms (the host's performance.now). */
  readonly now: () => number;
  /** Runs the next turn after the event loop's pending work (the host's setImmediate). */
  readonly defer: (turn: () => void) => void;
}

/** Longest a turn of cutting holds the event loop. */
export const COMPACTION_TURN_MS = 5;
/** Keys per step within a turn (the clock is read between steps). */
const STEP_KEYS = 2_000;
/** Callbacks waiting for the cutting to end (physical compactions answered then), at most. */
const MAX_WAITERS = 10_000;

export class CompactionTurns {
  private readonly target: () => CompactionTarget | undefined;
  private readonly turnMs: number;
  private readonly now: () => number;
  private readonly defer: (turn: () => void) => void;
  private running = false;
  private stopped = false;
  private waiters: Array<() => void> = [];

  constructor(options: CompactionTurnsOptions) {
    this.target = options.target;
    this.turnMs = options.turnMs ?? COMPACTION_TURN_MS;
    this.now = options.now;
    this.defer = options.defer;
    if (!(this.turnMs > 0)) throw new TypeError(`CompactionTurns: turnMs must be positive, got ${this.turnMs}`);
  }

  /** True while turns are running (a compaction is being cut). */
  get busy(): boolean {
    return this.running;
  }

  /** After entries are applied: starts cutting when a compaction is in progress and no turn runs. */
  kick(): void {
    if (this.running || this.stopped) return;
    if (this.target()?.compactionPending !== true) return;
    this.running = true;
    this.defer(() => this.turn());
  }

  /**
   * Calls `callback` once no compaction is in progress (at once when none is): etcd answers a
   * `physical` compaction after its revisions are gone. Beyond MAX_WAITERS waiting, it is called
   * at once (the compaction is whole for every read already; only its memory is not freed yet).
   */
  whenDone(callback: () => void): void {
    if (this.stopped || this.target()?.compactionPending !== true || this.waiters.length >= MAX_WAITERS) {
      callback();
      return;
    }
    this.waiters.push(callback);
    this.kick();
  }

  /** No more turns; waiting callbacks are dropped (the host stops, and fails what it was answering). */
  stop(): void {
    this.stopped = true;
    this.waiters = [];
  }

  private turn(): void {
    if (this.stopped) {
      this.running = false;
      return;
    }
    const target = this.target();
    let done = target === undefined || !target.compactionPending;
    const until = this.now() + this.turnMs;
    while (!done && this.now() < until) done = target!.compactionStep(STEP_KEYS);
    if (!done) {
      this.defer(() => this.turn());
      return;
    }
    this.running = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const callback of waiters) callback();
  }
}
