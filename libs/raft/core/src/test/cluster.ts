// A RawNode cluster for scenario tests: every node persists into its MemoryStorage, applies
// committed entries into a list, and messages travel through one queue that tests can filter.
// Persistence is instantaneous and messages are delivered in send order.
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { SeededRng } from '@ward/shared/clock';
import type { RaftConfig } from '../config';
import type { NodeId } from '../ids';
import type { Message } from '../message';
import { MessageType } from '../message';
import { MemoryStorage } from '../memory-storage';
import { RawNode } from '../raw-node';
import { decodeConfChangeEntry } from '../codec/codec';
import { ProposalDroppedError, StepPeerNotFoundError } from '../errors';
import type { ConfState, Entry, ReadState, Snapshot } from '../types';
import { EntryType, Role, votersConfState } from '../types';

export interface ClusterNode {
  readonly id: NodeId;
  node: RawNode;
  storage: MemoryStorage;
  /** Normal entries with data, in apply order (no-ops skipped). */
  applied: Entry[];
  /** Last applied index (entries and snapshots). */
  appliedIndex: number;
  readStates: ReadState[];
  snapshotsApplied: Snapshot[];
  /** The configuration as the application recorded it (applyConfChange's answers, snapshots). */
  confState: ConfState;
  /** Membership change entries applied, with the configuration each produced. */
  confChanges: { index: number; confState: ConfState }[];
}

export type ConfigFor = (id: NodeId) => Partial<RaftConfig>;

/** A predicate on messages in flight: true lets one through. */
export type MessageFilter = (m: Message) => boolean;

export class Cluster {
  readonly nodes = new Map<NodeId, ClusterNode>();
  readonly ids: NodeId[];
  readonly initialConfState: ConfState;
  inFlight: Message[] = [];
  /** Every message ever delivered, in order (tests inspect it). */
  readonly delivered: Message[] = [];
  private readonly cuts = new Set<string>();
  filter: MessageFilter | undefined = undefined;

  constructor(
    size: number,
    private readonly configFor: ConfigFor = () => ({}),
  ) {
    this.ids = Array.from({ length: size }, (_, i) => BigInt(i + 1));
    this.initialConfState = votersConfState(this.ids);
    for (const id of this.ids) this.nodes.set(id, this.fresh(id, new MemoryStorage(votersConfState(this.ids))));
  }

  /**
   * Starts a node with an empty log that is in no configuration yet, as a member joining a
   * running cluster starts: like every node it knows the cluster's membership at index 0 (the
   * initial voters), and learns later configurations from the log or a snapshot once a leader
   * has added it.
   */
  addNode(id: NodeId): ClusterNode {
    if (this.nodes.has(id)) throw new Error(`node ${id} exists`);
    const n = this.fresh(id, new MemoryStorage(this.initialConfState));
    this.nodes.set(id, n);
    this.ids.push(id);
    return n;
  }

  private fresh(id: NodeId, storage: MemoryStorage, applied = 0): ClusterNode {
    const node = new RawNode({
      id,
      storage,
      rng: new SeededRng(Number(id) * 104729 + 7),
      electionTimeoutTicks: 10,
      heartbeatIntervalTicks: 1,
      applied,
      ...this.configFor(id),
    });
    return { id, node, storage, applied: [], appliedIndex: applied, readStates: [], snapshotsApplied: [], confState: storage.snapshot().metadata.confState, confChanges: [] };
  }

  get(id: NodeId): ClusterNode {
    const n = this.nodes.get(id);
    if (n === undefined) throw new Error(`no node ${id}`);
    return n;
  }

  raw(id: NodeId): RawNode {
    return this.get(id).node;
  }

  /** Handles every pending Ready of `id`: persist, queue messages, apply, advance. */
  process(id: NodeId): boolean {
    const n = this.get(id);
    let worked = false;
    while (n.node.hasReady()) {
      worked = true;
      const rd = n.node.ready();
      if (rd.snapshot !== undefined) n.storage.applySnapshot(rd.snapshot);
      n.storage.append(rd.entries);
      if (rd.hardState !== undefined) n.storage.setHardState(rd.hardState);
      this.inFlight.push(...rd.messages);
      if (rd.snapshot !== undefined) {
        n.snapshotsApplied.push(rd.snapshot);
        n.appliedIndex = rd.snapshot.metadata.index;
        n.confState = rd.snapshot.metadata.confState;
      }
      for (const e of rd.committedEntries) {
        if (e.type === EntryType.Normal && e.data.length > 0) n.applied.push(e);
        if (e.type !== EntryType.Normal) {
          n.confState = n.node.applyConfChange(decodeConfChangeEntry(e));
          n.confChanges.push({ index: e.index, confState: n.confState });
        }
        n.appliedIndex = e.index;
      }
      n.readStates.push(...rd.readStates);
      n.node.advance();
    }
    return worked;
  }

  processAll(): boolean {
    let worked = false;
    for (const id of this.ids) if (this.process(id)) worked = true;
    return worked;
  }

  private passes(m: Message): boolean {
    if (this.cuts.has(`${m.from}->${m.to}`)) return false;
    return this.filter === undefined || this.filter(m);
  }

  /** Delivers (or drops) every message in flight; returns how many were delivered. */
  deliver(): number {
    const batch = this.inFlight;
    this.inFlight = [];
    let count = 0;
    for (const m of batch) {
      const ok = this.passes(m);
      if (m.type === MessageType.Snap) this.get(m.from).node.reportSnapshot(m.to, ok);
      if (!ok) continue;
      this.delivered.push(m);
      try {
        this.get(m.to).node.step(m);
      } catch (error) {
        // A transport drops what the node refuses: answers from nodes it no longer tracks,
        // proposals forwarded to a leader that cannot take them.
        if (!(error instanceof StepPeerNotFoundError) && !(error instanceof ProposalDroppedError)) throw error;
      }
      count++;
    }
    return count;
  }

  /** Processes and delivers until nothing moves. */
  stabilize(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round++) {
      const worked = this.processAll();
      if (this.inFlight.length === 0 && !worked) return;
      this.deliver();
    }
    throw new Error('cluster did not stabilize');
  }

  tick(id: NodeId, times = 1): void {
    for (let i = 0; i < times; i++) this.raw(id).tick();
  }

  /** Ticks every node `times` times, stabilizing after each round. */
  tickAll(times = 1): void {
    for (let i = 0; i < times; i++) {
      for (const id of this.ids) this.raw(id).tick();
      this.stabilize();
    }
  }

  /** Campaigns on `id` and stabilizes. */
  elect(id: NodeId): void {
    this.raw(id).campaign();
    this.stabilize();
  }

  propose(id: NodeId, data: string): void {
    this.raw(id).propose(utf8(data));
    this.stabilize();
  }

  /** Drops messages both ways between a and b. */
  cut(a: NodeId, b: NodeId): void {
    this.cuts.add(`${a}->${b}`);
    this.cuts.add(`${b}->${a}`);
  }

  /** Drops messages from `from` to `to` only. */
  cutOneWay(from: NodeId, to: NodeId): void {
    this.cuts.add(`${from}->${to}`);
  }

  isolate(id: NodeId): void {
    for (const other of this.ids) if (other !== id) this.cut(id, other);
  }

  heal(): void {
    this.cuts.clear();
    this.filter = undefined;
  }

  /** The unique node that believes it leads in the highest term, if any. */
  leader(): NodeId | undefined {
    let best: { id: NodeId; term: number } | undefined;
    for (const id of this.ids) {
      const s = this.raw(id).basicStatus();
      if (s.role === Role.Leader && (best === undefined || s.term > best.term)) best = { id, term: s.term };
    }
    return best?.id;
  }

  /** Rebuilds a node from its storage only (a restart that kept everything persisted). */
  restart(id: NodeId): void {
    const old = this.get(id);
    const snapshotIndex = old.storage.snapshot().metadata.index;
    const replacement = this.fresh(id, old.storage, snapshotIndex);
    this.nodes.set(id, replacement);
    this.inFlight = this.inFlight.filter((m) => m.to !== id && m.from !== id);
  }

  /** Application data of every applied entry of `id`. */
  appliedData(id: NodeId): string[] {
    return this.get(id).applied.map((e) => fromUtf8(e.data));
  }

  /** Takes a snapshot of `id` at its applied index and compacts its log up to `compactTo`. */
  snapshotAndCompact(id: NodeId, compactTo: number): void {
    const n = this.get(id);
    n.storage.createSnapshot(n.appliedIndex, n.confState, utf8(`state@${n.appliedIndex}`));
    n.storage.compact(compactTo);
  }
}
