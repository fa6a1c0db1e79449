import type { Rng } from '@ward/shared/clock';
import { EMPTY_BYTES } from '@ward/shared/bytes';
import { assert } from '@ward/shared/errors';
import type { ResolvedRaftConfig } from './config';
import { CAMPAIGN_TRANSFER_CONTEXT } from './constants';
import { RaftConfigError } from './errors';
import type { NodeId } from './ids';
import { NO_NODE } from './ids';
import type { Message, MessageFields } from './message';
import { MessageType, message, voteResponseType } from './message';
import type { RaftMutation } from './mutations';
import { RaftLog } from './raft-log';
import { ReadOnly } from './read-only';
import type { ConfChangeV2 } from './confchange/conf-change';
import { ConfChangeTransition, leavesJoint } from './confchange/conf-change';
import { changeConfState } from './confchange/changer';
import { encodeConfChangeV2 } from './codec/codec';
import { ProposalDroppedError } from './errors';
import { releasePendingReadIndexMessages } from './read-index';
import { bcastAppend, sendAppend } from './replication';
import { stepRaft } from './step';
import { ProgressTracker } from './tracker';
import type { ConfState, Entry, HardState, Index, ReadState, SoftState, Term } from './types';
import { EntryType, Role, isEmptyHardState, payloadBytes } from './types';

/** How an election starts: with a pre-vote round, directly, or forced by a leader transfer. */
export type CampaignType = 'pre-election' | 'election' | 'transfer';

const NO_ENTRIES: readonly Entry[] = Object.freeze([]);

/**
 * The Raft state machine of one node: roles, terms, votes, the log and (as leader) the
 * replication state of every peer. Synchronous and deterministic; driven through RawNode.
 * Fields are public for the step functions of this package and for white-box tests; the
 * package's public API is RawNode.
 */
export class Raft {
  readonly id: NodeId;
  term: Term = 0;
  vote: NodeId = NO_NODE;
  lead: NodeId = NO_NODE;
  role: Role = Role.Follower;
  isLearner = false;
  readonly log: RaftLog;
  readonly trk: ProgressTracker;
  readOnly: ReadOnly;
  readStates: ReadState[] = [];
  /** Messages to send once this Ready is persisted. */
  msgs: Message[] = [];
  /** Votes and append acknowledgements: valid only after the state they answer is durable. */
  msgsAfterAppend: Message[] = [];
  leadTransferee: NodeId = NO_NODE;
  /** Highest log index that may hold an unapplied membership change (for when they land). */
  pendingConfIndex: Index = 0;
  uncommittedBytes = 0;
  /**
   * Proposals were appended since the last broadcast. Appends go out when the next Ready is
   * built, so that every proposal made between two Readies travels in one MsgApp per follower.
   */
  appendsPending = false;
  pendingReadIndexMessages: Message[] = [];
  /**
   * As a follower: the highest index this member has acknowledged to the leader of this term
   * since the term began or the leader's last heartbeat (0 then). An empty MsgApp at or below it
   * that only moves the commit index needs no answer (handleAppendEntries).
   */
  appendAcked: Index = 0;
  electionElapsed = 0;
  heartbeatElapsed = 0;
  randomizedElectionTimeout = 0;
  readonly electionTimeout: number;
  readonly heartbeatTimeout: number;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  readonly disableProposalForwarding: boolean;
  readonly maxMessageBytes: number;
  readonly maxUncommittedBytes: number;
  readonly maxProposalBytes: number;
  readonly mutations: ReadonlySet<RaftMutation>;
  private readonly rng: Rng;
  private stepDepth = 0;

  constructor(config: ResolvedRaftConfig) {
    this.id = config.id;
    this.rng = config.rng;
    this.electionTimeout = config.electionTimeoutTicks;
    this.heartbeatTimeout = config.heartbeatIntervalTicks;
    this.checkQuorum = config.checkQuorum;
    this.preVote = config.preVote;
    this.disableProposalForwarding = config.disableProposalForwarding;
    this.maxMessageBytes = config.maxMessageBytes;
    this.maxUncommittedBytes = config.maxUncommittedEntriesBytes;
    this.maxProposalBytes = config.maxProposalBytes;
    this.mutations = config.mutations;
    this.readOnly = new ReadOnly(config.readOnlyOption);
    this.log = new RaftLog(config.storage, config.maxCommittedBytesPerReady);
    this.trk = new ProgressTracker(config.maxInflightMessages, config.maxInflightBytes);
    const { hardState, confState } = config.storage.initialState();
    this.trk.restore(confState, this.log.lastIndex() + 1);
    this.isLearner = this.trk.get(this.id)?.isLearner ?? false;
    if (!isEmptyHardState(hardState)) this.loadState(hardState);
    if (config.applied > 0) {
      if (config.applied > this.log.committed) throw new RaftConfigError('applied', `${config.applied} is beyond the persisted commit index ${this.log.committed}`);
      if (config.applied > this.log.applied) this.log.appliedTo(config.applied, 0);
    }
    this.becomeFollower(this.term, NO_NODE);
  }

  /** Loads a persisted HardState (at construction; tests use it to set up a term). */
  loadState(hs: HardState): void {
    if (hs.commit < this.log.committed || hs.commit > this.log.lastIndex()) {
      throw new RaftConfigError('storage', `HardState.commit ${hs.commit} is out of range [${this.log.committed}, ${this.log.lastIndex()}]`);
    }
    this.log.committed = hs.commit;
    this.term = hs.term;
    this.vote = hs.vote;
  }

  mutated(mutation: RaftMutation): boolean {
    return this.mutations.size !== 0 && this.mutations.has(mutation);
  }

  softState(): SoftState {
    return { lead: this.lead, role: this.role };
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  /** Steps a message (from a peer or generated locally). Throws only ProposalDroppedError. */
  step(m: Message): void {
    this.stepDepth++;
    try {
      stepRaft(this, m);
    } finally {
      this.stepDepth--;
    }
    if (this.stepDepth === 0 && this.mutated('self-ack-before-persist')) this.stepSelfAcksNow();
  }

  /** Mutation only: counts own votes and appends at once instead of after persisting. */
  private stepSelfAcksNow(): void {
    for (;;) {
      const own = this.msgsAfterAppend.filter((m) => m.to === this.id);
      if (own.length === 0) return;
      this.msgsAfterAppend = this.msgsAfterAppend.filter((m) => m.to !== this.id);
      for (const m of own) this.step(m);
    }
  }

  /**
   * Queues a message from this node. Votes and append acknowledgements wait in msgsAfterAppend
   * until what they promise is durable; everything else in msgs. Fills in `from` and, except for
   * vote traffic (whose term the caller sets) and forwarded Prop/ReadIndex, the current term.
   */
  send(type: MessageType, fields: MessageFields): void {
    const isVoteTraffic = type === MessageType.Vote || type === MessageType.VoteResp || type === MessageType.PreVote || type === MessageType.PreVoteResp;
    const term = fields.term ?? 0;
    if (isVoteTraffic) assert(term !== 0, `term should be set when sending ${type}`);
    const forwarded = type === MessageType.Prop || type === MessageType.ReadIndex;
    // One object literal with every field (a single hidden class for all messages).
    const m: Message = {
      type,
      to: fields.to ?? NO_NODE,
      from: fields.from ?? this.id,
      term: isVoteTraffic ? term : forwarded ? 0 : this.term,
      logTerm: fields.logTerm ?? 0,
      index: fields.index ?? 0,
      entries: fields.entries ?? NO_ENTRIES,
      commit: fields.commit ?? 0,
      snapshot: fields.snapshot,
      reject: fields.reject ?? false,
      rejectHint: fields.rejectHint ?? 0,
      context: fields.context ?? EMPTY_BYTES,
    };
    if (type === MessageType.AppResp || type === MessageType.VoteResp || type === MessageType.PreVoteResp) {
      this.msgsAfterAppend.push(m);
    } else {
      assert(m.to !== this.id, `message should not be self-addressed when sending ${type}`);
      this.msgs.push(m);
    }
  }

  tick(): void {
    if (this.role === Role.Leader) this.tickHeartbeat();
    else this.tickElection();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.pastElectionTimeout()) {
      this.electionElapsed = 0;
      this.step(message(MessageType.Hup, { from: this.id }));
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTimeout) {
      this.electionElapsed = 0;
      if (this.checkQuorum) this.step(message(MessageType.CheckQuorum, { from: this.id }));
      if (this.role === Role.Leader && this.leadTransferee !== NO_NODE) this.abortLeaderTransfer();
    }
    if (this.role !== Role.Leader) return;
    if (this.heartbeatElapsed >= this.heartbeatTimeout) {
      this.heartbeatElapsed = 0;
      this.step(message(MessageType.Beat, { from: this.id }));
    }
  }

  pastElectionTimeout(): boolean {
    return this.electionElapsed >= this.randomizedElectionTimeout;
  }

  resetRandomizedElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTimeout + this.rng.nextInt(this.electionTimeout);
  }

  /** True when this node may campaign: a voter, not restoring a snapshot. */
  promotable(): boolean {
    const pr = this.trk.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.log.hasNextOrInProgressSnapshot();
  }

  private reset(term: Term): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NO_NODE;
    }
    this.lead = NO_NODE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.abortLeaderTransfer();
    this.trk.resetVotes();
    const last = this.log.lastIndex();
    for (const id of this.trk.ids) this.trk.mustGet(id).resetForTerm(id === this.id ? last : 0, last + 1);
    this.pendingConfIndex = 0;
    this.uncommittedBytes = 0;
    this.appendsPending = false;
    this.readOnly = new ReadOnly(this.readOnly.option);
    this.pendingReadIndexMessages = [];
    this.appendAcked = 0;
  }

  becomeFollower(term: Term, lead: NodeId): void {
    this.reset(term);
    this.lead = lead;
    this.role = Role.Follower;
  }

  becomeCandidate(): void {
    assert(this.role !== Role.Leader, 'invalid transition [leader -> candidate]');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = Role.Candidate;
  }

  becomePreCandidate(): void {
    assert(this.role !== Role.Leader, 'invalid transition [leader -> pre-candidate]');
    // A pre-candidate changes neither its term nor its vote.
    this.trk.resetVotes();
    this.lead = NO_NODE;
    this.role = Role.PreCandidate;
  }

  becomeLeader(): void {
    assert(this.role !== Role.Follower, 'invalid transition [follower -> leader]');
    this.reset(this.term);
    this.lead = this.id;
    this.role = Role.Leader;
    const self = this.trk.get(this.id);
    if (self !== undefined) {
      self.becomeReplicate();
      self.recentActive = true;
    }
    // Any entry of the log may be an unapplied membership change: wait until all are applied.
    this.pendingConfIndex = this.log.lastIndex();
    const accepted = this.appendEntry([{ term: 0, index: 0, type: EntryType.Normal, data: new Uint8Array(0) }]);
    assert(accepted, 'empty entry was dropped');
  }

  /** Starts an election (or a pre-election) if this node may. */
  hup(type: CampaignType): void {
    if (this.role === Role.Leader) return;
    if (!this.promotable()) return;
    if (this.hasUnappliedConfChanges()) return;
    this.campaign(type);
  }

  campaign(type: CampaignType): void {
    let term: Term;
    let voteType: MessageType;
    if (type === 'pre-election') {
      this.becomePreCandidate();
      voteType = MessageType.PreVote;
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      voteType = MessageType.Vote;
      term = this.term;
    }
    const lastIndex = this.log.lastIndex();
    const lastTerm = this.log.lastTerm();
    const asked = this.mutated('learner-vote-counted') ? [...this.trk.voterIds(), ...this.trk.config.learners] : this.trk.voterIds();
    for (const id of asked) {
      if (id === this.id) {
        // The own vote counts once it is durable: it is answered after the Ready is persisted.
        this.send(voteResponseType(voteType), { to: id, term });
        continue;
      }
      const context = type === 'transfer' ? CAMPAIGN_TRANSFER_CONTEXT : undefined;
      this.send(voteType, { to: id, term, index: lastIndex, logTerm: lastTerm, context });
    }
  }

  /** Records a vote answer and tallies the election. */
  poll(id: NodeId, granted: boolean): ReturnType<ProgressTracker['tallyVotes']> {
    this.trk.recordVote(id, granted);
    return this.trk.tallyVotes(this.mutated('learner-vote-counted'));
  }

  /** Appends entries at the current term as leader; false if the uncommitted-bytes limit refuses them. */
  appendEntry(entries: readonly Entry[]): boolean {
    let index = this.log.lastIndex();
    const stamped: Entry[] = new Array<Entry>(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      stamped[i] = { term: this.term, index: ++index, type: e.type, data: e.data };
    }
    if (!this.increaseUncommittedBytes(stamped)) return false;
    const last = this.log.append(stamped);
    // The leader acknowledges its own entries once they are durable (it sends itself no MsgApp).
    this.send(MessageType.AppResp, { to: this.id, index: last });
    return true;
  }

  /** Sends the appends that proposals made since the last Ready are waiting for. */
  flushAppends(): void {
    if (!this.appendsPending) return;
    this.appendsPending = false;
    if (this.role === Role.Leader) bcastAppend(this);
  }

  /** Advances the commit index from the quorum's acknowledgements; true if it moved. */
  maybeCommit(): boolean {
    return this.log.maybeCommit(this.trk.committed(), this.term, !this.mutated('commit-prior-term-by-counting'));
  }

  private increaseUncommittedBytes(entries: readonly Entry[]): boolean {
    const size = payloadBytes(entries);
    // An empty tail accepts anything (one oversized entry must still get through); empty entries always pass.
    if (this.uncommittedBytes > 0 && size > 0 && this.uncommittedBytes + size > this.maxUncommittedBytes) return false;
    this.uncommittedBytes += size;
    return true;
  }

  reduceUncommittedBytes(size: number): void {
    this.uncommittedBytes = size > this.uncommittedBytes ? 0 : this.uncommittedBytes - size;
  }

  /** The application applied up to `index`. */
  appliedTo(index: Index, bytes: number): void {
    this.log.appliedTo(Math.max(index, this.log.applied), bytes);
    // A joint configuration entered with auto-leave is left by the leader once it is applied.
    if (this.trk.config.autoLeave && this.role === Role.Leader && this.log.applied >= this.pendingConfIndex) {
      const leave: ConfChangeV2 = { transition: ConfChangeTransition.Auto, changes: [], context: new Uint8Array(0) };
      try {
        this.step(message(MessageType.Prop, { from: this.id, entries: [{ term: 0, index: 0, type: EntryType.ConfChangeV2, data: encodeConfChangeV2(leave) }] }));
      } catch (error) {
        // Dropped (a leader transfer, the uncommitted limit): retried after the next apply.
        if (!(error instanceof ProposalDroppedError)) throw error;
      }
    }
  }

  /**
   * The application applied a membership change entry: installs the resulting configuration
   * (changes take effect when applied, never when appended) and returns it, for the application
   * to keep with its state (and in its snapshots).
   */
  applyConfChange(cc: ConfChangeV2): ConfState {
    let next: ConfState;
    try {
      next = changeConfState(this.trk.confState(), cc);
    } catch (error) {
      // The membership mutations make logs hold changes that no longer fit: skip them, so that
      // what the simulator catches is the unsafety, not this refusal.
      if (this.mutated('conf-change-counted-before-applied') || this.mutated('two-conf-changes-in-flight')) return this.trk.confState();
      throw error;
    }
    return this.switchToConfig(next);
  }

  /** Installs `cs` in the tracker and reacts: a removed leader steps down, new members are probed. */
  switchToConfig(cs: ConfState): ConfState {
    // A new member is probed from the last entry, so that the leader has something to send it.
    this.trk.restore(cs, Math.max(this.log.lastIndex(), 1));
    const self = this.trk.get(this.id);
    this.isLearner = self?.isLearner ?? false;
    if (this.role !== Role.Leader) return this.trk.confState();
    if (self === undefined || self.isLearner) {
      // Removed or demoted: a leader that is no voter cannot count itself, so it steps down and
      // lets the remaining voters elect a leader among themselves.
      this.becomeFollower(this.term, NO_NODE);
      return this.trk.confState();
    }
    if (this.leadTransferee !== NO_NODE && !this.trk.isVoter(this.leadTransferee)) this.abortLeaderTransfer();
    // Fewer voters may mean a higher commit index; otherwise catch up the new members.
    if (this.maybeCommit()) {
      releasePendingReadIndexMessages(this);
      bcastAppend(this);
    } else {
      for (const id of this.trk.ids) if (id !== this.id) sendAppend(this, id, false);
    }
    return this.trk.confState();
  }

  /** True when a membership change proposed now would have to wait for an earlier one. */
  confChangePending(): boolean {
    return this.pendingConfIndex > this.log.applied;
  }

  /** Why the leader would turn the membership change `cc` into an empty entry, or undefined. */
  refuseConfChange(cc: ConfChangeV2): string | undefined {
    if (this.confChangePending() && !this.mutated('two-conf-changes-in-flight')) return `possible unapplied membership change at index ${this.pendingConfIndex} (applied to ${this.log.applied})`;
    const joint = this.trk.isJoint();
    const leave = leavesJoint(cc);
    if (joint && !leave) return 'must leave the joint configuration first';
    if (!joint && leave) return 'not in a joint configuration: refusing an empty membership change';
    return undefined;
  }

  /** The snapshot at `index` was persisted and applied. */
  appliedSnapshot(index: Index): void {
    this.log.stableSnapTo(index);
    this.appliedTo(index, 0);
  }

  abortLeaderTransfer(): void {
    this.leadTransferee = NO_NODE;
  }

  sendTimeoutNow(to: NodeId): void {
    this.send(MessageType.TimeoutNow, { to });
  }

  /** True once this leader has committed an entry of its own term (its no-op). */
  committedEntryInCurrentTerm(): boolean {
    return this.log.zeroTermOnOutOfBounds(this.log.committed) === this.term;
  }

  /** A membership-change entry in (applied, upTo]: committed ones by default. */
  hasUnappliedConfChanges(upTo: Index = this.log.committed): boolean {
    let lo = this.log.applied + 1;
    const hi = upTo + 1;
    while (lo < hi) {
      const page = this.log.slice(lo, hi, this.log.maxApplyingBytes);
      for (const e of page) if (e.type !== EntryType.Normal) return true;
      lo += page.length;
    }
    return false;
  }
}
