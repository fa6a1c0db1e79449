import { InvalidHistoryError } from './errors';
import type { Operation } from './types';
import { DEFAULT_MAX_OPERATIONS } from './validate-history';

interface Pending<I> {
  readonly clientId: number;
  readonly input: I;
  readonly callTime: number;
}

/**
 * Records a history while clients run: `invoke` just before a request leaves, then exactly one of
 * `complete` (the response arrived), `fail` (the server guarantees it did not take effect) or
 * `lose` (the outcome will never be known). Operations still open when `history()` is called are
 * unknown. Times come from the one monotonic source given to the constructor.
 *
 * @example
 * ```ts
 * const recorder = new HistoryRecorder<KvInput, KvOutput>(() => simulator.tick);
 * const op = recorder.invoke(clientId, { kind: 'put', key, value });
 * // ... later
 * recorder.complete(op, { kind: 'put' });
 * checkLinearizability(kvModel, recorder.history());
 * ```
 */
export class HistoryRecorder<I, O> {
  private readonly now: () => number;
  private readonly maxOperations: number;
  private readonly operations: (Operation<I, O> | Pending<I>)[] = [];
  private readonly open = new Set<number>();
  private lastTime = -Infinity;

  constructor(now: () => number, options: { readonly maxOperations?: number } = {}) {
    this.now = now;
    this.maxOperations = options.maxOperations ?? DEFAULT_MAX_OPERATIONS;
  }

  /** Records an invocation; returns the handle that resolves it. */
  invoke(clientId: number, input: I): number {
    if (this.operations.length >= this.maxOperations) {
      throw new InvalidHistoryError(-1, 'too-many-operations', `more than ${this.maxOperations} operations recorded`);
    }
    const handle = this.operations.length;
    this.operations.push({ clientId, input, callTime: this.time(handle) });
    this.open.add(handle);
    return handle;
  }

  /** The response arrived with `output`. */
  complete(handle: number, output: O): void {
    const pending = this.resolve(handle);
    this.operations[handle] = { ...pending, status: 'ok', output, returnTime: this.time(handle) };
  }

  /** The operation definitely did not take effect. */
  fail(handle: number): void {
    const pending = this.resolve(handle);
    this.operations[handle] = { ...pending, status: 'failed', returnTime: this.time(handle) };
  }

  /** The outcome will never be known (timeout, lost connection, crash). */
  lose(handle: number): void {
    const pending = this.resolve(handle);
    this.operations[handle] = { ...pending, status: 'unknown', returnTime: this.time(handle) };
  }

  /** Operations recorded so far; those still open have an unknown outcome. */
  history(): Operation<I, O>[] {
    return this.operations.map((operation, handle) =>
      this.open.has(handle) ? { ...(operation as Pending<I>), status: 'unknown' } : (operation as Operation<I, O>),
    );
  }

  private resolve(handle: number): Pending<I> {
    if (!this.open.has(handle)) throw new TypeError(`HistoryRecorder: operation ${handle} is not open`);
    this.open.delete(handle);
    const { clientId, input, callTime } = this.operations[handle] as Pending<I>;
    return { clientId, input, callTime };
  }

  private time(handle: number): number {
    const time = this.now();
    if (!Number.isFinite(time) || time < this.lastTime) {
      throw new InvalidHistoryError(handle, 'bad-time', `time source went from ${this.lastTime} to ${time}: not monotonic`);
    }
    this.lastTime = time;
    return time;
  }
}
