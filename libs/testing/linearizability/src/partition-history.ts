import type { PartitionInput } from './search';
import type { Model, Operation, UnknownOutput } from './types';
import { UNKNOWN_OUTPUT } from './types';

/** The operations of one partition, ready to search. */
export interface PreparedPartition<I, O> extends PartitionInput<I, O> {
  readonly key: string;
  /** History index of each partition-local operation. */
  readonly historyIndices: readonly number[];
}

/**
 * Splits a history by the model's partition key (P-compositionality), in order of first
 * appearance. Failed operations are dropped (they did not happen), and so are unknown-outcome
 * operations that cannot change the state (they constrain nothing). Within a partition, completed
 * operations come first, then unknown-outcome ones, each group ordered by call time (ties by
 * history index), as {@link PartitionInput} requires.
 */
export function partitionHistory<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
): PreparedPartition<I, O>[] {
  const members = new Map<string, number[]>();
  history.forEach((operation, index) => {
    if (operation.status === 'failed') return;
    if (operation.status === 'unknown' && model.isReadOnly?.(operation.input) === true) return;
    const key = model.partitionKey?.(operation.input) ?? '';
    const indices = members.get(key);
    if (indices === undefined) members.set(key, [index]);
    else indices.push(index);
  });
  const rank = (index: number): number => ((history[index] as Operation<I, O>).status === 'ok' ? 0 : 1);
  const byGroupAndCall = (a: number, b: number): number =>
    rank(a) - rank(b) || (history[a] as Operation<I, O>).callTime - (history[b] as Operation<I, O>).callTime || a - b;
  return [...members].map(([key, indices]) => {
    indices.sort(byGroupAndCall);
    const operations = indices.map((index) => history[index] as Operation<I, O>);
    return {
      key,
      historyIndices: indices,
      completedCount: operations.filter((operation) => operation.status === 'ok').length,
      inputs: operations.map((operation) => operation.input),
      outputs: operations.map((operation): O | UnknownOutput => (operation.status === 'ok' ? operation.output : UNKNOWN_OUTPUT)),
      callTimes: operations.map((operation) => operation.callTime),
      returnTimes: operations.map((operation) => (operation.status === 'ok' ? operation.returnTime : Infinity)),
    };
  });
}
