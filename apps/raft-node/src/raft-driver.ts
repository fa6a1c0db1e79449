// The I/O shell around the Raft core: ticks from a timer, peer messages and proposals in, and the
// Ready loop out, in the order the core's Ready contract demands:
//   persist (snapshot file, entries, hard state; one write + one fdatasync) -> send -> apply -> advance,
// except that committed entries already durable in this member's log are applied (and read
// states served) while the Ready is being written.
// A leader sends before its own fdatasync (thesis §10.2.1); followers and candidates only after,
// so they never acknowledge or vote for what is not durable. One Ready is handled at a time;
// everything that arrives meanwhile (proposals, acks) is batched into the next Ready, which is
// where group commit comes from.
import { isEmptySnapshot, NO_NODE, Role, type ConfChangeV2, type Entry, type ProgressStatus, type Message, type NodeId, type RawNode, type ReadState, type Ready, type Snapshot, type Storage } from '@ward/raft/core';
import { SnapshotTooLargeError, type RaftPersistence } from '@ward/raft/storage';
import type { Logger } from '@ward/platform/logging';
import type { AppliedMembershipChange, AppliedRequest, NodeSnapshotTask, StateMachine } from './state-machine';
import { PooledSnapshot, SnapshotGivenUp } from './snapshot-turns';

/** Longest the Ready loop runs Readies that write nothing before it lets other work in. */
export const READY_TURN_MS = 10;

export interface RaftDriverHooks {
  /** Leader or term changed (`lead` may be NO_NODE). */
  readonly onLeaderChange: (lead: NodeId, term: number) => void;
  /** A batch of entries was applied (after advance). */
  readonly onApplied: (applied: readonly AppliedRequest[], appliedIndex: number) => void;
  /**
   * A membership-change entry was applied (the core has the new configuration; the next Ready
   * already uses it), before the batch's onApplied.
   */
  readonly onMembership: (applied: AppliedMembershipChange) => void;
  /** The state was replaced by a snapshot from the leader; `bytes`: its state-machine data's length. */
  readonly onRestored: (snapshot: Snapshot, bytes: number) => void;
  readonly onReadStates: (states: readonly ReadState[]) => void;
  /** A local snapshot was written. */
  readonly onSnapshot: (index: number, bytes: number, durationMs: number) => void;
  /** Persisting failed (the log is closed for good): the member must stop. */
  readonly onFatal: (error: unknown) => void;
}

/**
 * A local snapshot rewrites the whole state, so a trigger by entry count alone makes each entry
 * pay more as the state grows: at three million keys of the scale bench a snapshot came every
 * 10,000 txns (360 MB of entries, against an 850 MB snapshot). Once the last snapshot is larger
 * than the bytes trigger's floor (`snapshotBytes`), the count is at least one entry per this many
 * of its bytes; replaying an entry at a restart is taken to cost about what loading a few KiB of
 * snapshot does (an estimate, not measured), so that the log a restart replays stays within about
 * a snapshot's load. Below the floor the count is as configured (etcd's --snapshot-count).
 */
export const SNAPSHOT_STATE_BYTES_PER_ENTRY = 4096;

export interface RaftDriverOptions {
  readonly node: RawNode;
  readonly persistence: RaftPersistence;
  readonly send: (messages: readonly Message[]) => void;
  readonly stateMachine: StateMachine;
  readonly tickMs: number;
  /** Take a local snapshot after this many applied entries. */
  readonly snapshotEntries: number;
  /**
   * Or once the entries applied since the last snapshot hold this many bytes of data, or as many
   * as the last snapshot's size if that is larger (a restart then replays at most about one
   * snapshot's worth of log, and rewriting the snapshot costs at most about as much as the log
   * written since). Whichever of the two triggers comes first.
   */
  readonly snapshotBytes: number;
  /**
   * Once the last snapshot is larger than `snapshotBytes`, the entry count that triggers the next
   * is at least one entry per this many of its bytes (default SNAPSHOT_STATE_BYTES_PER_ENTRY).
   */
  readonly snapshotStateBytesPerEntry?: number;
  /** Index of the snapshot the member booted from (0: none). */
  readonly bootSnapshotIndex: number;
  /** Size of that snapshot's state-machine data (0 or absent: none). */
  readonly bootSnapshotBytes?: number;
  readonly hooks: RaftDriverHooks;
  readonly logger: Logger;
}

/** A local snapshot being taken. */
interface SnapshotTaking {
  readonly snapshot: PooledSnapshot<NodeSnapshotTask>;
  readonly startedMs: number;
  /** Bytes applied since the last snapshot when this one started. */
  readonly bytesAtStart: number;
  /** Started because a membership change asked for one. */
  readonly due: boolean;
}

export class RaftDriver {
  private readonly node: RawNode;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private scheduled = false;
  private stopped = false;
  private loopDone: Promise<void> = Promise.resolve();
  private leaderId: NodeId = NO_NODE;
  private term = 0;
  private role: Role = Role.Follower;
  private lastSnapshotIndex: number;
  /** Bytes of entry data applied since the last snapshot (taken, installed, or booted from). */
  private bytesSinceSnapshot = 0;
  /** Size of the last snapshot's state-machine data (sets the byte trigger's floor). */
  private lastSnapshotBytes: number;
  /** options.snapshotStateBytesPerEntry or its default. */
  private readonly snapshotStateBytesPerEntry: number;
  /** The applied index of the last state found too large for a snapshot (0: none); entries count from there. */
  private refusedSnapshotIndex = 0;
  /**
   * A membership change that adds a member was applied: snapshot at once, so that the snapshot a
   * new member may need lists it (a node refuses a snapshot that does not).
   */
  private snapshotDue = false;
  /** The local snapshot being taken (the state encoded in steps), if any. */
  private snapshotTaking: SnapshotTaking | undefined;
  /** The local snapshot being written (file, log marker, compaction), if any. */
  private snapshotWrite: Promise<void> | undefined;

  constructor(private readonly options: RaftDriverOptions) {
    this.node = options.node;
    this.lastSnapshotIndex = options.bootSnapshotIndex;
    this.lastSnapshotBytes = options.bootSnapshotBytes ?? 0;
    if (!Number.isSafeInteger(options.snapshotBytes) || options.snapshotBytes < 1) throw new TypeError(`RaftDriver: snapshotBytes must be a positive integer, got ${options.snapshotBytes}`);
    this.snapshotStateBytesPerEntry = options.snapshotStateBytesPerEntry ?? SNAPSHOT_STATE_BYTES_PER_ENTRY;
    if (!Number.isSafeInteger(this.snapshotStateBytesPerEntry) || this.snapshotStateBytesPerEntry < 1) {
      throw new TypeError(`RaftDriver: snapshotStateBytesPerEntry must be a positive integer, got ${this.snapshotStateBytesPerEntry}`);
    }
  }

  /** Bytes of entry data applied since the last snapshot. */
  get appliedBytesSinceSnapshot(): number {
    return this.bytesSinceSnapshot;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.node.tick();
      this.wake();
    }, this.options.tickMs);
    this.wake();
  }

  /** Ticks the core `ticks` times at once (etcd's advanceTicks: a shorter wait for the first election at start). */
  advanceTicks(ticks: number): void {
    if (this.stopped) return;
    for (let i = 0; i < ticks; i++) this.node.tick();
    this.wake();
  }

  /** Stops ticking and waits for the Ready being handled and the snapshot being written, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.loopDone;
    await this.snapshotWrite;
  }

  get isLeader(): boolean {
    return this.role === Role.Leader;
  }

  get leader(): NodeId {
    return this.leaderId;
  }

  get currentTerm(): number {
    return this.term;
  }

  /** Term of the entry at `index` in this member's log, undefined outside it. */
  termAt(index: number): number | undefined {
    return this.options.node.termAt(index);
  }

  /** The persisted entries in (`after`, `through`]: see {@link entriesAfter}. */
  persistedEntriesAfter(after: number, term: number, through: number, maxBytes: number): Entry[] | undefined {
    return entriesAfter(this.options.persistence.storage, after, term, through, maxBytes);
  }

  /** A message from a peer. Malformed or misaddressed messages are dropped (the core throws). */
  step(message: Message): void {
    if (this.stopped) return;
    try {
      this.node.step(message);
    } catch (error) {
      this.options.logger.debug({ err: error, from: message.from.toString(16) }, 'peer message dropped');
      return;
    }
    this.wake();
  }

  /** Proposes an entry; throws ProposalDroppedError when no log took it. */
  propose(data: Uint8Array): void {
    this.node.propose(data);
    this.wake();
  }

  /**
   * Proposes a membership change (at most one is pending: a later one is appended as an empty
   * entry, which the proposer sees as its change never applying); throws ProposalDroppedError
   * when no log took it.
   */
  proposeConfChange(cc: ConfChangeV2): void {
    this.node.proposeConfChange(cc);
    this.wake();
  }

  /** The leader's view of every member's replication (empty on followers). */
  progress(): ReadonlyMap<NodeId, ProgressStatus> {
    return this.node.status().progress;
  }

  readIndex(context: Uint8Array): void {
    if (this.stopped) return;
    this.node.readIndex(context);
    this.wake();
  }

  /** Asks the core to hand leadership to `transferee` (a leader-only request; others ignore it). */
  transferLeader(transferee: NodeId): void {
    if (this.stopped) return;
    this.node.transferLeader(transferee);
    this.wake();
  }

  reportUnreachable(id: NodeId): void {
    if (this.stopped) return;
    this.node.reportUnreachable(id);
    this.wake();
  }

  reportSnapshot(id: NodeId, succeeded: boolean): void {
    if (this.stopped) return;
    this.node.reportSnapshot(id, succeeded);
    this.wake();
  }

  /** Handles Readies soon; everything arriving in the same event-loop turn joins the batch. */
  private wake(): void {
    if (this.running || this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.running || this.stopped) return;
      this.running = true;
      this.loopDone = this.loop().finally(() => {
        this.running = false;
        if (!this.stopped && this.node.hasReady()) this.wake();
      });
    });
  }

  private async loop(): Promise<void> {
    try {
      // A Ready with nothing to write is handled without leaving the task (its await is a
      // microtask): a backlog of committed entries (a boot's log tail, a follower catching up)
      // would be applied in one stall, a MiB of entries per Ready. After READY_TURN_MS the loop
      // lets the event loop in (timers, peers, clients) before the next Ready.
      let turnStarted = performance.now();
      while (!this.stopped && this.node.hasReady()) {
        await this.handle(this.node.ready());
        this.maybeSnapshot();
        if (performance.now() - turnStarted >= READY_TURN_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          turnStarted = performance.now();
        }
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private async handle(rd: Ready): Promise<void> {
    if (rd.softState !== undefined) this.role = rd.softState.role;
    const leader = this.role === Role.Leader;
    const hasSnapshot = rd.snapshot !== undefined && !isEmptySnapshot(rd.snapshot);
    // Committed entries already in this member's durable log (written by an earlier Ready) are
    // durable on a quorum and here: they are applied, and their proposers answered, while this
    // Ready is being written (etcd applies in parallel with its WAL save too). Read states only
    // need the commit index a quorum confirmed. Entries this Ready itself carries, and everything
    // after an installed snapshot, wait for the write.
    // (A follower's new entries may replace uncommitted ones of its log: those indexes are not durable.)
    const durableIndex = hasSnapshot ? 0 : Math.min(this.options.persistence.storage.lastIndex(), (rd.entries[0]?.index ?? Number.POSITIVE_INFINITY) - 1);
    let split = 0;
    while (split < rd.committedEntries.length && rd.committedEntries[split]!.index <= durableIndex) split++;
    if (leader) this.options.send(rd.messages);
    const persisting = rd.entries.length > 0 || rd.hardState !== undefined || hasSnapshot ? this.options.persistence.persist(rd) : undefined;
    // Awaited below; the handler only keeps a failure from counting as unhandled meanwhile.
    persisting?.catch(() => undefined);
    if (split > 0) this.applyEarly(rd.committedEntries.slice(0, split));
    if (rd.readStates.length > 0) this.options.hooks.onReadStates(rd.readStates);
    if (persisting !== undefined) await persisting;
    if (!leader) this.options.send(rd.messages);
    const status = this.node.basicStatus();
    if (status.lead !== this.leaderId || status.term !== this.term) {
      this.leaderId = status.lead;
      this.term = status.term;
      this.options.hooks.onLeaderChange(status.lead, status.term);
    }
    if (hasSnapshot) {
      this.snapshotTaking = undefined; // of the state being replaced
      const bytes = await this.restore(rd.snapshot!);
      this.lastSnapshotIndex = rd.snapshot!.metadata.index;
      this.lastSnapshotBytes = bytes;
      this.bytesSinceSnapshot = 0;
      this.options.hooks.onRestored(rd.snapshot!, bytes);
    }
    const rest = split === 0 ? rd.committedEntries : rd.committedEntries.slice(split);
    const applied = this.applyEntries(rest);
    this.node.advance();
    if (rest.length > 0) this.options.hooks.onApplied(applied, this.options.stateMachine.appliedIndex);
  }

  /**
   * Replaces the state by an installed snapshot's; returns its data's length. A snapshot received
   * into its file (its message carried no data) is decoded as the file is read, never whole.
   */
  private async restore(snapshot: Snapshot): Promise<number> {
    if (snapshot.data.length > 0) {
      this.options.stateMachine.restore(snapshot);
      return snapshot.data.length;
    }
    const stream = await this.options.persistence.snapshotData(snapshot);
    await this.options.stateMachine.restoreStreamed(snapshot.metadata, stream);
    return stream.totalBytes;
  }

  private applyEntries(entries: readonly Entry[]): AppliedRequest[] {
    const from = this.options.stateMachine.appliedIndex;
    for (const entry of entries) if (entry.index > from) this.bytesSinceSnapshot += entry.data.length;
    return this.options.stateMachine.apply(
      entries,
      (cc: ConfChangeV2) => this.node.applyConfChange(cc),
      (change) => {
        if (change.change.added.length > 0) this.snapshotDue = true;
        this.options.hooks.onMembership(change);
      },
    );
  }

  private applyEarly(entries: readonly Entry[]): void {
    const applied = this.applyEntries(entries);
    this.options.hooks.onApplied(applied, this.options.stateMachine.appliedIndex);
  }

  /**
   * Starts a local snapshot when one is due. The state is taken at the applied index in turns of
   * at most SNAPSHOT_TURN_MS, between which the Ready loop goes on (heartbeats, votes, commits and
   * applies do not wait for a large state's encoding): first sized, then written to its file as it
   * is encoded, through a few reused buffers (SNAPSHOT_TURN_BYTES at most in flight), never held
   * whole. The core's log learns of the snapshot once its file is durable. One snapshot is taken at
   * a time; one given up (the member stopping, a snapshot from the leader replacing the state, a
   * compaction cutting records it still had to write) leaves no file; so does a state larger than
   * a snapshot may be (see snapshotRefused); a failed write stops the member.
   */
  private maybeSnapshot(): void {
    if (this.stopped || this.snapshotWrite !== undefined || this.snapshotTaking !== undefined) return;
    const index = this.options.stateMachine.appliedIndex;
    const due = this.snapshotDue && index > this.lastSnapshotIndex;
    const byteTrigger = Math.max(this.options.snapshotBytes, this.lastSnapshotBytes);
    const entriesSince = index - Math.max(this.lastSnapshotIndex, this.refusedSnapshotIndex);
    if (!due && entriesSince < this.entryTrigger() && this.bytesSinceSnapshot < byteTrigger) return;
    if (index <= this.lastSnapshotIndex) return;
    this.snapshotDue = false;
    // The state, its applied index and its configuration belong to the same moment.
    const snapshot = new PooledSnapshot((stream) => this.options.stateMachine.snapshotTask(stream));
    const taking: SnapshotTaking = { snapshot, startedMs: performance.now(), bytesAtStart: this.bytesSinceSnapshot, due };
    this.snapshotTaking = taking;
    this.snapshotWrite = this.takeSnapshot(taking).finally(() => {
      if (this.snapshotTaking === taking) this.snapshotTaking = undefined;
      this.snapshotWrite = undefined;
    });
  }

  /** Applied entries that trigger a local snapshot: the configured count, or more for a large state (SNAPSHOT_STATE_BYTES_PER_ENTRY). */
  private entryTrigger(): number {
    const { snapshotEntries, snapshotBytes } = this.options;
    if (this.lastSnapshotBytes <= snapshotBytes) return snapshotEntries;
    return Math.max(snapshotEntries, Math.floor(this.lastSnapshotBytes / this.snapshotStateBytesPerEntry));
  }

  private async takeSnapshot(taking: SnapshotTaking): Promise<void> {
    const { task } = taking.snapshot;
    const dropped = (): boolean => this.snapshotTaking !== taking || this.stopped;
    try {
      // Sized first: the file's head gives the length.
      const sized = await taking.snapshot.size(dropped);
      if (sized === 'dropped') return;
      if (sized === 'stale') return this.snapshotStale(taking);
      const bytes = task.sizeBytes!;
      const snapshot = await this.options.persistence.createSnapshotStreamed(task.index, task.confState, bytes, taking.snapshot.pieces(dropped));
      if (snapshot === undefined) return;
      // Recorded (even if the member began stopping meanwhile). A snapshot from the leader
      // installed meanwhile is newer: the counts are its.
      if (task.index > this.lastSnapshotIndex) {
        this.lastSnapshotIndex = task.index;
        this.lastSnapshotBytes = bytes;
        // What was applied while the snapshot was taken counts toward the next one.
        this.bytesSinceSnapshot = Math.max(0, this.bytesSinceSnapshot - taking.bytesAtStart);
      }
      this.options.hooks.onSnapshot(task.index, bytes, performance.now() - taking.startedMs);
    } catch (error) {
      if (error instanceof SnapshotGivenUp) {
        if (error.reason === 'stale') this.snapshotStale(taking);
        return;
      }
      if (error instanceof SnapshotTooLargeError) return this.snapshotRefused(taking, error);
      this.fail(error);
    }
  }

  /** A compaction cut records the snapshot needed: take another, of the state as it is now. */
  private snapshotStale(taking: SnapshotTaking): void {
    if (this.snapshotTaking === taking) this.snapshotTaking = undefined;
    if (taking.due) this.snapshotDue = true;
    this.options.logger.info({ index: taking.snapshot.task.index }, 'local snapshot dropped: a compaction was applied while it was taken; taking another');
    // After this write's promise has settled (maybeSnapshot waits for none to be in flight).
    setImmediate(() => this.maybeSnapshot());
  }

  /**
   * The state encodes to more than a snapshot may hold (found when it is sized, before anything is
   * written): the member goes on without one, its log not compacted (the backend quota keeps a
   * store below the bound; this is for a member without a quota, or one whose non-key state
   * outgrew it). Tried again after as many entries or bytes as a snapshot is taken after, and as
   * many bytes as the state had.
   */
  private snapshotRefused(taking: SnapshotTaking, error: SnapshotTooLargeError): void {
    const { index } = taking.snapshot.task;
    this.refusedSnapshotIndex = Math.max(this.refusedSnapshotIndex, index);
    this.lastSnapshotBytes = Math.max(this.lastSnapshotBytes, error.sizeBytes);
    this.bytesSinceSnapshot = Math.max(0, this.bytesSinceSnapshot - taking.bytesAtStart);
    this.options.logger.error(
      { index, bytes: error.sizeBytes, limitBytes: error.limitBytes },
      'local snapshot not written: the state is larger than a snapshot may be; the log is kept (compact and delete keys, or lower RAFT_NODE_QUOTA_BACKEND_BYTES)',
    );
  }

  /** Persisting failed: the log is closed for good, so nothing more is handled. */
  private fail(error: unknown): void {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.options.hooks.onFatal(error);
  }
}

/**
 * The entries in (`after`, `through`] of `storage` when it holds them all, the entry at `after`
 * has term `term` (the same log up to there: Raft's log matching) and their data fit `maxBytes`;
 * undefined otherwise. For a feed going on from where its reader stopped.
 */
export function entriesAfter(storage: Storage, after: number, term: number, through: number, maxBytes: number): Entry[] | undefined {
  if (after > through || after < storage.firstIndex() - 1 || through > storage.lastIndex()) return undefined;
  if (storage.term(after) !== term) return undefined;
  const entries: Entry[] = [];
  let bytes = 0;
  let next = after + 1;
  while (next <= through) {
    const piece = storage.entries(next, through + 1, Math.max(0, maxBytes - bytes));
    if (piece.length === 0) return undefined;
    for (const entry of piece) {
      bytes += entry.data.length;
      entries.push(entry);
    }
    if (bytes > maxBytes) return undefined;
    next += piece.length;
  }
  return entries;
}
