import type { Clock } from '@ward/shared/clock';

/**
 * The output a model receives for an operation whose outcome was never learnt (a timeout, a lost
 * connection after the request was sent). Such an output is unconstrained: the model must accept
 * it and apply the input as if it had succeeded with whatever output the state dictates.
 */
export const UNKNOWN_OUTPUT: unique symbol = Symbol('ward.linearizability.unknownOutput');

/** The type of {@link UNKNOWN_OUTPUT}. */
export type UnknownOutput = typeof UNKNOWN_OUTPUT;

/** Fields every recorded operation has. */
export interface OperationBase<I> {
  /** The client (process, session) that issued the operation. Used in diagnostics only. */
  readonly clientId: number;
  /** What the client asked for. */
  readonly input: I;
  /**
   * When the client invoked the operation, read from ONE monotonic source shared by every client
   * of the history (simulated ticks, or one process's hrtime). Any unit; finite.
   */
  readonly callTime: number;
}

/** An operation that completed and whose response the client saw. */
export interface CompletedOperation<I, O> extends OperationBase<I> {
  readonly status: 'ok';
  /** What the client saw. A failed compare-and-swap that the server answered is `ok` here. */
  readonly output: O;
  /** When the client received the response; `returnTime >= callTime`. */
  readonly returnTime: number;
}

/**
 * An operation whose outcome is unknown: it may have taken effect at any point after `callTime`,
 * or never. The checker treats it as open-ended (returns at +infinity, output unconstrained).
 */
export interface UnknownOperation<I> extends OperationBase<I> {
  readonly status: 'unknown';
  /** When the client gave up waiting. Informational only: the operation may take effect later. */
  readonly returnTime?: number;
}

/** An operation that definitely did not take effect (the server said so). The checker drops it. */
export interface FailedOperation<I> extends OperationBase<I> {
  readonly status: 'failed';
  readonly returnTime?: number;
}

/** One entry of a recorded history. */
export type Operation<I, O> = CompletedOperation<I, O> | UnknownOperation<I> | FailedOperation<I>;

/** The result of applying one operation to a model state. */
export type StepResult<S> = { readonly ok: true; readonly state: S } | { readonly ok: false };

/**
 * A sequential specification: the object the history is supposed to behave like.
 *
 * States are values: `step` must be pure and must never mutate the state it is given (the checker
 * keeps old states for backtracking and memoization).
 */
export interface Model<S, I, O> {
  /** Short name for diagnostics. */
  readonly name: string;
  /** The state before any operation. */
  init(): S;
  /**
   * Applies `input` to `state`. Returns `{ ok: false }` when `output` cannot be what the object
   * answers in `state`. With {@link UNKNOWN_OUTPUT} the step must succeed and apply the input.
   */
  step(state: S, input: I, output: O | UnknownOutput): StepResult<S>;
  /**
   * Partition key (P-compositionality): operations with different keys never affect each other,
   * and the history is linearizable iff each partition is. Omit for a single partition.
   */
  partitionKey?(input: I): string;
  /** True when operations with this input never change the state (reads). Unknown-outcome reads are dropped. */
  isReadOnly?(input: I): boolean;
  /** State equality. */
  equal(a: S, b: S): boolean;
  /** A 32-bit hash of a state; equal states must have equal hashes. */
  hash(state: S): number;
  /** One-line description of an operation, for diagnostics. */
  describeOperation(input: I, output: O | UnknownOutput): string;
  /** One-line description of a state, for diagnostics. */
  describeState(state: S): string;
}

/**
 * How much work a check may do. Exhausting either limit yields the verdict `unknown`, never `ok`.
 */
export interface Budget {
  /** Maximum search steps (model steps plus backtracks) over all partitions. */
  readonly maxSteps?: number;
  /** Optional wall-time limit, measured on the given clock's monotonic time. */
  readonly deadline?: { readonly clock: Clock; readonly timeoutMs: number };
}

/** Options of {@link checkLinearizability}. */
export interface CheckOptions {
  /** Work limit; defaults to {@link DEFAULT_MAX_STEPS} steps and no time limit. */
  readonly budget?: Budget;
  /** Largest accepted history; defaults to {@link DEFAULT_MAX_OPERATIONS}. */
  readonly maxOperations?: number;
}

/**
 * `ok`: a linearization exists. `illegal`: none exists (proof by exhaustive search).
 * `unknown`: the budget ran out before either was established.
 */
export type Verdict = 'ok' | 'illegal' | 'unknown';

/** Why a check ended `unknown`. */
export type UnknownReason = 'step-budget' | 'time-budget';

/** The outcome for one partition. Operations are named by their index in the input history. */
export interface PartitionReport {
  /** The partition key ('' when the model does not partition). */
  readonly key: string;
  /** `unknown` also for partitions never searched because the budget was already spent. */
  readonly verdict: Verdict;
  /** Operations searched (completed and unknown-outcome ones; failed ones are dropped). */
  readonly operationCount: number;
  /** Search steps spent on this partition. */
  readonly steps: number;
  /**
   * For `ok`: a linearization of every completed operation (and of the unknown-outcome
   * operations that took effect). Otherwise: the longest linearizable prefix found.
   */
  readonly linearization: readonly number[];
}

/** Diagnostics for an `illegal` verdict: where the search got stuck in the first illegal partition. */
export interface IllegalDetail {
  /** The partition key. */
  readonly partitionKey: string;
  /** The longest linearizable prefix found (history indices, in linearization order). */
  readonly longestPrefix: readonly number[];
  /** The model state after that prefix. */
  readonly stateAfterPrefix: string;
  /**
   * A completed operation whose response was seen before any of the remaining operations could be
   * linearized after the prefix (history index).
   */
  readonly blockedOperation: number;
}

/** The result of {@link checkLinearizability}. */
export interface CheckResult {
  readonly verdict: Verdict;
  /** Set when the verdict is `unknown`. */
  readonly unknownReason?: UnknownReason;
  /** Search steps spent in total. */
  readonly steps: number;
  /** One report per partition, in order of first appearance in the history. */
  readonly partitions: readonly PartitionReport[];
  /** Set when the verdict is `illegal`. */
  readonly illegal?: IllegalDetail;
}
