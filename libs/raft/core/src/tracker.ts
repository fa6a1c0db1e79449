import { assert } from '@ward/shared/errors';
import type { NodeId } from './ids';
import { compareNodeIds } from './ids';
import { Progress } from './progress';
import type { VoteResult } from './quorum';
import { jointVoteResult, majorityCommittedIndex, majorityVoteResult } from './quorum';
import type { ConfState, Index } from './types';

/**
 * Membership as the leader counts it: `voters` is joint-shaped (incoming, outgoing); outside a
 * joint configuration the outgoing half is empty. Learners receive the log but never vote or
 * count towards commit.
 */
export interface TrackerConfig {
  readonly voters: readonly [readonly NodeId[], readonly NodeId[]];
  readonly learners: readonly NodeId[];
  readonly learnersNext: readonly NodeId[];
  readonly autoLeave: boolean;
}

/** Tallies for votes and acknowledgements, and per-member replication progress. */
export class ProgressTracker {
  config: TrackerConfig;
  readonly progress = new Map<NodeId, Progress>();
  private readonly votes = new Map<NodeId, boolean>();
  /** Every tracked id, ascending: the deterministic order of broadcasts. */
  ids: NodeId[] = [];
  /** Progress of ids[i]. */
  private byPosition: Progress[] = [];
  private incoming: Progress[] = [];
  private outgoing: Progress[] = [];
  private readonly scratch: Index[] = [];
  private readonly acked: Index[] = [];

  constructor(
    readonly maxInflightMessages: number,
    readonly maxInflightBytes: number,
  ) {
    this.config = { voters: [[], []], learners: [], learnersNext: [], autoLeave: false };
  }

  /** Installs the membership of `cs`, giving every new member a fresh Progress at `next`. */
  restore(cs: ConfState, next: Index): void {
    this.config = {
      voters: [sortedUnique(cs.voters), sortedUnique(cs.votersOutgoing)],
      learners: sortedUnique(cs.learners),
      learnersNext: sortedUnique(cs.learnersNext),
      autoLeave: cs.autoLeave,
    };
    const all = sortedUnique([...cs.voters, ...cs.votersOutgoing, ...cs.learners, ...cs.learnersNext]);
    // A voter being demoted (learnersNext) stays a voter of the outgoing half until the joint
    // configuration is left: it may still campaign and be a transfer target.
    const learners = new Set(cs.learners);
    for (const id of [...this.progress.keys()]) if (!all.includes(id)) this.progress.delete(id);
    for (const id of all) {
      const existing = this.progress.get(id);
      if (existing === undefined) {
        const pr = new Progress(next, this.maxInflightMessages, this.maxInflightBytes, learners.has(id));
        // A member just added counts as active, so that a leader sends it a snapshot at once.
        pr.recentActive = true;
        this.progress.set(id, pr);
      } else {
        existing.isLearner = learners.has(id);
      }
    }
    this.ids = all;
    this.byPosition = all.map((id) => this.progress.get(id)!);
    this.incoming = this.config.voters[0].map((id) => this.progress.get(id)!);
    this.outgoing = this.config.voters[1].map((id) => this.progress.get(id)!);
  }

  confState(): ConfState {
    return {
      voters: [...this.config.voters[0]],
      votersOutgoing: [...this.config.voters[1]],
      learners: [...this.config.learners],
      learnersNext: [...this.config.learnersNext],
      autoLeave: this.config.autoLeave,
    };
  }

  /** True when the only voter is a single node (no joint configuration). */
  isSingleton(): boolean {
    return this.incoming.length === 1 && this.outgoing.length === 0;
  }

  isVoter(id: NodeId): boolean {
    return this.config.voters[0].includes(id) || this.config.voters[1].includes(id);
  }

  /** The highest index acknowledged (match) by a quorum of the voters. */
  committed(): Index {
    const a = this.committedOf(this.incoming);
    const b = this.committedOf(this.outgoing);
    return a < b ? a : b;
  }

  private committedOf(voters: readonly Progress[]): Index {
    const acked = this.acked;
    if (acked.length !== voters.length) acked.length = voters.length;
    for (let i = 0; i < voters.length; i++) acked[i] = voters[i]!.match;
    return majorityCommittedIndex(acked, this.scratch);
  }

  /** The highest value of `valueOf(id)` acknowledged by a quorum (ReadIndex confirmations). */
  committedBy(valueOf: (id: NodeId) => Index): Index {
    const half = (ids: readonly NodeId[]): Index => majorityCommittedIndex(ids.map(valueOf), this.scratch);
    return Math.min(half(this.config.voters[0]), half(this.config.voters[1]));
  }

  /** True when a quorum of voters was recently active (the leader counts itself). */
  quorumActive(self: NodeId): boolean {
    const active = (ids: readonly NodeId[]): VoteResult =>
      majorityVoteResult(ids.map((id) => (id === self ? true : this.progress.get(id)!.recentActive)));
    return jointVoteResult(active(this.config.voters[0]), active(this.config.voters[1])) === 'won';
  }

  resetVotes(): void {
    this.votes.clear();
  }

  /** Records `id`'s first answer in this election (later answers from it are ignored). */
  recordVote(id: NodeId, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  /**
   * The election's outcome from the votes of voters only (learners' answers are ignored).
   * `learnerVotesCount` is the 'learner-vote-counted' mutation: a learner's grant stands in for a
   * missing voter's in the incoming half.
   */
  tallyVotes(learnerVotesCount = false): { granted: number; rejected: number; result: VoteResult } {
    let granted = 0;
    let rejected = 0;
    for (const [id, v] of this.votes) {
      if (!this.isVoter(id)) continue;
      if (v) granted++;
      else rejected++;
    }
    const half = (ids: readonly NodeId[]): (boolean | undefined)[] => ids.map((id) => this.votes.get(id));
    const incoming = half(this.config.voters[0]);
    if (learnerVotesCount) {
      for (const id of this.config.learners) {
        if (this.votes.get(id) !== true) continue;
        const slot = incoming.findIndex((v) => v !== true);
        if (slot >= 0) incoming[slot] = true;
      }
    }
    return { granted, rejected, result: jointVoteResult(majorityVoteResult(incoming), majorityVoteResult(half(this.config.voters[1]))) };
  }

  /** True in a joint configuration (the outgoing half is not empty). */
  isJoint(): boolean {
    return this.config.voters[1].length > 0;
  }

  /** Every voter id (both halves), ascending, without duplicates. */
  voterIds(): NodeId[] {
    return sortedUnique([...this.config.voters[0], ...this.config.voters[1]]);
  }

  get(id: NodeId): Progress | undefined {
    // Clusters are small: a scan of the id array beats hashing a bigint.
    const ids = this.ids;
    if (ids.length <= 16) {
      for (let i = 0; i < ids.length; i++) if (ids[i] === id) return this.byPosition[i];
      return undefined;
    }
    return this.progress.get(id);
  }

  mustGet(id: NodeId): Progress {
    const pr = this.get(id);
    assert(pr !== undefined, `no progress for ${id}`);
    return pr;
  }
}

function sortedUnique(ids: readonly NodeId[]): NodeId[] {
  return [...new Set(ids)].sort(compareNodeIds);
}
