/**
 * Deliberate bugs that the fault simulator must detect (its self-test). They exist only so that
 * the harness can prove it fails when the algorithm is wrong; they are switched on solely through
 * `RaftConfig.testOnlyMutations`, which production code never sets.
 */
export const RAFT_MUTATIONS = [
  /** A voter grants a second vote in a term it already voted in (breaks election safety). */
  'vote-twice-in-term',
  /** A voter ignores the candidate's log when voting (breaks leader completeness, §5.4.1). */
  'vote-ignores-log',
  /** The leader commits an earlier term's entry by counting replicas (Figure 8, §5.4.2). */
  'commit-prior-term-by-counting',
  /** Self-acknowledgements (own vote, own append) count before they are persisted. */
  'self-ack-before-persist',
  /** A term/vote change is reported as not needing an fsync (Ready.mustSync lies). */
  'skip-sync-on-vote',
  /** A follower acts on an append from a leader of an older term. */
  'accept-stale-term-append',
  /** A follower appends without checking the previous entry's term (log matching, §5.3). */
  'skip-prev-log-term-check',
  /** The leader answers ReadIndex at once, without confirming leadership by a heartbeat round. */
  'read-index-without-heartbeat',
  /**
   * A leader counts with a membership change's final configuration as soon as it appends it,
   * before the change is committed and applied (and without passing through the joint one).
   */
  'conf-change-counted-before-applied',
  /** The leader appends a membership change while an earlier one may still be unapplied. */
  'two-conf-changes-in-flight',
  /** Candidates ask learners for votes and count a learner's grant as a voter's. */
  'learner-vote-counted',
] as const;

export type RaftMutation = (typeof RAFT_MUTATIONS)[number];

export function isRaftMutation(value: unknown): value is RaftMutation {
  return typeof value === 'string' && (RAFT_MUTATIONS as readonly string[]).includes(value);
}
