import { equalBytes } from '@ward/shared/bytes';
import { NO_NODE } from './ids';
import type { Message } from './message';
import { MessageType, voteResponseType } from './message';
import { CAMPAIGN_TRANSFER_CONTEXT } from './constants';
import type { Raft } from './raft';
import { handleAppendEntries, stepFollower } from './step-follower';
import { stepCandidate } from './step-candidate';
import { stepLeader } from './step-leader';
import { Role } from './types';

/** Raft's Step: term rules first (§5.1), then elections, then the role's own handling. */
export function stepRaft(r: Raft, m: Message): void {
  if (m.term !== 0 && !handleTerm(r, m)) return;
  switch (m.type) {
    case MessageType.Hup:
      r.hup(r.preVote ? 'pre-election' : 'election');
      return;
    case MessageType.Vote:
    case MessageType.PreVote:
      handleVoteRequest(r, m);
      return;
    default:
      if (r.role === Role.Leader) stepLeader(r, m);
      else if (r.role === Role.Follower) stepFollower(r, m);
      else stepCandidate(r, m);
  }
}

/**
 * Compares the message's term with ours: adopts a higher term (stepping down) and answers or
 * ignores a lower one. Returns false when the message needs no further handling.
 */
function handleTerm(r: Raft, m: Message): boolean {
  if (m.term > r.term) return handleHigherTerm(r, m);
  if (m.term < r.term) {
    handleLowerTerm(r, m);
    return false;
  }
  return true;
}

function handleHigherTerm(r: Raft, m: Message): boolean {
  if (m.type === MessageType.Vote || m.type === MessageType.PreVote) {
    const forced = equalBytes(m.context, CAMPAIGN_TRANSFER_CONTEXT);
    const inLease = r.checkQuorum && r.lead !== NO_NODE && r.electionElapsed < r.electionTimeout;
    // Heard from a live leader within the minimum election timeout: do not disrupt it.
    if (!forced && inLease) return false;
  }
  if (m.type === MessageType.PreVote) return true; // a pre-vote never changes our term
  if (m.type === MessageType.PreVoteResp && !m.reject) return true; // granted for the term we want
  const fromLeader = m.type === MessageType.App || m.type === MessageType.Heartbeat || m.type === MessageType.Snap;
  r.becomeFollower(m.term, fromLeader ? m.from : NO_NODE);
  return true;
}

function handleLowerTerm(r: Raft, m: Message): void {
  if (m.type === MessageType.App && r.mutated('accept-stale-term-append')) {
    handleAppendEntries(r, m);
    return;
  }
  if ((r.checkQuorum || r.preVote) && (m.type === MessageType.Heartbeat || m.type === MessageType.App)) {
    // A leader of an older term: tell it our term so it steps down. With CheckQuorum or PreVote we
    // may never bump its term through votes, so this answer is what frees a stuck old leader.
    r.send(MessageType.AppResp, { to: m.from });
  } else if (m.type === MessageType.PreVote) {
    // Answering keeps a cluster migrating to PreVote from deadlocking.
    r.send(MessageType.PreVoteResp, { to: m.from, term: r.term, reject: true });
  }
  // Anything else from an older term is ignored.
}

/** §5.2, §5.4.1: one vote per term, only for a candidate whose log is at least as up to date. */
function handleVoteRequest(r: Raft, m: Message): void {
  const canVote =
    r.vote === m.from ||
    (r.vote === NO_NODE && r.lead === NO_NODE) ||
    (m.type === MessageType.PreVote && m.term > r.term) ||
    r.mutated('vote-twice-in-term');
  const upToDate = r.log.isUpToDate(m.index, m.logTerm) || r.mutated('vote-ignores-log');
  if (canVote && upToDate) {
    // Answer with the request's term: a pre-vote's term is in our future.
    r.send(voteResponseType(m.type), { to: m.from, term: m.term });
    if (m.type === MessageType.Vote) {
      r.electionElapsed = 0;
      r.vote = m.from;
    }
  } else {
    r.send(voteResponseType(m.type), { to: m.from, term: r.term, reject: true });
  }
}
