import { assert } from '@ward/shared/errors';
import { Inflights } from './inflights';
import type { Index } from './types';

/** How the leader replicates to one follower (etcd's tracker.StateType). */
export const ProgressState = {
  /** Position unknown: at most one MsgApp per heartbeat interval until an answer arrives. */
  Probe: 'probe',
  /** Position known: entries are streamed optimistically, bounded by the inflight window. */
  Replicate: 'replicate',
  /** The follower needs a snapshot; nothing else is sent until it is reported done or failed. */
  Snapshot: 'snapshot',
} as const;
export type ProgressState = (typeof ProgressState)[keyof typeof ProgressState];

/** The leader's view of one follower's log. Invariant: match < next. */
export class Progress {
  match: Index;
  next: Index;
  state: ProgressState = ProgressState.Probe;
  /** In Snapshot state: the index of the snapshot sent. */
  pendingSnapshot: Index = 0;
  /** Heard from within the last election timeout (CheckQuorum; snapshot sending). */
  recentActive = false;
  /** Sending is paused: Probe sent its one message, or Replicate's window is full. */
  msgAppFlowPaused = false;
  readonly inflights: Inflights;
  isLearner: boolean;
  /** Highest commit index sent to this follower. */
  sentCommit: Index = 0;

  constructor(next: Index, maxInflightMessages: number, maxInflightBytes: number, isLearner: boolean) {
    this.match = 0;
    this.next = next;
    this.inflights = new Inflights(maxInflightMessages, maxInflightBytes);
    this.isLearner = isLearner;
  }

  /** A fresh view at the start of a term (etcd replaces the whole Progress). */
  resetForTerm(match: Index, next: Index): void {
    this.resetState(ProgressState.Probe);
    this.match = match;
    this.next = next;
    this.recentActive = false;
    this.sentCommit = 0;
  }

  private resetState(state: ProgressState): void {
    this.msgAppFlowPaused = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    if (this.state === ProgressState.Snapshot) {
      const pending = this.pendingSnapshot;
      this.resetState(ProgressState.Probe);
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState(ProgressState.Probe);
      this.next = this.match + 1;
    }
    this.sentCommit = Math.min(this.sentCommit, this.next - 1);
  }

  becomeReplicate(): void {
    this.resetState(ProgressState.Replicate);
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: Index): void {
    this.resetState(ProgressState.Snapshot);
    this.pendingSnapshot = snapshotIndex;
    this.next = snapshotIndex + 1;
    this.sentCommit = snapshotIndex;
  }

  /** A MsgApp with `entries` entries (`bytes` of them) was just sent. */
  sentEntries(entries: number, bytes: number): void {
    if (this.state === ProgressState.Replicate) {
      if (entries > 0) {
        this.next += entries;
        this.inflights.add(this.next - 1, bytes);
      }
      this.msgAppFlowPaused = this.inflights.full();
    } else {
      assert(this.state === ProgressState.Probe, `sending append in state ${this.state}`);
      if (entries > 0) this.msgAppFlowPaused = true;
    }
  }

  /** True if a message could tell this follower a newer commit index it can use. */
  canBumpCommit(commit: Index): boolean {
    return commit > this.sentCommit && this.sentCommit < this.next - 1;
  }

  sentCommitTo(commit: Index): void {
    this.sentCommit = commit;
  }

  /** An acknowledgement up to `index` arrived; false if it was stale. */
  maybeUpdate(index: Index): boolean {
    if (index <= this.match) return false;
    this.match = index;
    if (this.next < index + 1) this.next = index + 1;
    this.msgAppFlowPaused = false;
    return true;
  }

  /**
   * A rejection of the MsgApp anchored at `rejected` arrived, hinting that the follower matches
   * at most at `matchHint`. Returns false if the rejection is stale.
   */
  maybeDecrTo(rejected: Index, matchHint: Index): boolean {
    if (this.state === ProgressState.Replicate) {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      this.sentCommit = Math.min(this.sentCommit, this.next - 1);
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    this.sentCommit = Math.min(this.sentCommit, this.next - 1);
    this.msgAppFlowPaused = false;
    return true;
  }

  isPaused(): boolean {
    return this.state === ProgressState.Snapshot || this.msgAppFlowPaused;
  }

  toString(): string {
    let out = `${this.state} match=${this.match} next=${this.next}`;
    if (this.isLearner) out += ' learner';
    if (this.isPaused()) out += ' paused';
    if (this.pendingSnapshot > 0) out += ` pendingSnap=${this.pendingSnapshot}`;
    if (!this.recentActive) out += ' inactive';
    if (this.inflights.size() > 0) out += ` inflight=${this.inflights.size()}${this.inflights.full() ? '[full]' : ''}`;
    return out;
  }
}
