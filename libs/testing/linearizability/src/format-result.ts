import type { CheckResult, Model, Operation } from './types';
import { UNKNOWN_OUTPUT } from './types';

/** Most operations listed from a prefix; the rest is summarised. */
const MAX_LISTED_OPERATIONS = 40;

function describe<S, I, O>(model: Model<S, I, O>, history: readonly Operation<I, O>[], index: number): string {
  const operation = history[index];
  if (operation === undefined) return `#${index} (not in history)`;
  const output = operation.status === 'ok' ? operation.output : UNKNOWN_OUTPUT;
  const end = operation.status === 'ok' ? String(operation.returnTime) : '∞';
  return `#${index} client ${operation.clientId} [${operation.callTime}, ${end}] ${model.describeOperation(operation.input, output)}`;
}

/**
 * A human-readable account of a check: the verdict, per-partition figures and, for `illegal`,
 * the tail of the longest linearizable prefix, the state it leaves and the operation that could
 * not be placed. Meant for assertion messages and logs.
 */
export function formatCheckResult<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
  result: CheckResult,
): string {
  const lines = [
    `${model.name}: ${result.verdict}${result.unknownReason ? ` (${result.unknownReason})` : ''}, ` +
      `${result.steps} steps, ${result.partitions.length} partition(s)`,
  ];
  for (const partition of result.partitions) {
    if (partition.verdict === 'ok' && result.verdict === 'ok' && result.partitions.length > 10) continue;
    lines.push(
      `  partition ${JSON.stringify(partition.key)}: ${partition.verdict}, ${partition.operationCount} ops, ${partition.steps} steps`,
    );
  }
  const illegal = result.illegal;
  if (illegal !== undefined) {
    const prefix = illegal.longestPrefix;
    lines.push(`longest linearizable prefix in partition ${JSON.stringify(illegal.partitionKey)}: ${prefix.length} ops`);
    const shown = prefix.slice(-MAX_LISTED_OPERATIONS);
    if (shown.length < prefix.length) lines.push(`  ... ${prefix.length - shown.length} earlier ops`);
    for (const index of shown) lines.push(`  ${describe(model, history, index)}`);
    lines.push(`state after the prefix: ${illegal.stateAfterPrefix}`);
    lines.push(`cannot linearize before it returns: ${describe(model, history, illegal.blockedOperation)}`);
  }
  return lines.join('\n');
}
