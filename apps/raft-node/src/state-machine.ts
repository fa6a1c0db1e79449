// The replicated state machine of this member: @ward/etcd/apply's Applier driven by committed log
// entries and installed snapshots, with the raft applied index (which also counts the leader's
// empty entries the applier never sees), the member list and the raft configuration (ConfState)
// at that index. Membership-change entries are applied by handing the change to the Raft core
// (`applyConfChange`, which installs it and returns the new ConfState) and updating the member
// list from the records in the entry's context; snapshots carry both (membership/codec.ts).
import { Applier, decodeApplyRequest, type ApplierOptions, type ApplierSnapshotTask, type ApplyRequest, type ApplyResult } from '@ward/etcd/apply';
import { ConfChangeError, EntryType, decodeConfChangeEntry, type ConfChangeV2, type ConfState, type Entry, type Snapshot, type SnapshotMetadata } from '@ward/raft/core';
import type { SnapshotDataStream } from '@ward/raft/storage';
import type { MemberSpec } from './members';
import { NodeSnapshotDecoder, decodeChangeContext, decodeNodeSnapshot, encodeNodeSnapshotChunks, encodeNodeSnapshotHead, type ChangeContext } from './membership/codec';
import { joinChunks } from '@ward/shared/binary';
import { MemberList, type MemberListChange } from './membership/member-list';
import type { SnapshotStepResult, SnapshotStreamOptions } from '@ward/etcd/kv-store';

/** One applied request, for the proposer's waiter, the watch hub and the token tracker. */
export interface AppliedRequest {
  readonly index: number;
  /** The entry's bytes as committed (what read replicas apply). */
  readonly data: Uint8Array;
  readonly request: ApplyRequest;
  readonly result: ApplyResult;
}

export interface StateMachineOptions {
  readonly applier: ApplierOptions;
  /** Decoding bound of a log entry (the proposal limit plus room for the header). */
  readonly maxEntryBytes: number;
  /** An entry that does not decode (never proposed by a member: corruption or a foreign writer). */
  readonly onUndecodable: (index: number, error: unknown) => void;
  /** The members the cluster was created with (the list before any change, and the one old snapshots imply). */
  readonly initialMembers: readonly MemberSpec[];
  /** The configuration at index 0 (the initial voters). */
  readonly initialConfState: ConfState;
  readonly clusterId: bigint;
}

/** A snapshot's state, decoded: the applier, and the member list (undefined: the snapshot predates it). */
export interface RestoredState {
  readonly metadata: SnapshotMetadata;
  readonly applier: Applier;
  readonly members: MemberList | undefined;
}

/** Installs a membership change in the Raft core; returns the new configuration (throws if it cannot apply). */
export type ConfChangeApplier = (cc: ConfChangeV2) => ConfState;

/** One applied membership-change entry. */
export interface AppliedMembershipChange {
  readonly index: number;
  /** The proposer's request id (0 when none). */
  readonly requestId: bigint;
  /** Undefined when applied; otherwise why the core refused it (nothing changed). */
  readonly refused: string | undefined;
  readonly change: MemberListChange;
  readonly confState: ConfState;
}

export class StateMachine {
  private applierValue: Applier;
  private appliedIndexValue: number;
  private membersValue: MemberList;
  private confStateValue: ConfState;

  private constructor(
    private readonly options: StateMachineOptions,
    applier: Applier,
    appliedIndex: number,
    members: MemberList,
    confState: ConfState,
  ) {
    this.applierValue = applier;
    this.appliedIndexValue = appliedIndex;
    this.membersValue = members;
    this.confStateValue = confState;
  }

  /** Empty, or restored from the snapshot the member booted from, its data whole. */
  static boot(options: StateMachineOptions, snapshot: Snapshot | undefined): StateMachine {
    if (snapshot === undefined) return StateMachine.fromRestored(options, undefined);
    const decoded = decodeNodeSnapshot(snapshot.data);
    return StateMachine.fromRestored(options, { metadata: snapshot.metadata, applier: Applier.restore(decoded.applier, options.applier), members: decoded.members });
  }

  /**
   * The state of a snapshot whose data comes in pieces (a member's file at boot), decoded as they
   * come: the data is never held whole. Throws for data that is no member snapshot.
   */
  static async decodeStreamed(applierOptions: ApplierOptions, metadata: SnapshotMetadata, data: SnapshotDataStream): Promise<RestoredState> {
    // A file's pieces end only once its CRC-32C matched: the key space's own need not be taken again.
    const applier = Applier.decoder(applierOptions, { checksumChecked: data.checksummed === true });
    const decoder = new NodeSnapshotDecoder(data.totalBytes, applier);
    for await (const piece of data.data instanceof Uint8Array ? [data.data] : data.data) decoder.push(piece);
    const { members } = decoder.finish();
    return { metadata, applier: applier.finish(), members };
  }

  /** Empty, or the state of a decoded snapshot (StateMachine.decodeStreamed). */
  static fromRestored(options: StateMachineOptions, restored: RestoredState | undefined): StateMachine {
    const machine = new StateMachine(options, Applier.create(options.applier), 0, MemberList.initial(options.initialMembers), options.initialConfState);
    if (restored !== undefined) machine.install(restored);
    return machine;
  }

  /** The member list at the applied index. */
  get members(): MemberList {
    return this.membersValue;
  }

  /** The raft configuration at the applied index (what a snapshot taken now must carry). */
  get confState(): ConfState {
    return this.confStateValue;
  }

  get applier(): Applier {
    return this.applierValue;
  }

  /** Index of the last log entry applied (empty entries included). */
  get appliedIndex(): number {
    return this.appliedIndexValue;
  }

  /** Replaces the state by a snapshot installed from the leader, its data whole. */
  restore(snapshot: Snapshot): void {
    const decoded = decodeNodeSnapshot(snapshot.data);
    this.install({ metadata: snapshot.metadata, applier: Applier.restore(decoded.applier, this.options.applier), members: decoded.members });
  }

  /**
   * Replaces the state by a snapshot installed from the leader whose data comes in pieces (from its
   * file): the new state is built aside as they are read, and takes over once whole.
   */
  async restoreStreamed(metadata: SnapshotMetadata, data: SnapshotDataStream): Promise<void> {
    this.install(await StateMachine.decodeStreamed(this.options.applier, metadata, data));
  }

  private install(restored: RestoredState): void {
    this.applierValue = restored.applier;
    this.appliedIndexValue = restored.metadata.index;
    this.membersValue = restored.members ?? MemberList.initial(this.options.initialMembers);
    this.confStateValue = restored.metadata.confState;
  }

  /**
   * Applies committed entries in order; returns the requests applied (empty entries skipped).
   * Membership changes go through `applyConfChange` and are reported to `onMembership`.
   */
  apply(entries: readonly Entry[], applyConfChange?: ConfChangeApplier, onMembership?: (applied: AppliedMembershipChange) => void): AppliedRequest[] {
    const applied: AppliedRequest[] = [];
    for (const entry of entries) {
      if (entry.index <= this.appliedIndexValue) continue;
      this.appliedIndexValue = entry.index;
      if (entry.type === EntryType.ConfChange || entry.type === EntryType.ConfChangeV2) {
        const result = this.applyMembership(entry, applyConfChange);
        if (result !== undefined) onMembership?.(result);
        continue;
      }
      if (entry.type !== EntryType.Normal || entry.data.length === 0) continue;
      let request: ApplyRequest;
      try {
        request = decodeApplyRequest(entry.data, { maxEntryBytes: this.options.maxEntryBytes });
      } catch (error) {
        this.options.onUndecodable(entry.index, error);
        continue;
      }
      applied.push({ index: entry.index, data: entry.data, request, result: this.applierValue.apply(entry.index, request) });
    }
    return applied;
  }

  /** True when `apply` treats `entry` as a request: a normal entry whose data decodes. */
  isRequestEntry(entry: Entry): boolean {
    if (entry.type !== EntryType.Normal || entry.data.length === 0) return false;
    try {
      decodeApplyRequest(entry.data, { maxEntryBytes: this.options.maxEntryBytes });
      return true;
    } catch {
      return false;
    }
  }

  private applyMembership(entry: Entry, applyConfChange: ConfChangeApplier | undefined): AppliedMembershipChange | undefined {
    let cc: ConfChangeV2;
    let context: ChangeContext;
    try {
      cc = decodeConfChangeEntry(entry);
      context = decodeChangeContext(cc.context);
    } catch (error) {
      this.options.onUndecodable(entry.index, error);
      return undefined;
    }
    const none = { added: [], updated: [], removed: [] };
    if (applyConfChange === undefined) throw new Error(`membership change at ${entry.index} applied without the Raft core`);
    let confState: ConfState;
    try {
      confState = applyConfChange(cc);
    } catch (error) {
      if (!(error instanceof ConfChangeError)) throw error;
      return { index: entry.index, requestId: context.requestId, refused: (error as Error).message, change: none, confState: this.confStateValue };
    }
    const { list, change } = this.membersValue.applied(cc, context.records);
    this.membersValue = list;
    this.confStateValue = confState;
    return { index: entry.index, requestId: context.requestId, refused: undefined, change, confState };
  }

  /** The state machine's bytes for a local snapshot at the applied index (member list included). */
  snapshotData(): Uint8Array {
    const task = this.snapshotTask();
    while (task.step(Number.MAX_SAFE_INTEGER) === 'more');
    return joinChunks(task.chunks);
  }

  /**
   * The same bytes, of the state at the applied index now, as chunks made in steps between which
   * entries may go on being applied (NodeSnapshotTask), or streamed (see ApplierSnapshotTask). A
   * task made before a snapshot is restored still gives the state it started from.
   */
  snapshotTask(stream?: SnapshotStreamOptions): NodeSnapshotTask {
    return new NodeSnapshotTask(this.appliedIndexValue, this.confStateValue, this.options.clusterId, this.membersValue, this.applierValue.snapshotTask(stream));
  }
}

/**
 * A snapshot in the making, of the state at one applied index: the applier's state in steps
 * (ApplierSnapshotTask), then the member snapshot's head around its chunks. 'stale' when a
 * compaction was applied meanwhile. Streamed, `sizeBytes` and `takeChunks` hand the bytes out as
 * they are made (the head first, once the length is known).
 */
export class NodeSnapshotTask {
  private chunksValue: Uint8Array[] | undefined;
  private headValue: Uint8Array | undefined;
  private headTaken = false;

  constructor(
    /** The applied index the snapshot is of. */
    readonly index: number,
    /** The configuration at that index. */
    readonly confState: ConfState,
    private readonly clusterId: bigint,
    private readonly members: MemberList,
    private readonly applier: ApplierSnapshotTask,
  ) {}

  /** Writes up to `budgetKeys` keys of the key space (default: the key space's step). */
  step(budgetKeys?: number): SnapshotStepResult {
    if (this.chunksValue !== undefined) return 'done';
    const result = this.applier.step(budgetKeys);
    if (result === 'done' && this.applier.sizeBytes === undefined) this.chunksValue = encodeNodeSnapshotChunks({ clusterId: this.clusterId, members: this.members, applier: this.applier.chunks });
    return result;
  }

  /** The snapshot data as chunks in order (never joined: a large state is seconds of copying), once `step` returned 'done' (not streamed). */
  get chunks(): Uint8Array[] {
    if (this.chunksValue === undefined) throw new TypeError('snapshot task: not done (or streamed)');
    return this.chunksValue;
  }

  /** Streamed: the snapshot data's length, once the key space is sized (undefined before). */
  get sizeBytes(): number | undefined {
    const head = this.streamedHead();
    return head === undefined ? undefined : head.length + this.applier.sizeBytes!;
  }

  /** Streamed: the chunks made since the last call, in order. */
  takeChunks(): Uint8Array[] {
    const taken = this.applier.takeChunks();
    const head = this.streamedHead();
    if (!this.headTaken && head !== undefined) {
      this.headTaken = true;
      taken.unshift(head);
    }
    return taken;
  }

  /** Streamed: the head, once the applier's length is known (undefined before). */
  private streamedHead(): Uint8Array | undefined {
    const applierBytes = this.applier.sizeBytes;
    if (applierBytes !== undefined) this.headValue ??= encodeNodeSnapshotHead({ clusterId: this.clusterId, members: this.members }, applierBytes);
    return this.headValue;
  }
}
