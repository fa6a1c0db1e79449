import type { PartitionInput } from './search';
import type { Model, Operation, UnknownOutput } from './types';
import { UNKNOWN_OUTPUT } from './types';

/** The operations of one partition, ready to search. */
export interface PreparedPartition<I, O> extends PartitionInput<I, O> {
  readonly key: string;
  /** History index of each partition-local operation. */
  readonly historyIndices: readonly number[];
}

interface MutablePartition<I, O> {
  key: string;
  historyIndices: number[];
  inputs: I[];
  outputs: (O | UnknownOutput)[];
  callTimes: number[];
  returnTimes: number[];
}

/**
 * Splits a history by the model's partition key (P-compositionality), in order of first
 * appearance. Failed operations are dropped (they did not happen), and so are unknown-outcome
 * operations that cannot change the state (they constrain nothing).
 */
export function partitionHistory<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
): PreparedPartition<I, O>[] {
  const partitions = new Map<string, MutablePartition<I, O>>();
  history.forEach((operation, index) => {
    if (operation.status === 'failed') return;
    if (operation.status === 'unknown' && model.isReadOnly?.(operation.input) === true) return;
    const key = model.partitionKey?.(operation.input) ?? '';
    let partition = partitions.get(key);
    if (partition === undefined) {
      partition = { key, historyIndices: [], inputs: [], outputs: [], callTimes: [], returnTimes: [] };
      partitions.set(key, partition);
    }
    partition.historyIndices.push(index);
    partition.inputs.push(operation.input);
    partition.callTimes.push(operation.callTime);
    if (operation.status === 'ok') {
      partition.outputs.push(operation.output);
      partition.returnTimes.push(operation.returnTime);
    } else {
      partition.outputs.push(UNKNOWN_OUTPUT);
      partition.returnTimes.push(Infinity);
    }
  });
  return [...partitions.values()];
}
