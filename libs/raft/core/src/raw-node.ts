import { assert } from '@ward/shared/errors';
import type { RaftConfig } from './config';
import { resolveRaftConfig } from './config';
import { encodeConfChange, encodeConfChangeV2 } from './codec/codec';
import type { ConfChange, ConfChangeV2 } from './confchange/conf-change';
import { asV2, isConfChangeV2 } from './confchange/conf-change';
import { MessageInvalidError, ProposalDroppedError, StepLocalMessageError, StepPeerNotFoundError } from './errors';
import type { NodeId } from './ids';
import { isNodeId } from './ids';
import type { Message } from './message';
import { MessageType, isLocalMessageType, isResponseMessageType, message } from './message';
import { Raft } from './raft';

/** Largest ReadIndex context accepted (a request id, not a payload). */
export const MAX_READ_CONTEXT_BYTES = 64 * 1024;
import type { Ready } from './ready';
import type { ProgressStatus, Status } from './status';
import type { ConfState, HardState, Index, Snapshot, SoftState, Term } from './types';
import { EntryType, entriesSizeBytes, equalHardStates, payloadBytes, Role } from './types';
import { validateMessage } from './validate-message';

/** Work queued by ready() that advance() performs once the caller has persisted and applied. */
type AdvanceStep =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'stable'; readonly term: Term; readonly index: Index; readonly logTerm: Term; readonly snapshot: Snapshot | undefined }
  | { readonly kind: 'applied'; readonly index: Index; readonly bytes: number; readonly payloadBytes: number };

/**
 * The public, synchronous face of a raft node (etcd's RawNode). Inputs: tick, step, propose,
 * readIndex, transferLeader, campaign. Output: a {@link Ready}, handled by the caller in its
 * documented order, then `advance()`. Deterministic: same inputs, same outputs.
 *
 * @example
 * ```ts
 * const node = new RawNode({ id: 1n, storage, rng: new SeededRng(seed) });
 * node.tick();
 * while (node.hasReady()) {
 *   const rd = node.ready();
 *   persist(rd); send(rd.messages); apply(rd.committedEntries);
 *   node.advance();
 * }
 * ```
 */
export class RawNode {
  private readonly raft: Raft;
  private prevSoftState: SoftState;
  private prevHardState: HardState;
  private stepsOnAdvance: AdvanceStep[] = [];
  private readyOutstanding = false;
  private readonly skipSyncOnVote: boolean;

  /** Validates `config` (throws RaftConfigError) and loads state from its storage. */
  constructor(config: RaftConfig) {
    const resolved = resolveRaftConfig(config);
    this.raft = new Raft(resolved);
    this.prevSoftState = this.raft.softState();
    this.prevHardState = this.raft.hardState();
    this.skipSyncOnVote = resolved.mutations.has('skip-sync-on-vote');
  }

  /** Advances the logical clock by one tick (elections, heartbeats, CheckQuorum). */
  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now (with a pre-vote round if PreVote is on). */
  campaign(): void {
    this.raft.step(message(MessageType.Hup, { from: this.raft.id }));
  }

  /**
   * Proposes `data` for the log. Throws ProposalDroppedError when no log took it (no leader,
   * transfer in progress, uncommitted-bytes limit); success means "appended or forwarded", not
   * "committed": watch committed entries for the outcome.
   */
  propose(data: Uint8Array): void {
    if (!(data instanceof Uint8Array)) throw new TypeError('propose: data must be a Uint8Array');
    if (data.length > this.raft.maxProposalBytes) throw new ProposalDroppedError('entry-too-large');
    const entry = { term: 0, index: 0, type: EntryType.Normal, data };
    this.raft.step(message(MessageType.Prop, { from: this.raft.id, entries: [entry] }));
  }

  /**
   * Proposes a membership change. A one-step ConfChange (or a ConfChangeV2 with one change and
   * the Auto transition) changes at most one voter; anything else goes through a joint
   * configuration. The change takes effect on each node when the application applies its entry
   * and calls {@link applyConfChange}. While an earlier change is unapplied (or the joint state
   * does not fit) the leader appends an empty entry instead: watch the log for the outcome.
   * Throws ProposalDroppedError as propose does, and with reason 'invalid-conf-change' for a
   * change that cannot apply to the leader's configuration (removing every voter, say).
   */
  proposeConfChange(cc: ConfChange | ConfChangeV2): void {
    const v2 = isConfChangeV2(cc);
    const data = v2 ? encodeConfChangeV2(cc) : encodeConfChange(cc);
    if (data.length > this.raft.maxProposalBytes) throw new ProposalDroppedError('entry-too-large');
    const entry = { term: 0, index: 0, type: v2 ? EntryType.ConfChangeV2 : EntryType.ConfChange, data };
    this.raft.step(message(MessageType.Prop, { from: this.raft.id, entries: [entry] }));
  }

  /**
   * Call after applying a committed ConfChange/ConfChangeV2 entry (decode it with
   * `decodeConfChangeEntry`), before advance(): installs the new configuration and returns it.
   * The application keeps the returned ConfState with its state (snapshots carry it). Throws
   * ConfChangeError, changing nothing, if the change cannot apply (not for entries appended by a
   * leader of this library, which checks changes before appending them).
   */
  applyConfChange(cc: ConfChange | ConfChangeV2): ConfState {
    return this.raft.applyConfChange(asV2(cc));
  }

  /** The configuration installed now (what the last applied membership change produced). */
  confState(): ConfState {
    return this.raft.trk.confState();
  }

  /**
   * Steps a message received from a peer. Throws MessageInvalidError for a malformed message,
   * StepLocalMessageError for a kind peers may not send, StepPeerNotFoundError for a response
   * from an untracked node; in each case nothing changed. A proposal forwarded by a follower that
   * the leader cannot take throws ProposalDroppedError (the transport may ignore it: the
   * follower's client learns the outcome from the log, or times out).
   */
  step(m: Message): void {
    validateMessage(m);
    if (isLocalMessageType(m.type)) throw new StepLocalMessageError(m.type);
    if (m.to !== this.raft.id) throw new MessageInvalidError('to', `addressed to ${m.to}, this node is ${this.raft.id}`);
    if (isResponseMessageType(m.type) && this.raft.trk.get(m.from) === undefined) throw new StepPeerNotFoundError(m.from);
    this.raft.step(m);
  }

  /**
   * Requests a linearizable read. The answer arrives as a ReadState carrying `context` in a
   * later Ready (never, if leadership is lost meanwhile: retry after a timeout).
   */
  readIndex(context: Uint8Array): void {
    if (!(context instanceof Uint8Array)) throw new TypeError('readIndex: context must be a Uint8Array');
    if (context.length > MAX_READ_CONTEXT_BYTES) throw new TypeError(`readIndex: context exceeds ${MAX_READ_CONTEXT_BYTES} bytes`);
    this.raft.step(message(MessageType.ReadIndex, { context }));
  }

  /** Asks the leader to hand leadership to `transferee` (forwarded if this node is not the leader). */
  transferLeader(transferee: NodeId): void {
    if (!isNodeId(transferee)) throw new TypeError('transferLeader: transferee must be a node id');
    this.raft.step(message(MessageType.TransferLeader, { from: transferee }));
  }

  /** A follower forgets its leader (so that it may vote at once); ignored in lease-based mode. */
  forgetLeader(): void {
    this.raft.step(message(MessageType.ForgetLeader, { from: this.raft.id }));
  }

  /** The transport could not reach `id`: the leader stops streaming to it optimistically. */
  reportUnreachable(id: NodeId): void {
    this.raft.step(message(MessageType.Unreachable, { from: id }));
  }

  /** The transport finished (`succeeded`) or failed sending a snapshot to `id`. */
  reportSnapshot(id: NodeId, succeeded: boolean): void {
    this.raft.step(message(MessageType.SnapStatus, { from: id, reject: !succeeded }));
  }

  /** True when ready() would return something to do. */
  hasReady(): boolean {
    const r = this.raft;
    r.flushAppends();
    if (r.msgs.length > 0 || r.msgsAfterAppend.length > 0 || r.readStates.length > 0) return true;
    if (r.lead !== this.prevSoftState.lead || r.role !== this.prevSoftState.role) return true;
    const hs = this.prevHardState;
    if (r.term !== hs.term || r.vote !== hs.vote || r.log.committed !== hs.commit) return true;
    return r.log.nextUnstableSnapshot() !== undefined || r.log.hasNextUnstableEntries() || r.log.hasNextCommittedEntries();
  }

  /** What to persist, send and apply now. Must be followed by advance() before the next ready(). */
  ready(): Ready {
    assert(!this.readyOutstanding, 'ready() called twice without advance()');
    const rd = this.buildReady();
    this.accept(rd);
    return rd;
  }

  private buildReady(): Ready {
    const r = this.raft;
    r.flushAppends();
    const softState = r.lead !== this.prevSoftState.lead || r.role !== this.prevSoftState.role ? r.softState() : undefined;
    const hs = r.hardState();
    const hardState = equalHardStates(hs, this.prevHardState) ? undefined : hs;
    const entries = r.log.nextUnstableEntries();
    const termOrVoteChanged = hs.term !== this.prevHardState.term || hs.vote !== this.prevHardState.vote;
    const messages = r.msgs;
    for (const m of r.msgsAfterAppend) if (m.to !== r.id) messages.push(m);
    return {
      softState,
      hardState,
      readStates: r.readStates,
      entries,
      snapshot: r.log.nextUnstableSnapshot(),
      committedEntries: r.log.nextCommittedEntries(),
      messages,
      mustSync: entries.length > 0 || (termOrVoteChanged && !this.skipSyncOnVote),
    };
  }

  private accept(rd: Ready): void {
    const r = this.raft;
    if (rd.softState !== undefined) this.prevSoftState = rd.softState;
    if (rd.hardState !== undefined) this.prevHardState = rd.hardState;
    r.readStates = [];
    for (const m of r.msgsAfterAppend) if (m.to === r.id) this.stepsOnAdvance.push({ kind: 'message', message: m });
    if (r.log.hasNextOrInProgressUnstableEntries() || rd.snapshot !== undefined) {
      const last = r.log.lastIndex();
      const stableIndex = r.log.hasNextOrInProgressUnstableEntries() ? last : 0;
      this.stepsOnAdvance.push({ kind: 'stable', term: r.term, index: stableIndex, logTerm: r.log.lastTerm(), snapshot: rd.snapshot });
    }
    const committed = rd.committedEntries;
    if (committed.length > 0) {
      const index = committed[committed.length - 1]!.index;
      const bytes = entriesSizeBytes(committed);
      this.stepsOnAdvance.push({ kind: 'applied', index, bytes, payloadBytes: payloadBytes(committed) });
      r.log.acceptApplying(index, bytes);
    }
    r.msgs = [];
    r.msgsAfterAppend = [];
    r.log.acceptUnstable();
    this.readyOutstanding = true;
  }

  /**
   * The last Ready was handled: its state is durable, its messages sent, its entries applied.
   * Counts this node's own votes and acknowledgements, and releases the log tail.
   */
  advance(): void {
    assert(this.readyOutstanding, 'advance() without a pending ready()');
    const steps = this.stepsOnAdvance;
    this.stepsOnAdvance = [];
    this.readyOutstanding = false;
    const r = this.raft;
    for (const s of steps) {
      if (s.kind === 'message') {
        r.step(s.message);
      } else if (s.kind === 'stable') {
        // After a term change the tail may have been overwritten meanwhile: do not release it.
        if (s.index !== 0 && s.term === r.term) r.log.stableTo(s.index, s.logTerm);
        if (s.snapshot !== undefined) r.appliedSnapshot(s.snapshot.metadata.index);
      } else {
        r.appliedTo(s.index, s.bytes);
        r.reduceUncommittedBytes(s.payloadBytes);
      }
    }
  }

  /** A point-in-time view: term, vote, commit, role, and (leader) every member's progress. */
  status(): Status {
    const r = this.raft;
    const progress = new Map<NodeId, ProgressStatus>();
    if (r.role === Role.Leader) {
      for (const id of r.trk.ids) {
        const pr = r.trk.mustGet(id);
        progress.set(id, {
          match: pr.match,
          next: pr.next,
          state: pr.state,
          recentActive: pr.recentActive,
          paused: pr.isPaused(),
          inflightMessages: pr.inflights.size(),
          isLearner: pr.isLearner,
        });
      }
    }
    return {
      id: r.id,
      term: r.term,
      vote: r.vote,
      commit: r.log.committed,
      lead: r.lead,
      role: r.role,
      applied: r.log.applied,
      lastIndex: r.log.lastIndex(),
      leadTransferee: r.leadTransferee,
      progress,
    };
  }

  /** Cheap status without per-member progress. */
  basicStatus(): Omit<Status, 'progress'> {
    const r = this.raft;
    return {
      id: r.id,
      term: r.term,
      vote: r.vote,
      commit: r.log.committed,
      lead: r.lead,
      role: r.role,
      applied: r.log.applied,
      lastIndex: r.log.lastIndex(),
      leadTransferee: r.leadTransferee,
    };
  }

  /**
   * Term of entry `index` in this node's log (persisted or not), undefined outside it. For
   * diagnostics and invariant checkers; the algorithm never needs it from outside.
   */
  termAt(index: Index): Term | undefined {
    return this.raft.log.termOrUndefined(index);
  }

  /** True while this node believes it leads. */
  isLeader(): boolean {
    return this.raft.role === Role.Leader;
  }

  /** The leader this node knows of, or NO_NODE. */
  leader(): NodeId {
    return this.raft.lead;
  }
}
