/** The safety and liveness properties the simulator checks. */
export type ViolationKind =
  | 'election-safety'
  | 'log-matching'
  | 'leader-completeness'
  | 'state-machine-safety'
  | 'committed-entry-not-durable'
  | 'commit-regressed'
  | 'applied-regressed'
  | 'vote-changed-in-term'
  | 'term-not-durable'
  | 'vote-not-durable'
  | 'stale-read'
  | 'conf-changes-in-flight'
  | 'core-error'
  | 'not-linearizable'
  | 'liveness-no-leader'
  | 'liveness-no-convergence';

export interface Violation {
  readonly kind: ViolationKind;
  readonly tick: number;
  readonly detail: string;
}

/** Safety violations (everything but liveness). */
export function isSafetyViolation(v: Violation): boolean {
  return !v.kind.startsWith('liveness');
}
