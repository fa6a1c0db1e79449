import type { Rng } from '@ward/shared/clock';
import { fromUtf8 } from '@ward/shared/bytes';
import type { ConfState, Entry, Message, NodeId, Ready, Snapshot } from '@ward/raft/core';
import { EntryType, MemoryStorage, ProposalDroppedError, RawNode, Role, StepPeerNotFoundError, decodeConfChangeEntry, votersConfState } from '@ward/raft/core';
import type { SafetyChecker } from './invariants';
import type { KvApplyResult, KvCommand } from './kv-state-machine';
import { KvStateMachine, decodeCommand } from './kv-state-machine';
import type { SimProfile } from './profile';
import { rngFor } from './seeds';
import { SimDisk } from './sim-disk';
import type { TraceHash } from './trace-hash';

/** What a node needs from the simulation around it. */
export interface SimHost {
  readonly seed: number;
  readonly profile: SimProfile;
  readonly checker: SafetyChecker;
  readonly trace: TraceHash;
  now(): number;
  send(from: SimNode, m: Message): void;
  scheduleDisk(node: SimNode, incarnation: number, ticks: number): void;
  onWriteApplied(node: SimNode, cmd: KvCommand, result: KvApplyResult, index: number): void;
  onReadReady(node: SimNode, context: string, readIndex: number): void;
  onCoreError(node: SimNode, error: unknown): void;
  onSnapshotInstalled(node: SimNode): void;
}

interface InFlightReady {
  readonly rd: Ready;
  readonly sentEarly: boolean;
  readonly needsSync: boolean;
}

/**
 * One simulated server: a RawNode driven the way the raft-node service will drive it (persist,
 * send, apply, advance; a leader sends before its own fsync completes), over a SimDisk whose
 * fsyncs take simulated time, with the KV state machine, snapshots and log compaction.
 */
export class SimNode {
  up = true;
  incarnation = 0;
  upSince = 0;
  downUntil = 0;
  node: RawNode | undefined;
  storage!: MemoryStorage;
  kv = new KvStateMachine();
  readonly disk = new SimDisk();
  appliedIndex = 0;
  role: Role = Role.Follower;
  /** Slow fsyncs are a fault: off in the liveness phase. */
  slowDisksEnabled = true;
  /** The configuration the application recorded last (applyConfChange, snapshots). */
  confState: ConfState;
  /** Every configuration recorded, in order, across restarts (for the safety checker). */
  readonly confHistory: ConfState[] = [];
  /** A membership change was applied: snapshot at once, so that a new member can be sent one that lists it. */
  private snapshotDue = false;
  private inFlight: InFlightReady | undefined;
  private pendingReads: { index: number; context: string }[] = [];
  private readonly diskRng: Rng;
  private readonly crashRng: Rng;

  constructor(
    readonly id: NodeId,
    private readonly host: SimHost,
    private readonly initialConfState: ConfState,
  ) {
    this.confState = initialConfState;
    this.diskRng = rngFor(host.seed, `disk-${id}`);
    this.crashRng = rngFor(host.seed, `crash-${id}`);
    this.boot();
  }

  /** Builds the in-memory state from the durable image only, as a process start does. */
  private boot(): void {
    const d = this.disk.durable;
    this.storage = new MemoryStorage(this.initialConfState);
    this.kv = new KvStateMachine();
    this.appliedIndex = 0;
    this.confState = d.snapshot?.metadata.confState ?? this.initialConfState;
    this.confHistory.push(this.confState);
    this.snapshotDue = false;
    if (d.snapshot !== undefined) {
      this.storage.applySnapshot(d.snapshot);
      this.kv = KvStateMachine.restore(d.snapshot.data);
      this.appliedIndex = d.snapshot.metadata.index;
    }
    this.storage.append(d.entries);
    this.storage.setHardState(d.hardState);
    this.host.checker.resetLog(this.id, d.snapshot?.metadata.index ?? 0, d.snapshot?.metadata.term ?? 0);
    this.host.checker.onPersisted(this.id, undefined, d.entries);
    this.role = Role.Follower;
    const mutations = this.host.profile.mutations;
    this.node = new RawNode({
      ...this.host.profile.raft,
      id: this.id,
      storage: this.storage,
      rng: rngFor(this.host.seed, `raft-${this.id}-${this.incarnation}`),
      applied: this.appliedIndex,
      ...(mutations.length > 0 ? { testOnlyMutations: mutations } : {}),
    });
  }

  snapshotIndex(): number {
    return this.storage.snapshot().metadata.index;
  }

  /** Runs `action` on the node, reporting any exception other than a dropped proposal. */
  private guarded(action: (node: RawNode) => void): boolean {
    if (!this.up || this.node === undefined) return false;
    try {
      action(this.node);
      return true;
    } catch (error) {
      if (error instanceof ProposalDroppedError) return false;
      this.host.onCoreError(this, error);
      return false;
    }
  }

  tick(): void {
    if (this.guarded((n) => n.tick())) this.pump();
  }

  deliver(m: Message): void {
    const ok = this.guarded((n) => {
      try {
        n.step(m);
      } catch (error) {
        // An answer from a node this one no longer tracks (removed meanwhile): the transport drops it.
        if (!(error instanceof StepPeerNotFoundError)) throw error;
      }
    });
    if (ok) this.pump();
  }

  /** Proposes a client write; false if the node refused it (definitely not appended). */
  propose(data: Uint8Array): boolean {
    if (!this.up || this.node === undefined) return false;
    try {
      this.node.propose(data);
    } catch (error) {
      if (!(error instanceof ProposalDroppedError)) this.host.onCoreError(this, error);
      return false;
    }
    this.pump();
    return true;
  }

  readIndex(context: Uint8Array): boolean {
    const ok = this.guarded((n) => n.readIndex(context));
    if (ok) this.pump();
    return ok;
  }

  reportSnapshot(to: NodeId, ok: boolean): void {
    if (this.guarded((n) => n.reportSnapshot(to, ok))) this.pump();
  }

  transferLeader(to: NodeId): void {
    if (this.guarded((n) => n.transferLeader(to))) this.pump();
  }

  reportUnreachable(to: NodeId): void {
    this.guarded((n) => n.reportUnreachable(to));
  }

  /** Handles Readies until one waits for the disk or none is left. */
  pump(): void {
    while (this.up && this.node !== undefined && this.inFlight === undefined && this.node.hasReady()) {
      const rd = this.node.ready();
      if (rd.softState !== undefined) this.role = rd.softState.role;
      this.traceReady(rd);
      // A leader sends at once, in parallel with its own fsync (thesis §10.2.1).
      const sentEarly = this.role === Role.Leader;
      if (sentEarly) for (const m of rd.messages) this.host.send(this, m);
      if (rd.snapshot !== undefined) {
        this.disk.writeInstall(rd.snapshot, rd.entries, rd.hardState);
      } else {
        this.disk.writeEntries(rd.entries);
        if (rd.hardState !== undefined) this.disk.writeHardState(rd.hardState);
      }
      const needsSync = rd.mustSync || rd.snapshot !== undefined;
      const latency = needsSync ? this.syncLatency() : 0;
      if (latency === 0) {
        this.complete({ rd, sentEarly, needsSync });
      } else {
        this.inFlight = { rd, sentEarly, needsSync };
        this.host.scheduleDisk(this, this.incarnation, latency);
      }
    }
  }

  private syncLatency(): number {
    const d = this.host.profile.disk;
    if (this.slowDisksEnabled && d.slowProbability > 0 && this.diskRng.nextFloat() < d.slowProbability) return d.slowSyncTicks;
    return d.minSyncTicks + this.diskRng.nextInt(d.maxSyncTicks - d.minSyncTicks + 1);
  }

  /** The fsync of the in-flight Ready completed. */
  onDiskDone(incarnation: number): void {
    if (incarnation !== this.incarnation || !this.up || this.inFlight === undefined) return;
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    this.complete(inFlight);
    this.pump();
  }

  private complete({ rd, sentEarly, needsSync }: InFlightReady): void {
    if (needsSync) this.disk.sync();
    if (rd.snapshot !== undefined) this.storage.applySnapshot(rd.snapshot);
    this.storage.append(rd.entries);
    if (rd.hardState !== undefined) this.storage.setHardState(rd.hardState);
    this.host.checker.onPersisted(this.id, rd.snapshot, rd.entries);
    if (this.role === Role.Leader) this.checkOneChangeInFlight(rd.entries);
    // From here on the node acts on this HardState (its messages go out): record its vote.
    if (rd.hardState !== undefined) this.host.checker.onHardState(this.id, rd.hardState);
    if (!sentEarly) for (const m of rd.messages) this.host.send(this, m);
    if (rd.snapshot !== undefined) {
      this.applySnapshot(rd.snapshot);
      this.host.onSnapshotInstalled(this);
    }
    for (const e of rd.committedEntries) this.apply(e);
    for (const rs of rd.readStates) this.pendingReads.push({ index: rs.index, context: fromUtf8(rs.context) });
    this.serveReads();
    if (!this.guarded((n) => n.advance())) return;
    this.maybeCompact();
  }

  /**
   * A leader appends a membership change only when every earlier one in its log is applied
   * (spec AC-11: never two unapplied changes in a leader's log). Whatever the core had applied
   * when it took the proposal, this node's application has applied by now.
   */
  private checkOneChangeInFlight(entries: readonly Entry[]): void {
    let change: Entry | undefined;
    for (const e of entries) if (e.type !== EntryType.Normal) change = e;
    if (change === undefined) return;
    const from = Math.max(this.appliedIndex + 1, this.storage.firstIndex());
    if (from >= change.index) return;
    const earlier = this.storage.entries(from, change.index, Number.MAX_SAFE_INTEGER).find((e) => e.type !== EntryType.Normal);
    if (earlier !== undefined) {
      this.host.checker.fail('conf-changes-in-flight', `leader ${this.id} appended a membership change at ${change.index} while the one at ${earlier.index} was unapplied (applied ${this.appliedIndex})`);
    }
  }

  private applySnapshot(snapshot: Snapshot): void {
    this.kv = KvStateMachine.restore(snapshot.data);
    this.appliedIndex = snapshot.metadata.index;
    this.recordConf(snapshot.metadata.confState);
  }

  private recordConf(cs: ConfState): void {
    this.confState = cs;
    this.confHistory.push(cs);
  }

  /** True when this node's own configuration lists it (as voter or learner). */
  isMember(): boolean {
    const cs = this.confState;
    return cs.voters.includes(this.id) || cs.learners.includes(this.id) || cs.votersOutgoing.includes(this.id);
  }

  private apply(e: Entry): void {
    this.host.checker.onApply(this.id, e, this.appliedIndex);
    this.appliedIndex = e.index;
    if (e.type !== EntryType.Normal) {
      this.guarded((n) => this.recordConf(n.applyConfChange(decodeConfChangeEntry(e))));
      this.snapshotDue = true;
      return;
    }
    if (e.data.length === 0) return;
    const cmd = decodeCommand(e.data);
    const result = this.kv.apply(cmd);
    if (result !== undefined) this.host.onWriteApplied(this, cmd, result, e.index);
  }

  private serveReads(): void {
    if (this.pendingReads.length === 0) return;
    const waiting: { index: number; context: string }[] = [];
    for (const read of this.pendingReads) {
      if (read.index <= this.appliedIndex) this.host.onReadReady(this, read.context, read.index);
      else waiting.push(read);
    }
    this.pendingReads = waiting;
  }

  /** Application snapshot every `everyEntries` applied entries, keeping `catchUpEntries` of log. */
  private maybeCompact(): void {
    const { everyEntries, catchUpEntries } = this.host.profile.snapshots;
    const snapIndex = this.snapshotIndex();
    const due = this.snapshotDue && this.appliedIndex > snapIndex;
    this.snapshotDue = false;
    if (this.appliedIndex - snapIndex < everyEntries && !due) return;
    const snapshot = this.storage.createSnapshot(this.appliedIndex, this.confState, this.kv.snapshot());
    this.disk.saveCompactionSnapshot(snapshot);
    const compactTo = this.appliedIndex - catchUpEntries;
    if (compactTo >= this.storage.firstIndex()) this.storage.compact(compactTo);
  }

  /** Power loss: memory gone, un-fsynced writes lost (or a prefix kept). */
  crash(now: number, downTicks: number): void {
    this.disk.crash(this.crashRng, this.host.profile.crashes.loss);
    this.up = false;
    this.incarnation++;
    this.inFlight = undefined;
    this.pendingReads = [];
    this.node = undefined;
    this.downUntil = now + downTicks;
  }

  restart(now: number): void {
    this.up = true;
    this.upSince = now;
    this.incarnation++;
    try {
      this.boot();
    } catch (error) {
      // A node that cannot start from its own disk is a failure of what it persisted.
      this.host.onCoreError(this, error);
      this.up = false;
      this.node = undefined;
      this.downUntil = Number.POSITIVE_INFINITY;
      return;
    }
    this.host.checker.onRestart(this.id, this.disk.durable.hardState);
    this.pump();
  }

  private traceReady(rd: Ready): void {
    const t = this.host.trace;
    t.add(Number(this.id));
    t.add(rd.entries.length);
    t.add(rd.committedEntries.length);
    t.add(rd.messages.length);
    if (rd.hardState !== undefined) {
      t.add(rd.hardState.term);
      t.add(rd.hardState.commit);
    }
  }
}

/** Membership of a fresh cluster of ids 1..n. */
export function clusterConfState(n: number): ConfState {
  return votersConfState(Array.from({ length: n }, (_, i) => BigInt(i + 1)));
}
