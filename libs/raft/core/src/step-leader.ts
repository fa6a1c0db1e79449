import { assert } from '@ward/shared/errors';
import { ProposalDroppedError } from './errors';
import { NO_NODE } from './ids';
import type { Message } from './message';
import { MessageType } from './message';
import type { Progress } from './progress';
import { ProgressState } from './progress';
import type { Raft } from './raft';
import { confirmReads, readIndex } from './read-index';
import { handleAppendRejection, handleAppendSuccess, transferLeader } from './leader-responses';
import { bcastHeartbeat, sendAppend } from './replication';
import { EntryType } from './types';

/** The leader: heartbeats, proposals, reads, and the answers of its followers. */
export function stepLeader(r: Raft, m: Message): void {
  switch (m.type) {
    case MessageType.Beat:
      bcastHeartbeat(r);
      return;
    case MessageType.CheckQuorum:
      checkQuorum(r);
      return;
    case MessageType.Prop:
      propose(r, m);
      return;
    case MessageType.ReadIndex:
      readIndex(r, m);
      return;
    case MessageType.ForgetLeader:
      return;
    default:
      break;
  }
  const pr = r.trk.get(m.from);
  if (pr === undefined) return;
  switch (m.type) {
    case MessageType.AppResp:
      pr.recentActive = true;
      if (m.reject) handleAppendRejection(r, pr, m);
      else handleAppendSuccess(r, pr, m);
      return;
    case MessageType.HeartbeatResp:
      handleHeartbeatResponse(r, pr, m);
      return;
    case MessageType.SnapStatus:
      if (pr.state !== ProgressState.Snapshot) return;
      // On failure, forget the pending snapshot so probing restarts from match.
      if (m.reject) pr.pendingSnapshot = 0;
      pr.becomeProbe();
      // Wait for the follower's answer (or a heartbeat interval) before the next MsgApp.
      pr.msgAppFlowPaused = true;
      return;
    case MessageType.Unreachable:
      // A MsgApp was probably lost: stop streaming optimistically.
      if (pr.state === ProgressState.Replicate) pr.becomeProbe();
      return;
    case MessageType.TransferLeader:
      transferLeader(r, pr, m);
      return;
    default:
      return;
  }
}

function checkQuorum(r: Raft): void {
  if (!r.trk.quorumActive(r.id)) r.becomeFollower(r.term, NO_NODE);
  for (const id of r.trk.ids) if (id !== r.id) r.trk.mustGet(id).recentActive = false;
}

function propose(r: Raft, m: Message): void {
  assert(m.entries.length > 0, 'stepped empty MsgProp');
  if (r.trk.get(r.id) === undefined) throw new ProposalDroppedError('not-a-member');
  if (r.leadTransferee !== NO_NODE) throw new ProposalDroppedError('leader-transfer-in-progress');
  for (const e of m.entries) {
    // Membership changes are not implemented yet (README): refuse them rather than mis-apply.
    if (e.type !== EntryType.Normal) throw new ProposalDroppedError('unsupported-entry-type');
    if (e.data.length > r.maxProposalBytes) throw new ProposalDroppedError('entry-too-large');
  }
  if (!r.appendEntry(m.entries)) throw new ProposalDroppedError('uncommitted-size-limit');
  // Batched: the MsgApps leave with the next Ready (RawNode flushes them).
  r.appendsPending = true;
}

function handleHeartbeatResponse(r: Raft, pr: Progress, m: Message): void {
  pr.recentActive = true;
  pr.msgAppFlowPaused = false;
  // Also un-sticks a follower whose window filled with messages that were all lost.
  if (pr.match < r.log.lastIndex() || pr.state === ProgressState.Probe) sendAppend(r, m.from);
  if (r.readOnly.option === 'safe' && m.context.length > 0) confirmReads(r, m);
}
