import { assert } from '@ward/shared/errors';
import { PasswordError, type PasswordVerifier } from '@ward/auth/password-jobs';

export interface EmbeddedPasswordPoolOptions {
  /**
   * bcrypt operations running at once. Keep it at or below the libuv threadpool size
   * (UV_THREADPOOL_SIZE, default 4): the same threads serve file system and DNS work.
   */
  readonly maxConcurrent: number;
  /** Requests waiting for a slot; one more fails at once with TIER_BUSY. */
  readonly maxQueued: number;
  /** A request not answered within this fails with TIER_TIMEOUT (queued ones never start). */
  readonly requestTimeoutMs: number;
}

interface Pending {
  readonly run: () => Promise<unknown>;
  readonly resolve: (value: never) => void;
  readonly reject: (error: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  settled: boolean;
}

/**
 * The password tier when Redis is absent: the same PasswordVerifier contract and the same
 * overload behaviour as the BullMQ client (bounded outstanding requests, a request timeout,
 * TIER_BUSY / TIER_TIMEOUT / TIER_CLOSED), in process. A timed-out bcrypt call cannot be
 * cancelled, so it keeps its slot until it finishes: the concurrency bound always holds.
 */
export class EmbeddedPasswordPool implements PasswordVerifier {
  private readonly queue: Pending[] = [];
  private runningCount = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly inner: PasswordVerifier,
    readonly options: EmbeddedPasswordPoolOptions,
  ) {
    for (const name of ['maxConcurrent', 'maxQueued', 'requestTimeoutMs'] as const) {
      const value = options[name];
      if (!Number.isSafeInteger(value) || value < (name === 'maxQueued' ? 0 : 1)) {
        throw new TypeError(`EmbeddedPasswordPool: ${name} must be a ${name === 'maxQueued' ? 'non-negative' : 'positive'} integer, got ${value}`);
      }
    }
  }

  /** Requests holding a slot, and requests waiting for one. */
  get stats(): { readonly running: number; readonly queued: number } {
    return { running: this.runningCount, queued: this.queue.length };
  }

  hash(password: Uint8Array): Promise<Uint8Array> {
    return this.submit(() => this.inner.hash(password));
  }

  verify(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    return this.submit(() => this.inner.verify(password, hash));
  }

  /** Fails every queued request with TIER_CLOSED and waits for the running ones to finish. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) this.settle(pending, () => pending.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED')));
    if (this.runningCount > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private submit<T>(run: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED'));
    if (this.runningCount >= this.options.maxConcurrent && this.queue.length >= this.options.maxQueued) {
      return Promise.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_BUSY', { limit: this.options.maxConcurrent + this.options.maxQueued }));
    }
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { run, resolve: resolve as (value: never) => void, reject, timer: undefined, settled: false };
      pending.timer = setTimeout(() => this.expire(pending), this.options.requestTimeoutMs);
      if (this.runningCount < this.options.maxConcurrent) this.start(pending);
      else this.queue.push(pending);
      assert(this.runningCount <= this.options.maxConcurrent, 'concurrency bound holds');
      assert(this.queue.length <= this.options.maxQueued, 'queue bound holds');
    });
  }

  private start(pending: Pending): void {
    this.runningCount += 1;
    pending
      .run()
      .then(
        (value) => this.settle(pending, () => pending.resolve(value as never)),
        (error: unknown) => this.settle(pending, () => pending.reject(error)),
      )
      .finally(() => this.release());
  }

  private release(): void {
    this.runningCount -= 1;
    assert(this.runningCount >= 0, 'running count never goes negative');
    const next = this.queue.shift();
    if (next !== undefined) this.start(next);
    if (this.runningCount === 0) for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  private expire(pending: Pending): void {
    const queuedAt = this.queue.indexOf(pending);
    if (queuedAt >= 0) this.queue.splice(queuedAt, 1);
    this.settle(pending, () => pending.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_TIMEOUT', { limit: this.options.requestTimeoutMs })));
  }

  private settle(pending: Pending, action: () => void): void {
    if (pending.settled) return;
    pending.settled = true;
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    action();
  }
}
