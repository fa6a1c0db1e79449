import { EMPTY_BYTES } from '@ward/shared/bytes';
import { assert } from '@ward/shared/errors';
import { decodeConfChangeEntry } from './codec/codec';
import type { ConfChangeV2 } from './confchange/conf-change';
import { changeConfState } from './confchange/changer';
import { ConfChangeError, ProposalDroppedError } from './errors';
import { NO_NODE } from './ids';
import type { Message } from './message';
import { MessageType } from './message';
import type { Progress } from './progress';
import { ProgressState } from './progress';
import type { Raft } from './raft';
import { confirmReads, readIndex } from './read-index';
import { handleAppendRejection, handleAppendSuccess, transferLeader } from './leader-responses';
import { bcastHeartbeat, sendAppend } from './replication';
import type { Entry } from './types';
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
  for (const e of m.entries) if (e.data.length > r.maxProposalBytes) throw new ProposalDroppedError('entry-too-large');
  let entries = m.entries;
  let confIndex = 0;
  const pendingBefore = r.pendingConfIndex;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.type === EntryType.Normal) continue;
    let replacement: Entry;
    try {
      replacement = checkConfChange(r, e);
    } catch (error) {
      r.pendingConfIndex = pendingBefore;
      throw error;
    }
    if (replacement !== e) {
      if (entries === m.entries) entries = [...m.entries];
      (entries as Entry[])[i] = replacement;
    } else {
      // One membership change at a time: the next (in this batch too) waits until it is applied.
      confIndex = r.log.lastIndex() + i + 1;
      r.pendingConfIndex = confIndex;
    }
  }
  if (!r.appendEntry(entries)) {
    r.pendingConfIndex = pendingBefore;
    throw new ProposalDroppedError('uncommitted-size-limit');
  }
  if (confIndex > 0 && r.mutated('conf-change-counted-before-applied')) countBeforeApplied(r, entries[confIndex - r.log.lastIndex() + entries.length - 1]!);
  // Batched: the MsgApps leave with the next Ready (RawNode flushes them).
  r.appendsPending = true;
}

/**
 * A proposed membership change: the entry itself if the leader may append it, an empty normal
 * entry in its place while an earlier change is unapplied or the joint state does not fit (as
 * etcd does: the proposer learns from the log that nothing changed). Throws for a change that
 * can never apply to the current configuration.
 */
function checkConfChange(r: Raft, e: Entry): Entry {
  let cc: ConfChangeV2;
  try {
    cc = decodeConfChangeEntry(e);
  } catch {
    throw new ProposalDroppedError('invalid-conf-change');
  }
  if (r.refuseConfChange(cc) !== undefined) return { term: 0, index: 0, type: EntryType.Normal, data: EMPTY_BYTES };
  // Nothing unapplied precedes it: it will apply to exactly the configuration installed now.
  try {
    changeConfState(r.trk.confState(), cc);
  } catch (error) {
    if (error instanceof ConfChangeError) throw new ProposalDroppedError('invalid-conf-change');
    throw error;
  }
  return e;
}

/** Mutation only: switch at once to where the change ends up (leaving any joint configuration). */
function countBeforeApplied(r: Raft, e: Entry): void {
  const cc = decodeConfChangeEntry(e);
  let cs = changeConfState(r.trk.confState(), cc);
  if (cs.votersOutgoing.length > 0) cs = changeConfState(cs, { transition: 0, changes: [], context: EMPTY_BYTES });
  r.switchToConfig(cs);
}

function handleHeartbeatResponse(r: Raft, pr: Progress, m: Message): void {
  pr.recentActive = true;
  pr.msgAppFlowPaused = false;
  // Also un-sticks a follower whose window filled with messages that were all lost.
  if (pr.match < r.log.lastIndex() || pr.state === ProgressState.Probe) sendAppend(r, m.from);
  if (r.readOnly.option === 'safe' && m.context.length > 0) confirmReads(r, m);
}
