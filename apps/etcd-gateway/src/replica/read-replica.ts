// The gateway's read replica: a copy of the members' state machine (@ward/etcd/apply's Applier),
// fed by one member's Follow stream: that member's state at some applied index, then every request
// entry it applies, in log order. Its state at applied index i is the cluster's state at index i,
// so it answers a serializable read at once and a linearizable one once it has applied the
// cluster's read index (replica-reads.ts). It never proposes and decides nothing for the cluster:
// if the stream breaks, the replica is not used until a new stream has brought it up to date. The
// new stream asks to go on from the replica's applied index and that entry's term; a member whose
// log holds that entry with that term sends the entries since (the replica keeps its state), any
// other answer starts with a snapshot (the replica drops its state at the first chunk).
import { status as Status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import type { ResponseContext } from '@ward/etcd/api-mapping';
import { Applier, CompactionTurns, decodeApplyRequest, type ApplierDecoder, type ApplierOptions, type ApplyRequest, type ApplyResult } from '@ward/etcd/apply';
import type { ApplierLimits__Output, FollowMessage__Output } from '@ward/etcd/proto';
import type { Logger } from '@ward/platform/logging';

export type FollowStream = ClientReadableStream<FollowMessage__Output>;

export interface ReadReplicaOptions {
  /**
   * Opens a Follow stream at some member (rejects when none is reachable), asking to go on from
   * `from` (an applied index and its entry's term) when given.
   */
  readonly open: (from: FollowFrom | undefined) => Promise<FollowStream>;
  /** Decoding bound of an entry: at least the members' own (they decoded it first). */
  readonly maxEntryBytes: number;
  /**
   * Largest snapshot the replica takes (bytes; the member is told, and refuses a larger state once
   * sized); a larger state is not replicated here, and asked for again after `tooLargeRetryMs`.
   */
  readonly maxSnapshotBytes: number;
  /** Delay before asking again for a state that was too large (default TOO_LARGE_RETRY_MS). */
  readonly tooLargeRetryMs?: number;
  /** Reads waiting for the replica to reach an index; beyond, they are not served here. */
  readonly maxWaiting: number;
  /** Delay before opening a new stream after one ended (doubles up to `maxRetryMs`). */
  readonly minRetryMs: number;
  readonly maxRetryMs: number;
  readonly logger: Logger;
  /** Longest one turn of applying a feed message's entries holds the event loop (default APPLY_TURN_MS). */
  readonly applyTurnMs?: number;
  /** Monotonic ms (default performance.now). */
  readonly now?: () => number;
  /**
   * The member id of the leader when known. A feed from another member moves to the leader once
   * synced and whenever leaderChanged is called, at most once per `minMoveIntervalMs` (default
   * MIN_MOVE_INTERVAL_MS), an interval that doubles up to `maxMoveIntervalMs` (default
   * MAX_MOVE_INTERVAL_MS) while moves do not reach it. Without it the feed stays where it reached.
   */
  readonly leader?: () => bigint | undefined;
  readonly minMoveIntervalMs?: number;
  readonly maxMoveIntervalMs?: number;
}

/**
 * Longest a turn of applying entries holds the gateway's event loop: a message of the feed can
 * carry thousands of puts (a bulk load's txns), whose apply in one piece held every client of the
 * gateway for up to ~100 ms at a million keys. The rest of the message is applied in the next
 * turns, the stream paused meanwhile (the member keeps what it has not sent, within its bound).
 */
export const APPLY_TURN_MS = 5;
/**
 * How long a replica whose state was too large waits before it asks again: each ask costs a member
 * the sizing of its whole state (tens of ms at a million keys, in turns).
 */
export const TOO_LARGE_RETRY_MS = 60_000;
/**
 * A feed from a member other than the leader moves to the leader at most this often. The leader
 * applies an entry before any follower can (a follower learns the commit from it), so a read right
 * after a write through this gateway waits less for the replica (docs/architecture.md has what was
 * measured). A move costs the replica the entries the new member applied meanwhile, read from its
 * log (reads go to the members until they are in).
 */
export const MIN_MOVE_INTERVAL_MS = 1000;
/** The longest interval between moves that do not reach the leader (it is not reachable from here). */
export const MAX_MOVE_INTERVAL_MS = 60_000;
/** Feed messages taken while one is still being applied (the stream is paused), at most. */
const MAX_QUEUED_MESSAGES = 1024;

/** Where a replica that keeps its state asks a new stream to go on from. */
export interface FollowFrom {
  readonly index: number;
  readonly term: number;
}

/** How a wait for an index ended: reached, timed out, or refused (no state, or too many waiting). */
export type WaitOutcome = 'reached' | 'timeout' | 'refused';

interface Waiter {
  readonly index: number;
  readonly resolve: (outcome: WaitOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

/** A feed message being applied in turns: its entries from `next` on are not applied yet. */
interface Backlog {
  readonly stream: FollowStream;
  readonly message: FollowMessage__Output;
  next: number;
}

interface Synced {
  readonly applier: Applier;
  readonly context: ResponseContext;
}

/** A state kept while no stream feeds it (not served), for the next stream to go on from. */
interface Retained {
  readonly applier: Applier;
  readonly clusterId: bigint;
  readonly from: FollowFrom;
}

function applierOptions(limits: ApplierLimits__Output | null | undefined): ApplierOptions {
  return {
    kv: { maxTxnOps: limits?.max_txn_ops, eventHistoryMaxEvents: limits?.event_history_max_events },
    maxSimpleTokens: limits?.max_simple_tokens,
    maxSimpleTokensPerUser: limits?.max_simple_tokens_per_user,
  };
}

export class ReadReplica {
  private synced: Synced | undefined;
  private appliedIndexValue = 0;
  /** The term of the entry at the applied index, as the feed said (0: not known). */
  private appliedTermValue = 0;
  private retained: Retained | undefined;
  private stream: FollowStream | undefined;
  /** The snapshot being received: decoded as its chunks come, never joined whole. */
  private decoder: ApplierDecoder | undefined;
  private snapshotBytes = 0;
  private waiters: Waiter[] = [];
  private backlog: Backlog | undefined;
  /** Messages the stream delivered while one was applied in turns (before its pause took hold). */
  private queued: FollowMessage__Output[] = [];
  private readonly applyTurnMs: number;
  private readonly now: () => number;
  private retryMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** When the feed may move to the leader next (ms of `now`), and the interval after that move. */
  private moveNotBeforeMs = Number.NEGATIVE_INFINITY;
  private moveIntervalMs: number;
  private readonly minMoveIntervalMs: number;
  private readonly maxMoveIntervalMs: number;
  private moveTimer: NodeJS.Timeout | undefined;
  /** Cuts a compaction's dropped records in turns, never in one stall of the feed (KVStore.compactionPending). */
  private readonly compaction = new CompactionTurns({ target: () => this.synced?.applier, now: () => performance.now(), defer: (turn) => setImmediate(turn) });
  /** Streams that ended; for metrics and tests. */
  resyncCount = 0;
  /** Streams that went on from the kept state instead of a snapshot; for metrics and tests. */
  resumeCount = 0;
  /** Feeds moved to the leader from another member; for metrics and tests. */
  moveCount = 0;

  constructor(private readonly options: ReadReplicaOptions) {
    this.retryMs = options.minRetryMs;
    this.applyTurnMs = options.applyTurnMs ?? APPLY_TURN_MS;
    this.now = options.now ?? (() => performance.now());
    if (!(this.applyTurnMs > 0)) throw new TypeError(`ReadReplica: applyTurnMs must be positive, got ${this.applyTurnMs}`);
    this.minMoveIntervalMs = options.minMoveIntervalMs ?? MIN_MOVE_INTERVAL_MS;
    this.maxMoveIntervalMs = options.maxMoveIntervalMs ?? MAX_MOVE_INTERVAL_MS;
    if (!(this.minMoveIntervalMs > 0) || !(this.minMoveIntervalMs <= this.maxMoveIntervalMs)) throw new TypeError(`ReadReplica: need 0 < minMoveIntervalMs <= maxMoveIntervalMs, got ${this.minMoveIntervalMs} and ${this.maxMoveIntervalMs}`);
    this.moveIntervalMs = this.minMoveIntervalMs;
  }

  /** The replica holds a state it can serve reads from. */
  get ready(): boolean {
    return this.synced !== undefined;
  }

  /** The member index the replica's state is at (0 while not ready). */
  get appliedIndex(): number {
    return this.synced === undefined ? 0 : this.appliedIndexValue;
  }

  /** The auth store's revision (0 while not ready). */
  get authRevision(): number {
    return this.synced?.applier.authView.revision ?? 0;
  }

  /** Header fields of an answer from this replica: the cluster's, the feeding member's, its term. */
  get context(): ResponseContext | undefined {
    return this.synced?.context;
  }

  /** True while a compaction's dropped versions are still being cut from the state; for tests. */
  get compactionPending(): boolean {
    return this.synced?.applier.compactionPending ?? false;
  }

  start(): void {
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.compaction.stop();
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    if (this.moveTimer !== undefined) clearTimeout(this.moveTimer);
    this.reset('drop');
  }

  /**
   * The replica fell behind its feed: stop serving and follow again (the leader when known), from
   * its state if the new member's log allows.
   */
  resync(reason: string): void {
    if (this.stream === undefined || this.stopped) return;
    this.options.logger.warn({ reason, index: this.appliedIndexValue }, 'read replica re-syncing');
    this.restart(this.stream, 'keep');
  }

  /**
   * The leader may have changed: a synced feed from another member moves to it (the state kept,
   * the new stream going on from it), unless a move was made less than the move interval ago; then
   * it is checked again once the interval is over.
   */
  leaderChanged(): void {
    if (this.stopped || this.synced === undefined || this.stream === undefined) return;
    const leader = this.options.leader?.();
    if (leader === undefined) return;
    if (this.synced.context.memberId === leader) {
      this.moveIntervalMs = this.minMoveIntervalMs;
      return;
    }
    const waitMs = this.moveNotBeforeMs - this.now();
    if (waitMs > 0) {
      this.moveTimer ??= setTimeout(() => {
        this.moveTimer = undefined;
        this.leaderChanged();
      }, waitMs);
      this.moveTimer.unref();
      return;
    }
    this.moveNotBeforeMs = this.now() + this.moveIntervalMs;
    // The next move, if this one does not reach the leader, waits longer.
    this.moveIntervalMs = Math.min(this.maxMoveIntervalMs, this.moveIntervalMs * 2);
    this.moveCount += 1;
    this.options.logger.info({ from: String(this.synced.context.memberId), leader: String(leader), index: this.appliedIndexValue }, 'read replica moving its feed to the leader');
    this.leave(this.stream, 'keep');
    this.retryMs = this.options.minRetryMs;
    this.connectIn(0);
  }

  /** A Range or read-only Txn against the replica's state (throws when not ready). */
  read(request: ApplyRequest): ApplyResult {
    if (this.synced === undefined) throw new Error('read replica not ready');
    return this.synced.applier.read(request);
  }

  /** Resolves once the replica applied `index`, at `timeoutMs`, or when it loses its state (refused). */
  waitApplied(index: number, timeoutMs: number): Promise<WaitOutcome> {
    if (this.synced !== undefined && this.appliedIndexValue >= index) return Promise.resolve('reached');
    if (this.synced === undefined || this.waiters.length >= this.options.maxWaiting) return Promise.resolve('refused');
    return new Promise((resolve) => {
      const waiter: Waiter = {
        index,
        resolve,
        timer: setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          resolve('timeout');
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  private connect(): void {
    if (this.stopped) return;
    this.options.open(this.retained?.from).then(
      (stream) => {
        if (this.stopped) {
          stream.cancel();
          return;
        }
        this.follow(stream);
      },
      () => this.retryLater(),
    );
  }

  private follow(stream: FollowStream): void {
    this.stream = stream;
    stream.on('data', (message: FollowMessage__Output) => {
      if (this.stream !== stream) return;
      this.guarded(stream, () => {
        if (this.backlog === undefined) return this.onMessage(stream, message);
        if (this.queued.length >= MAX_QUEUED_MESSAGES) throw new Error(`more than ${MAX_QUEUED_MESSAGES} feed messages delivered while paused`);
        this.queued.push(message);
      });
    });
    const ended = (error?: ServiceError): void => {
      if (this.stream !== stream) return;
      // The member's answer to a state larger than the replica takes.
      if (error?.code === Status.FAILED_PRECONDITION) return this.tooLarge(stream, error.details);
      this.restart(stream, 'keep');
    };
    stream.on('error', ended);
    stream.on('end', () => ended());
  }

  /** Runs a step of the feed; one that throws ends the stream and drops the state. */
  private guarded(stream: FollowStream, step: () => void): void {
    try {
      step();
    } catch (error) {
      // Never expected: the member applied exactly these entries. Start again from a snapshot.
      this.options.logger.error({ err: error }, 'read replica could not apply its feed; starting again');
      this.restart(stream, 'drop');
    }
  }

  private onMessage(stream: FollowStream, message: FollowMessage__Output): void {
    const snapshot = message.snapshot;
    if (snapshot) {
      // The member could not go on from the kept state: it goes now, not after the new one is whole.
      this.retained = undefined;
      this.snapshotBytes += snapshot.chunk.length;
      // A member that does not know the replica's bound sends the state anyway.
      if (this.snapshotBytes > this.options.maxSnapshotBytes) return this.tooLarge(stream, `more than ${this.options.maxSnapshotBytes} bytes sent`);
      // Each chunk is decoded as it comes (a bounded piece of work per message; the member sends
      // the state at the reader's pace), so the event loop is never held for the whole state.
      this.decoder ??= Applier.decoder(applierOptions(snapshot.limits));
      this.decoder.push(snapshot.chunk);
      if (!snapshot.last) return;
      const applier = this.decoder.finish();
      this.decoder = undefined;
      this.snapshotBytes = 0;
      this.synced = { applier, context: contextOf(message) };
      this.appliedIndexValue = Number(snapshot.index);
      this.appliedTermValue = Number(message.applied_term);
      this.retryMs = this.options.minRetryMs;
      this.options.logger.info({ index: this.appliedIndexValue, member: message.member_id }, 'read replica synced');
      this.release();
      this.checkLeaderSoon();
      return;
    }
    if (this.synced === undefined && this.retained !== undefined) this.resumeFrom(this.retained, message);
    if (this.synced === undefined) throw new Error('entries before the snapshot');
    const backlog: Backlog = { stream, message, next: 0 };
    if (this.applyEntries(backlog, this.now() + this.applyTurnMs)) return;
    // The turn is over with entries left: the rest in the next turns, the stream paused meanwhile.
    this.backlog = backlog;
    stream.pause();
    this.release();
    setImmediate(() => this.nextTurn(backlog));
  }

  /**
   * The next turn of a message applied in turns, then of the messages queued behind it; once all
   * are applied, the stream is resumed.
   */
  private nextTurn(backlog: Backlog): void {
    if (this.backlog !== backlog) return;
    const { stream } = backlog;
    this.guarded(stream, () => {
      const left = this.drain(backlog, this.now() + this.applyTurnMs);
      if (left === undefined) {
        stream.resume();
        return;
      }
      this.release();
      setImmediate(() => this.nextTurn(left));
    });
  }

  /**
   * Applies the backlog's message, then the messages queued behind it, until `until` (at least one
   * entry): the backlog left for another turn (also `this.backlog`), undefined once all are.
   */
  private drain(backlog: Backlog, until: number): Backlog | undefined {
    let current = backlog;
    for (;;) {
      if (!this.applyEntries(current, until)) return current;
      const message = this.queued.shift();
      if (message === undefined) {
        this.backlog = undefined;
        return undefined;
      }
      if (message.snapshot) throw new Error('a snapshot after entries');
      current = { stream: current.stream, message, next: 0 };
      this.backlog = current;
      if (this.now() >= until) return current;
    }
  }

  /**
   * Applies the message's entries from `backlog.next` until `until` (at least one entry); when all
   * are, takes its applied index, term and header: true. False when entries are left.
   */
  private applyEntries(backlog: Backlog, until: number): boolean {
    const synced = this.synced;
    if (synced === undefined) throw new Error('entries before the snapshot');
    const { message } = backlog;
    const entries = message.entries;
    while (backlog.next < entries.length) {
      const entry = entries[backlog.next]!;
      backlog.next += 1;
      const index = Number(entry.index);
      if (index <= this.appliedIndexValue) continue;
      synced.applier.apply(index, decodeApplyRequest(entry.data, { maxEntryBytes: this.options.maxEntryBytes }));
      this.appliedIndexValue = index;
      // The term of an entry inside a message is not sent: not known until the message is whole.
      this.appliedTermValue = 0;
      if (backlog.next < entries.length && this.now() >= until) return false;
    }
    const appliedIndex = Number(message.applied_index);
    if (appliedIndex >= this.appliedIndexValue) {
      this.appliedIndexValue = appliedIndex;
      this.appliedTermValue = Number(message.applied_term);
    }
    if (Number(message.raft_term) !== synced.context.raftTerm) this.synced = { applier: synced.applier, context: contextOf(message) };
    this.compaction.kick();
    this.release();
    return true;
  }

  /** The stream's first message is not a snapshot: it goes on from the kept state. */
  private resumeFrom(retained: Retained, message: FollowMessage__Output): void {
    this.retained = undefined;
    const context = contextOf(message);
    // A member of another cluster would not have matched the term but by chance; its entries are not ours.
    if (context.clusterId !== retained.clusterId) throw new Error(`entries of cluster ${context.clusterId} for a state of cluster ${retained.clusterId}`);
    this.synced = { applier: retained.applier, context };
    this.appliedIndexValue = retained.from.index;
    this.appliedTermValue = retained.from.term;
    this.retryMs = this.options.minRetryMs;
    this.resumeCount += 1;
    this.options.logger.info({ index: retained.from.index, member: message.member_id }, 'read replica resumed');
    this.checkLeaderSoon();
  }

  /** Once the message being handled is through: is the new feed the leader's? */
  private checkLeaderSoon(): void {
    if (this.options.leader !== undefined) setImmediate(() => this.leaderChanged());
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const applied = this.appliedIndexValue;
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.index <= applied) {
        clearTimeout(waiter.timer);
        waiter.resolve('reached');
      } else {
        still.push(waiter);
      }
    }
    this.waiters = still;
  }

  /** Leaves the stream and follows again: after the backoff, or after `delayMs` when given. */
  private restart(stream: FollowStream, state: 'keep' | 'drop', delayMs?: number): void {
    this.leave(stream, state);
    this.resyncCount += 1;
    if (delayMs === undefined) return this.retryLater();
    this.retryMs = this.options.minRetryMs;
    this.connectIn(delayMs);
  }

  /** Stops taking the stream's messages and stops serving (reset). */
  private leave(stream: FollowStream, state: 'keep' | 'drop'): void {
    stream.removeAllListeners('data');
    this.reset(state);
  }

  /**
   * The state is larger than the replica takes: reads go to the members, and the replica asks
   * again only after tooLargeRetryMs (the state may have shrunk by then).
   */
  private tooLarge(stream: FollowStream, detail: string): void {
    const delayMs = this.options.tooLargeRetryMs ?? TOO_LARGE_RETRY_MS;
    this.options.logger.warn({ detail, maxSnapshotBytes: this.options.maxSnapshotBytes, retryInMs: delayMs }, 'read replica off: the state is larger than GATEWAY_READ_REPLICA_MAX_BYTES; reads go to the members');
    this.restart(stream, 'drop', delayMs);
  }

  /**
   * Stops serving: reads go to the members until a new stream syncs. 'keep' keeps a synced state
   * (with the term of its applied index known) for the next stream to go on from.
   */
  private reset(state: 'keep' | 'drop'): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream !== undefined) {
      stream.on('error', () => undefined);
      stream.cancel();
    }
    // A message half applied: the rest now (and what was queued behind it), so that the kept
    // state is at an index whose term the feed said (the member applied these entries already).
    const keep = state === 'keep' && this.finish();
    this.backlog = undefined;
    this.queued = [];
    const synced = this.synced;
    if (keep && synced !== undefined && this.appliedTermValue > 0) {
      this.retained = { applier: synced.applier, clusterId: synced.context.clusterId, from: { index: this.appliedIndexValue, term: this.appliedTermValue } };
    } else if (!keep) {
      this.retained = undefined;
    }
    this.synced = undefined;
    this.appliedIndexValue = 0;
    this.appliedTermValue = 0;
    this.decoder = undefined;
    this.snapshotBytes = 0;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve('refused');
    }
  }

  /** Applies what is left of a backlog in one piece (drain without a turn's end); false when that fails. */
  private finish(): boolean {
    if (this.backlog === undefined) return true;
    try {
      return this.drain(this.backlog, Number.POSITIVE_INFINITY) === undefined;
    } catch (error) {
      this.options.logger.error({ err: error }, 'read replica could not apply its feed; starting again');
      return false;
    }
  }

  private retryLater(): void {
    const delayMs = this.retryMs;
    this.retryMs = Math.min(this.options.maxRetryMs, this.retryMs * 2);
    this.connectIn(delayMs);
  }

  private connectIn(delayMs: number): void {
    if (this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect();
    }, delayMs);
    this.retryTimer.unref();
  }
}

function contextOf(message: FollowMessage__Output): ResponseContext {
  return { clusterId: BigInt(message.cluster_id), memberId: BigInt(message.member_id), raftTerm: Number(message.raft_term) };
}
