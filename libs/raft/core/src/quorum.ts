import type { Index } from './types';

/** Outcome of an election tally. */
export const VoteResult = {
  /** Not decided yet: more answers could still win or lose it. */
  Pending: 'pending',
  Lost: 'lost',
  Won: 'won',
} as const;
export type VoteResult = (typeof VoteResult)[keyof typeof VoteResult];

/**
 * The largest index acknowledged by a majority of `acked` (one value per voter). An empty voter
 * set commits everything (+Infinity), so that it never holds back a joint configuration's
 * other half. `scratch` is reused to avoid allocating on the hot path.
 */
export function majorityCommittedIndex(acked: readonly Index[], scratch: Index[]): Index {
  const n = acked.length;
  if (n === 0) return Number.POSITIVE_INFINITY;
  if (scratch.length !== n) scratch.length = n;
  for (let i = 0; i < n; i++) {
    // Insertion sort, descending: voter sets are small.
    const value = acked[i]!;
    let j = i - 1;
    while (j >= 0 && scratch[j]! < value) {
      scratch[j + 1] = scratch[j]!;
      j--;
    }
    scratch[j + 1] = value;
  }
  // With n voters a quorum is floor(n/2)+1; the quorum-th largest value is acked by a quorum.
  return scratch[(n >> 1)]!;
}

/** Tally of a majority election: `votes` holds true/false/undefined (no answer) per voter. */
export function majorityVoteResult(votes: readonly (boolean | undefined)[]): VoteResult {
  const n = votes.length;
  if (n === 0) return VoteResult.Won;
  let yes = 0;
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const v = votes[i];
    if (v === undefined) missing++;
    else if (v) yes++;
  }
  const quorum = (n >> 1) + 1;
  if (yes >= quorum) return VoteResult.Won;
  if (yes + missing >= quorum) return VoteResult.Pending;
  return VoteResult.Lost;
}

/** Joint consensus: both halves must win; either losing loses. */
export function jointVoteResult(incoming: VoteResult, outgoing: VoteResult): VoteResult {
  if (incoming === VoteResult.Lost || outgoing === VoteResult.Lost) return VoteResult.Lost;
  if (incoming === VoteResult.Won && outgoing === VoteResult.Won) return VoteResult.Won;
  return VoteResult.Pending;
}
