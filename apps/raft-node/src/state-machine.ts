// The replicated state machine of this member: @ward/etcd/apply's Applier driven by committed log
// entries and installed snapshots, with the raft applied index (which also counts the leader's
// empty entries the applier never sees).
import { Applier, decodeApplyRequest, type ApplierOptions, type ApplyRequest, type ApplyResult } from '@ward/etcd/apply';
import { EntryType, type Entry, type Snapshot } from '@ward/raft/core';

/** One applied request, for the proposer's waiter, the watch hub and the token tracker. */
export interface AppliedRequest {
  readonly index: number;
  readonly request: ApplyRequest;
  readonly result: ApplyResult;
}

export interface StateMachineOptions {
  readonly applier: ApplierOptions;
  /** Decoding bound of a log entry (the proposal limit plus room for the header). */
  readonly maxEntryBytes: number;
  /** An entry that does not decode (never proposed by a member: corruption or a foreign writer). */
  readonly onUndecodable: (index: number, error: unknown) => void;
}

export class StateMachine {
  private applierValue: Applier;
  private appliedIndexValue: number;

  private constructor(
    private readonly options: StateMachineOptions,
    applier: Applier,
    appliedIndex: number,
  ) {
    this.applierValue = applier;
    this.appliedIndexValue = appliedIndex;
  }

  /** Empty, or restored from the snapshot the member booted from. */
  static boot(options: StateMachineOptions, snapshot: Snapshot | undefined): StateMachine {
    if (snapshot === undefined) return new StateMachine(options, Applier.create(options.applier), 0);
    return new StateMachine(options, Applier.restore(snapshot.data, options.applier), snapshot.metadata.index);
  }

  get applier(): Applier {
    return this.applierValue;
  }

  /** Index of the last log entry applied (empty entries included). */
  get appliedIndex(): number {
    return this.appliedIndexValue;
  }

  /** Replaces the state by a snapshot installed from the leader. */
  restore(snapshot: Snapshot): void {
    this.applierValue = Applier.restore(snapshot.data, this.options.applier);
    this.appliedIndexValue = snapshot.metadata.index;
  }

  /** Applies committed entries in order; returns the requests applied (empty entries skipped). */
  apply(entries: readonly Entry[]): AppliedRequest[] {
    const applied: AppliedRequest[] = [];
    for (const entry of entries) {
      if (entry.index <= this.appliedIndexValue) continue;
      this.appliedIndexValue = entry.index;
      if (entry.type !== EntryType.Normal || entry.data.length === 0) continue;
      let request: ApplyRequest;
      try {
        request = decodeApplyRequest(entry.data, { maxEntryBytes: this.options.maxEntryBytes });
      } catch (error) {
        this.options.onUndecodable(entry.index, error);
        continue;
      }
      applied.push({ index: entry.index, request, result: this.applierValue.apply(entry.index, request) });
    }
    return applied;
  }

  /** The state machine's bytes for a local snapshot at the applied index. */
  snapshotData(): Uint8Array {
    return this.applierValue.snapshot();
  }
}
