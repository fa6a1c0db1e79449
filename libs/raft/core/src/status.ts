import type { NodeId } from './ids';
import type { ProgressState } from './progress';
import type { Index, Role, Term } from './types';

/** A follower's replication state as the leader sees it. */
export interface ProgressStatus {
  readonly match: Index;
  readonly next: Index;
  readonly state: ProgressState;
  readonly recentActive: boolean;
  readonly paused: boolean;
  readonly inflightMessages: number;
  readonly isLearner: boolean;
}

/** A point-in-time view of a node, for monitoring and tests. */
export interface Status {
  readonly id: NodeId;
  readonly term: Term;
  readonly vote: NodeId;
  readonly commit: Index;
  readonly lead: NodeId;
  readonly role: Role;
  readonly applied: Index;
  readonly lastIndex: Index;
  readonly leadTransferee: NodeId;
  /** Per member, on the leader only (empty elsewhere). */
  readonly progress: ReadonlyMap<NodeId, ProgressStatus>;
}
