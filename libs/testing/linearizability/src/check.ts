import { assert } from '@ward/shared/errors';
import { StepBudget } from './budget';
import type { PreparedPartition } from './partition-history';
import { partitionHistory } from './partition-history';
import type { SearchStatus } from './search';
import { PartitionSearch } from './search';
import type { CheckOptions, CheckResult, IllegalDetail, Model, Operation, PartitionReport, Verdict } from './types';
import { DEFAULT_MAX_OPERATIONS, validateHistory } from './validate-history';

/** Steps of the first slice each partition gets; every round doubles it. */
const FIRST_SLICE_STEPS = 4096;
/** Largest slice, so that an easy illegal partition is never starved for long. */
const MAX_SLICE_STEPS = 1 << 22;

interface Scheduled<S, I, O> {
  readonly partition: PreparedPartition<I, O>;
  readonly search: PartitionSearch<S, I, O>;
  status: SearchStatus;
}

/**
 * Runs the partitions' searches in rounds with doubling step slices, a deterministic stand-in for
 * searching them in parallel: an illegal partition is found after at most a few times its own
 * cost, however hard the others are.
 */
function runRounds<S, I, O>(scheduled: Scheduled<S, I, O>[], budget: StepBudget): Scheduled<S, I, O> | undefined {
  let active = scheduled;
  for (let slice = FIRST_SLICE_STEPS; active.length > 0; slice = Math.min(slice * 2, MAX_SLICE_STEPS)) {
    for (const item of active) {
      item.status = item.search.run(budget, slice);
      if (item.status === 'illegal') return item;
      if (item.status === 'exhausted') return undefined;
    }
    active = active.filter((item) => item.status === 'paused');
  }
  return undefined;
}

function verdictOf(status: SearchStatus): Verdict {
  return status === 'ok' || status === 'illegal' ? status : 'unknown';
}

/**
 * Decides whether a recorded history is linearizable with respect to a model.
 *
 * The history is split by {@link Model.partitionKey}; a history is linearizable iff every
 * partition is. Partitions are searched interleaved (see {@link FIRST_SLICE_STEPS}) on one shared
 * budget. The verdict is `illegal` as soon as one partition is proven illegal (the others then
 * stay `unknown` in the report), `ok` only when every partition is `ok`, and `unknown` when the
 * budget runs out first. Running out of budget NEVER yields `ok`.
 *
 * @example
 * ```ts
 * const result = checkLinearizability(kvModel, history, { budget: { maxSteps: 10_000_000 } });
 * expect(result.verdict, formatCheckResult(kvModel, history, result)).toBe('ok');
 * ```
 * @throws InvalidHistoryError when the history is malformed (a recorder bug).
 */
export function checkLinearizability<S, I, O>(
  model: Model<S, I, O>,
  history: readonly Operation<I, O>[],
  options: CheckOptions = {},
): CheckResult {
  validateHistory(history, options.maxOperations ?? DEFAULT_MAX_OPERATIONS);
  const budget = new StepBudget(options.budget);
  const scheduled: Scheduled<S, I, O>[] = partitionHistory(model, history).map((partition) => ({
    partition,
    search: new PartitionSearch(model, partition),
    status: 'paused',
  }));
  const failed = budget.checkDeadline() ? runRounds(scheduled, budget) : undefined;
  const partitions: PartitionReport[] = scheduled.map(({ partition, search, status }) => ({
    key: partition.key,
    verdict: verdictOf(status),
    operationCount: partition.inputs.length,
    steps: search.steps,
    linearization: search.outcome().linearization.map((local) => partition.historyIndices[local] as number),
  }));
  if (failed !== undefined) {
    const outcome = failed.search.outcome();
    const toHistory = (local: number): number => failed.partition.historyIndices[local] as number;
    const illegal: IllegalDetail = {
      partitionKey: failed.partition.key,
      longestPrefix: outcome.linearization.map(toHistory),
      stateAfterPrefix: model.describeState(outcome.state),
      blockedOperation: toHistory(outcome.blockedOperation),
    };
    return { verdict: 'illegal', steps: budget.spent, partitions, illegal };
  }
  if (partitions.every((report) => report.verdict === 'ok')) return { verdict: 'ok', steps: budget.spent, partitions };
  assert(budget.exhausted !== undefined, 'checkLinearizability: undecided partitions without an exhausted budget');
  return { verdict: 'unknown', unknownReason: budget.exhausted, steps: budget.spent, partitions };
}
