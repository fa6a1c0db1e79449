import type { Clock } from '@ward/shared/clock';
import type { Budget, UnknownReason } from './types';

/**
 * Default step limit: about ten times what the hardest fixture history needs, a few seconds of
 * search, and a bounded memo (each new memo entry costs a step).
 */
export const DEFAULT_MAX_STEPS = 10_000_000;

/** How many steps pass between two reads of the deadline clock. */
const STEPS_PER_CLOCK_READ = 1024;

/** Counts search steps against a {@link Budget}, shared by every partition of one check. */
export class StepBudget {
  private readonly maxSteps: number;
  private readonly clock: Clock | undefined;
  private readonly deadlineMs: number;
  private untilClockRead = STEPS_PER_CLOCK_READ;
  /** Steps spent so far. */
  spent = 0;
  /** Set once a limit is hit; from then on {@link spend} always fails. */
  exhausted: UnknownReason | undefined;

  constructor(budget: Budget | undefined) {
    const maxSteps = budget?.maxSteps ?? DEFAULT_MAX_STEPS;
    if (!(Number.isSafeInteger(maxSteps) && maxSteps >= 0)) {
      throw new TypeError(`budget.maxSteps must be a non-negative safe integer, got ${maxSteps}`);
    }
    this.maxSteps = maxSteps;
    const deadline = budget?.deadline;
    if (deadline !== undefined && !(deadline.timeoutMs >= 0 && Number.isFinite(deadline.timeoutMs))) {
      throw new TypeError(`budget.deadline.timeoutMs must be a finite number >= 0, got ${deadline.timeoutMs}`);
    }
    this.clock = deadline?.clock;
    this.deadlineMs = deadline === undefined ? Infinity : deadline.clock.monotonicMs() + deadline.timeoutMs;
  }

  /** Spends one step; false (and `exhausted` set) when the budget is used up. */
  spend(): boolean {
    if (this.exhausted !== undefined) return false;
    if (this.spent >= this.maxSteps) {
      this.exhausted = 'step-budget';
      return false;
    }
    this.spent++;
    if (this.clock !== undefined && --this.untilClockRead <= 0) {
      this.untilClockRead = STEPS_PER_CLOCK_READ;
      if (this.clock.monotonicMs() >= this.deadlineMs) {
        this.exhausted = 'time-budget';
        return false;
      }
    }
    return true;
  }

  /** Checks the deadline now (before starting a partition), without spending a step. */
  checkDeadline(): boolean {
    if (this.exhausted !== undefined) return false;
    if (this.clock !== undefined && this.clock.monotonicMs() >= this.deadlineMs) {
      this.exhausted = 'time-budget';
      return false;
    }
    return true;
  }
}
