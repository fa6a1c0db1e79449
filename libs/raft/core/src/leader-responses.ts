import { NO_NODE } from './ids';
import type { Message } from './message';
import type { Progress } from './progress';
import { ProgressState } from './progress';
import type { Raft } from './raft';
import { bcastAppend, sendAppend } from './replication';
import { releasePendingReadIndexMessages } from './read-index';

/**
 * A follower rejected a MsgApp: move its `next` back, using its hint to skip whole terms of
 * divergent log in one round trip (fast log rejection), and probe again.
 */
export function handleAppendRejection(r: Raft, pr: Progress, m: Message): void {
  // The hint (rejectHint, logTerm) is the follower's guess at the largest matching entry.
  let nextProbeIndex = m.rejectHint;
  if (m.logTerm > 0) {
    // No index of ours whose term exceeds the follower's hint term can match: skip them all.
    nextProbeIndex = r.log.findConflictByTerm(m.rejectHint, m.logTerm).index;
  }
  if (pr.maybeDecrTo(m.index, nextProbeIndex)) {
    if (pr.state === ProgressState.Replicate) pr.becomeProbe();
    sendAppend(r, m.from);
  }
}

/** A follower (or the leader itself, after persisting) acknowledged entries up to m.index. */
export function handleAppendSuccess(r: Raft, pr: Progress, m: Message): void {
  // A probing follower answering at its known match can also return to replicating.
  if (!pr.maybeUpdate(m.index) && !(pr.match === m.index && pr.state === ProgressState.Probe)) return;
  if (pr.state === ProgressState.Probe) {
    pr.becomeReplicate();
  } else if (pr.state === ProgressState.Snapshot && pr.match + 1 >= r.log.firstIndex()) {
    // The follower caught up (by the snapshot or otherwise): resume from the log, via probe.
    pr.becomeProbe();
    pr.becomeReplicate();
  } else if (pr.state === ProgressState.Replicate) {
    pr.inflights.freeLE(m.index);
  }
  if (r.maybeCommit()) {
    // An entry of this term committed: deferred reads may now be served.
    releasePendingReadIndexMessages(r);
    bcastAppend(r);
  } else if (r.id !== m.from && pr.canBumpCommit(r.log.committed)) {
    sendAppend(r, m.from);
  }
  if (r.id !== m.from) {
    // Acknowledgements may have opened the window: send as much as it allows.
    while (sendAppend(r, m.from, false));
  }
  if (m.from === r.leadTransferee && pr.match === r.log.lastIndex()) r.sendTimeoutNow(m.from);
}

/** §3.10 of the thesis: catch the target up, then tell it to campaign at once. */
export function transferLeader(r: Raft, pr: Progress, m: Message): void {
  if (pr.isLearner) return;
  const target = m.from;
  if (r.leadTransferee !== NO_NODE) {
    if (r.leadTransferee === target) return; // already in progress
    r.abortLeaderTransfer();
  }
  if (target === r.id) return;
  // The transfer must finish within an election timeout.
  r.electionElapsed = 0;
  r.leadTransferee = target;
  if (pr.match === r.log.lastIndex()) r.sendTimeoutNow(target);
  else sendAppend(r, target);
}
