// Linearizable reads (etcd's linearizableReadLoop): callers queue up; one ReadIndex request at a
// time is in flight for everyone queued before it was issued; its ReadState gives the index the
// callers must see applied. An unanswered request (no leader, lost message) is re-issued. Request
// contexts are request ids unique across restarts (etcd's reqIDGen): an answer to a request of the
// member's previous life, still in flight, never answers a new one with an older index.
import type { ReadState } from '@ward/raft/core';

interface ReadWaiter {
  readonly resolve: (index: number | undefined) => void;
  readonly timer: NodeJS.Timeout;
  settled: boolean;
}

interface InFlight {
  readonly context: string;
  readonly waiters: ReadWaiter[];
  readonly retry: NodeJS.Timeout;
}

export interface ReadIndexOptions {
  /** Hands a request context to the raft node (RawNode.readIndex) and wakes the loop. */
  readonly issue: (context: Uint8Array) => void;
  /** A fresh id for each request's context, unique across restarts (RequestIdGenerator). */
  readonly nextId: () => bigint;
  /** Re-issue an unanswered request after this long (etcd: 500 ms). */
  readonly retryMs: number;
  readonly maxWaiting: number;
}

export class ReadIndexBatcher {
  private queued: ReadWaiter[] = [];
  private inFlight: InFlight | undefined;
  private waitingCount = 0;
  private closed = false;

  constructor(private readonly options: ReadIndexOptions) {}

  hasRoom(): boolean {
    return !this.closed && this.waitingCount < this.options.maxWaiting;
  }

  /** The read index for a read starting now, or undefined at the deadline. */
  request(timeoutMs: number): Promise<number | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: ReadWaiter = {
        resolve,
        settled: false,
        timer: setTimeout(() => this.settle(waiter, undefined), timeoutMs),
      };
      this.waitingCount++;
      this.queued.push(waiter);
      if (this.inFlight === undefined) this.issueNext();
    });
  }

  /** ReadStates of a Ready: answers the in-flight request whose context matches. */
  onReadStates(states: readonly ReadState[]): void {
    const inFlight = this.inFlight;
    if (inFlight === undefined) return;
    for (const state of states) {
      if (Buffer.from(state.context).toString('hex') !== inFlight.context) continue;
      clearTimeout(inFlight.retry);
      this.inFlight = undefined;
      for (const waiter of inFlight.waiters) this.settle(waiter, state.index);
      if (this.queued.length > 0) this.issueNext();
      return;
    }
  }

  /** Leadership moved: the in-flight request may never be answered; ask again now. */
  leaderChanged(): void {
    if (this.inFlight !== undefined) this.reissue();
  }

  close(): void {
    this.closed = true;
    if (this.inFlight !== undefined) clearTimeout(this.inFlight.retry);
    for (const waiter of [...(this.inFlight?.waiters ?? []), ...this.queued]) this.settle(waiter, undefined);
    this.inFlight = undefined;
    this.queued = [];
  }

  private issueNext(): void {
    const waiters = this.queued.filter((w) => !w.settled);
    this.queued = [];
    if (waiters.length === 0) return;
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64BE(this.options.nextId());
    const context = bytes.toString('hex');
    this.inFlight = { context, waiters, retry: setTimeout(() => this.reissue(), this.options.retryMs) };
    this.options.issue(new Uint8Array(bytes));
  }

  private reissue(): void {
    const inFlight = this.inFlight;
    if (inFlight === undefined) return;
    clearTimeout(inFlight.retry);
    this.inFlight = undefined;
    this.queued = [...inFlight.waiters, ...this.queued];
    this.issueNext();
  }

  private settle(waiter: ReadWaiter, index: number | undefined): void {
    if (waiter.settled) return;
    waiter.settled = true;
    clearTimeout(waiter.timer);
    this.waitingCount--;
    waiter.resolve(index);
  }
}
