import { ProposalDroppedError } from './errors';
import { NO_NODE } from './ids';
import type { Message } from './message';
import { MessageType, withFields } from './message';
import { MAX_DEFERRED_READS } from './constants';
import type { Raft } from './raft';
import type { Snapshot } from './types';
import { Role } from './types';
import { validateConfState } from './confchange/changer';

/** A follower: forwards proposals and reads to its leader, accepts the leader's log. */
export function stepFollower(r: Raft, m: Message): void {
  switch (m.type) {
    case MessageType.Prop:
      if (r.lead === NO_NODE) throw new ProposalDroppedError('no-leader');
      if (r.disableProposalForwarding) throw new ProposalDroppedError('forwarding-disabled');
      r.msgs.push(withFields(m, { to: r.lead }));
      return;
    case MessageType.App:
      r.electionElapsed = 0;
      r.lead = m.from;
      handleAppendEntries(r, m);
      return;
    case MessageType.Heartbeat:
      r.electionElapsed = 0;
      r.lead = m.from;
      handleHeartbeat(r, m);
      return;
    case MessageType.Snap:
      r.electionElapsed = 0;
      r.lead = m.from;
      handleSnapshot(r, m);
      return;
    case MessageType.TransferLeader:
      if (r.lead !== NO_NODE) r.msgs.push(withFields(m, { to: r.lead }));
      return;
    case MessageType.ForgetLeader:
      // Lease reads rely on followers not electing anyone while the lease holds.
      if (r.readOnly.option !== 'lease-based') r.lead = NO_NODE;
      return;
    case MessageType.TimeoutNow:
      // A transfer target campaigns at once, without a pre-vote: the leader asked for it.
      r.hup('transfer');
      return;
    case MessageType.ReadIndex:
      if (r.lead !== NO_NODE) r.msgs.push(withFields(m, { to: r.lead, from: m.from === NO_NODE ? r.id : m.from }));
      return;
    case MessageType.ReadIndexResp:
      if (r.readStates.length < MAX_DEFERRED_READS) r.readStates.push({ index: m.index, context: m.context });
      return;
    default:
      return;
  }
}

/** §5.3: accept entries that follow a matching (prevIndex, prevTerm), else reject with a hint. */
export function handleAppendEntries(r: Raft, m: Message): void {
  if (m.index < r.log.committed) {
    r.send(MessageType.AppResp, { to: m.from, index: r.log.committed });
    return;
  }
  const checkPrevTerm = !r.mutated('skip-prev-log-term-check');
  const committedBefore = r.log.committed;
  const lastNew = r.log.maybeAppend(m.index, m.logTerm, m.commit, m.entries, checkPrevTerm);
  if (lastNew !== undefined) {
    // The leader's broadcast of a new commit index (an empty MsgApp at an index this member
    // already acknowledged in this term) is not answered: the answer would only repeat that
    // acknowledgement, and at one request in flight it is a quarter of a put's Raft messages.
    // Any other MsgApp is answered, and so is the first after a heartbeat (handleHeartbeat): the
    // leader's repeat after a heartbeat answer is how a leader whose copy of the acknowledgement
    // was lost still learns it.
    if (m.entries.length === 0 && lastNew <= r.appendAcked && r.log.committed > committedBefore) return;
    if (lastNew > r.appendAcked) r.appendAcked = lastNew;
    r.send(MessageType.AppResp, { to: m.from, index: lastNew });
    return;
  }
  // Hint: the largest (index, term) here with term <= the leader's prevTerm, so that the leader
  // skips every index of our divergent tail in one round trip.
  const hint = r.log.findConflictByTerm(Math.min(m.index, r.log.lastIndex()), m.logTerm);
  r.send(MessageType.AppResp, { to: m.from, index: m.index, reject: true, rejectHint: hint.index, logTerm: hint.term });
}

function handleHeartbeat(r: Raft, m: Message): void {
  // The leader answers a heartbeat answer from a follower it believes behind with a MsgApp: that
  // one is always answered (a lost acknowledgement is learnt within a heartbeat, even while the
  // commit index keeps moving and the follower's window is full).
  r.appendAcked = 0;
  r.log.commitTo(m.commit);
  r.send(MessageType.HeartbeatResp, { to: m.from, context: m.context });
}

function handleSnapshot(r: Raft, m: Message): void {
  const snapshot = m.snapshot;
  if (snapshot !== undefined && restore(r, snapshot)) {
    r.send(MessageType.AppResp, { to: m.from, index: r.log.lastIndex() });
  } else {
    r.send(MessageType.AppResp, { to: m.from, index: r.log.committed });
  }
}

/** Installs a snapshot from the leader; false if it is stale or already covered by the log. */
function restore(r: Raft, snapshot: Snapshot): boolean {
  const { index, term, confState } = snapshot.metadata;
  if (index <= r.log.committed) return false;
  // A membership change handed out for applying (in a Ready) and not applied yet would be applied
  // on top of the snapshot's configuration, which already holds it (or replaced it): the leader
  // sends the snapshot again later.
  if (r.hasUnappliedConfChanges(r.log.applying)) return false;
  if (r.role !== Role.Follower) {
    // Defence in depth: only a follower restores.
    r.becomeFollower(r.term + 1, NO_NODE);
    return false;
  }
  const members = [...confState.voters, ...confState.learners, ...confState.votersOutgoing];
  if (!members.includes(r.id)) return false;
  try {
    validateConfState(confState);
  } catch {
    return false; // not a configuration any leader of this library produces
  }
  if (r.log.matchTerm(index, term)) {
    // Our log already has the snapshot's last entry: just fast-forward the commit index.
    r.log.commitTo(index);
    return false;
  }
  r.log.restore(snapshot);
  r.trk.restore(confState, r.log.lastIndex() + 1);
  r.isLearner = r.trk.get(r.id)?.isLearner ?? false;
  return true;
}
