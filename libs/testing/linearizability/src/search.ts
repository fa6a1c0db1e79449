import { assert } from '@ward/shared/errors';
import type { StepBudget } from './budget';
import { EntryList, NONE } from './entry-list';
import { mix32 } from './hashing';
import { LinearizedSet } from './linearized-set';
import { MemoSet } from './memo-set';
import type { Model, UnknownOutput } from './types';

/**
 * The operations of one partition, indexed 0..n-1 (the caller maps them back to the history):
 * the completed ones first, then those with an unknown outcome (each group in call order).
 */
export interface PartitionInput<I, O> {
  /** Operations 0..completedCount-1 are completed; the rest have an unknown outcome. */
  readonly completedCount: number;
  readonly inputs: readonly I[];
  /** Recorded outputs; {@link UNKNOWN_OUTPUT} for unknown outcomes. */
  readonly outputs: readonly (O | UnknownOutput)[];
  readonly callTimes: readonly number[];
  /** Infinity for unknown outcomes. */
  readonly returnTimes: readonly number[];
}

/** Where a search stands after {@link PartitionSearch.run}. */
export type SearchStatus = 'ok' | 'illegal' | 'paused' | 'exhausted';

/** What the search found in one partition (operation numbers are partition-local). */
export interface SearchOutcome<S> {
  /** `ok`: the linearization; otherwise the longest linearizable prefix found. */
  readonly linearization: number[];
  /** State after `linearization`. */
  readonly state: S;
  /** `illegal`: an operation whose return was reached with no way to linearize it. */
  readonly blockedOperation: number;
}

/**
 * Wing & Gong's search with Lowe's memoization over one partition (the shape of Porcupine's
 * checker): walk the events from the start; at a call, try to linearize that operation now (model
 * step with its recorded output) and, if the resulting (linearized set, state) pair is new, commit
 * to it and restart from the first remaining event; at the return of an operation not yet
 * linearized, undo the last choice and try the next candidate after it; with nothing left to undo
 * the partition is illegal. Unknown-outcome operations have no return, so they never force a
 * backtrack, and the search succeeds once every completed operation is linearized (the remaining
 * unknown ones take effect later, or never).
 *
 * The search is resumable: {@link run} does at most a given number of steps, so that the caller
 * can interleave partitions and stop at the first illegal one.
 */
export class PartitionSearch<S, I, O> {
  private readonly list: EntryList;
  private readonly linearized: LinearizedSet;
  private readonly memo: MemoSet<S>;
  private readonly stackCalls: number[] = [];
  private readonly stackStates: S[] = [];
  private state: S;
  /** Completed operations not yet linearized; the search succeeds when it reaches 0. */
  private pendingCompleted = 0;
  /** The next event to look at. */
  private cursor: number;
  private best: { linearization: number[]; state: S; blockedOperation: number } | undefined;
  private status: SearchStatus = 'paused';
  /** Steps spent on this partition so far. */
  steps = 0;

  constructor(
    private readonly model: Model<S, I, O>,
    private readonly partition: PartitionInput<I, O>,
  ) {
    const count = partition.inputs.length;
    this.list = new EntryList(partition.callTimes, partition.returnTimes);
    for (let operation = 0; operation < count; operation++) {
      const completed = partition.returnTimes[operation] !== Infinity;
      assert(completed === operation < partition.completedCount, 'PartitionSearch: completed operations come first');
      if (completed) this.pendingCompleted++;
    }
    this.linearized = new LinearizedSet(this.pendingCompleted, count - this.pendingCompleted);
    this.memo = new MemoSet<S>((a, b) => model.equal(a, b));
    this.state = model.init();
    this.cursor = this.list.next[this.list.head] as number;
  }

  /**
   * Searches for at most `sliceSteps` steps (each also spent from `budget`). Returns `ok` or
   * `illegal` once decided (and from then on), `paused` when the slice ran out, `exhausted` when
   * the budget did.
   */
  run(budget: StepBudget, sliceSteps: number): SearchStatus {
    if (this.status === 'ok' || this.status === 'illegal') return this.status;
    const list = this.list;
    let entry = this.cursor;
    for (let slice = sliceSteps; ; slice--) {
      if (this.pendingCompleted === 0) return (this.status = 'ok');
      assert(entry !== NONE, 'PartitionSearch: ran off the end with completed operations pending');
      if (slice <= 0) {
        this.cursor = entry;
        return (this.status = 'paused');
      }
      if (!budget.spend()) {
        this.cursor = entry;
        return (this.status = 'exhausted');
      }
      this.steps++;
      if (list.isReturn[entry] === 0) {
        entry = this.tryLinearize(entry) ? (list.next[list.head] as number) : (list.next[entry] as number);
        continue;
      }
      this.noteDeadEnd(entry);
      if (this.stackCalls.length === 0) return (this.status = 'illegal');
      entry = list.next[this.backtrack()] as number;
    }
  }

  /** The linearization (`ok`) or the longest linearizable prefix found so far. */
  outcome(): SearchOutcome<S> {
    const best = this.best;
    if (this.status !== 'ok' && best !== undefined && best.linearization.length >= this.stackCalls.length) {
      return { ...best };
    }
    return {
      linearization: this.stackCalls.map((call) => this.list.operationOf[call] as number),
      state: this.state,
      blockedOperation: NONE,
    };
  }

  /** Tries to linearize the operation of `call` next; true when it was pushed. */
  private tryLinearize(call: number): boolean {
    const operation = this.list.operationOf[call] as number;
    const result = this.model.step(
      this.state,
      this.partition.inputs[operation] as I,
      this.partition.outputs[operation] as O | UnknownOutput,
    );
    if (!result.ok) return false;
    this.linearized.toggle(operation);
    const key = this.linearized.hash ^ mix32(this.model.hash(result.state) ^ 0x5bd1e995);
    if (!this.memo.add(key, this.linearized, result.state)) {
      this.linearized.toggle(operation);
      return false;
    }
    this.stackCalls.push(call);
    this.stackStates.push(this.state);
    this.state = result.state;
    this.list.lift(call);
    if (this.list.returnOf[operation] !== NONE) this.pendingCompleted--;
    return true;
  }

  /** Undoes the last linearization; returns its call entry. */
  private backtrack(): number {
    const call = this.stackCalls.pop() as number;
    this.state = this.stackStates.pop() as S;
    const operation = this.list.operationOf[call] as number;
    this.linearized.toggle(operation);
    this.list.unlift(call);
    if (this.list.returnOf[operation] !== NONE) this.pendingCompleted++;
    return call;
  }

  /** Remembers the current prefix if it is the longest so far. */
  private noteDeadEnd(blockingReturn: number): void {
    if (this.best !== undefined && this.best.linearization.length >= this.stackCalls.length) return;
    this.best = {
      linearization: this.stackCalls.map((call) => this.list.operationOf[call] as number),
      state: this.state,
      blockedOperation: this.list.operationOf[blockingReturn] as number,
    };
  }
}
