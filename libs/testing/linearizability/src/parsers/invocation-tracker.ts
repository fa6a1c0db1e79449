import { HistoryParseError } from '../errors';
import type { Operation } from '../types';

interface OpenInvocation<I> {
  readonly input: I;
  readonly callTime: number;
  readonly line: number;
  /** Index reserved in the output so operations keep invocation order. */
  readonly slot: number;
}

/**
 * Pairs Jepsen-style invocations with their completions, per process. A process has at most one
 * operation in flight; an invocation still open at the end has an unknown outcome.
 */
export class InvocationTracker<I, O> {
  private readonly open = new Map<number, OpenInvocation<I>>();
  private readonly operations: (Operation<I, O> | undefined)[] = [];

  /** Records an invocation; the previous operation of `process` must have completed. */
  invoke(process: number, input: I, time: number, line: number): void {
    const pending = this.open.get(process);
    if (pending !== undefined) {
      throw new HistoryParseError(
        line,
        'overlapping-invocation',
        `line ${line}: process ${process} invokes again while its invocation of line ${pending.line} is open`,
      );
    }
    this.open.set(process, { input, callTime: time, line, slot: this.operations.length });
    this.operations.push(undefined);
  }

  /** The open invocation of `process`, or a parse error for a completion without one. */
  pending(process: number, line: number): I {
    const pending = this.open.get(process);
    if (pending === undefined) {
      throw new HistoryParseError(line, 'unmatched-completion', `line ${line}: process ${process} completes nothing`);
    }
    return pending.input;
  }

  /** Completes the open invocation of `process`. */
  complete(process: number, completion: { status: 'ok'; output: O } | { status: 'unknown' | 'failed' }, time: number, line: number): void {
    this.pending(process, line);
    const pending = this.open.get(process) as OpenInvocation<I>;
    this.open.delete(process);
    const base = { clientId: process, input: pending.input, callTime: pending.callTime, returnTime: time };
    this.operations[pending.slot] =
      completion.status === 'ok' ? { ...base, status: 'ok', output: completion.output } : { ...base, status: completion.status };
  }

  /** The operations in invocation order; invocations never completed have an unknown outcome. */
  finish(): Operation<I, O>[] {
    for (const [process, pending] of this.open) {
      this.operations[pending.slot] = { clientId: process, input: pending.input, callTime: pending.callTime, status: 'unknown' };
    }
    this.open.clear();
    return this.operations as Operation<I, O>[];
  }
}
