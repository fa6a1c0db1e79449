// Linearizable reads served by the read replica share ReadIndex rounds, as etcd's read loop does:
// one round at a time is in flight, for every read that arrived before it was asked; reads that
// arrive meanwhile wait for the next round (the one in flight may predate them, and a read must
// see every write acknowledged before it started).

interface RoundWaiter {
  readonly resolve: (index: number) => void;
  readonly reject: (error: unknown) => void;
}

export interface ReadIndexRoundsOptions {
  /** Asks the cluster for a read index (a quorum-confirmed commit index). */
  readonly ask: () => Promise<number>;
  /** Reads waiting at most; beyond, `request` rejects with `overloaded()`. */
  readonly maxWaiting: number;
  readonly overloaded: () => Error;
}

export class ReadIndexRounds {
  private queued: RoundWaiter[] = [];
  private inFlight = false;
  private waiting = 0;

  constructor(private readonly options: ReadIndexRoundsOptions) {}

  /** The read index for a read starting now. */
  request(): Promise<number> {
    if (this.waiting >= this.options.maxWaiting) return Promise.reject(this.options.overloaded());
    this.waiting += 1;
    return new Promise<number>((resolve, reject) => {
      this.queued.push({ resolve, reject });
      if (!this.inFlight) this.next();
    });
  }

  private next(): void {
    const round = this.queued;
    this.queued = [];
    if (round.length === 0) return;
    this.inFlight = true;
    const settle = (each: (waiter: RoundWaiter) => void): void => {
      this.inFlight = false;
      this.waiting -= round.length;
      for (const waiter of round) each(waiter);
      this.next();
    };
    this.options.ask().then(
      (index) => settle((waiter) => waiter.resolve(index)),
      (error: unknown) => settle((waiter) => waiter.reject(error)),
    );
  }
}
