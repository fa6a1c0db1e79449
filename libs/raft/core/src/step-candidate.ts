import { ProposalDroppedError } from './errors';
import { NO_NODE } from './ids';
import type { Message } from './message';
import { MessageType } from './message';
import type { Raft } from './raft';
import { bcastAppend } from './replication';
import { handleAppendEntries, stepFollower } from './step-follower';
import { Role } from './types';

/** Candidate and pre-candidate: count votes; a leader of our term makes us a follower. */
export function stepCandidate(r: Raft, m: Message): void {
  // A candidate may still receive pre-vote answers of this term from its pre-candidacy: ignore them.
  const ownVoteResponse = r.role === Role.PreCandidate ? MessageType.PreVoteResp : MessageType.VoteResp;
  switch (m.type) {
    case MessageType.Prop:
      throw new ProposalDroppedError('no-leader');
    case MessageType.App:
    case MessageType.Heartbeat:
    case MessageType.Snap:
      // Always m.term === r.term here: a leader exists in our term (§5.2).
      r.becomeFollower(m.term, m.from);
      if (m.type === MessageType.App) handleAppendEntries(r, m);
      else stepFollower(r, m);
      return;
    case ownVoteResponse: {
      const { result } = r.poll(m.from, !m.reject);
      if (result === 'won') {
        if (r.role === Role.PreCandidate) {
          r.campaign('election');
        } else {
          r.becomeLeader();
          bcastAppend(r);
        }
      } else if (result === 'lost') {
        // A pre-vote answer carries a future term; stay at ours.
        r.becomeFollower(r.term, NO_NODE);
      }
      return;
    }
    default:
      // TimeoutNow and the rest are ignored by candidates.
      return;
  }
}
