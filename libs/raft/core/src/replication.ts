import { assert } from '@ward/shared/errors';
import { CompactedError, SnapshotTemporarilyUnavailableError } from './errors';
import type { NodeId } from './ids';
import { MessageType } from './message';
import type { Progress } from './progress';
import { ProgressState } from './progress';
import type { Raft } from './raft';
import type { Entry } from './types';
import { entriesSizeBytes, isEmptySnapshot } from './types';

const NO_ENTRIES: Entry[] = [];

/**
 * Sends `to` the entries it lacks (bounded by maxMessageBytes and its inflight window) with the
 * commit index; a snapshot if those entries are compacted. With `sendIfEmpty` false, a message
 * without entries is not sent. Returns true if a message was sent.
 */
export function sendAppend(r: Raft, to: NodeId, sendIfEmpty = true): boolean {
  const pr = r.trk.mustGet(to);
  if (pr.isPaused()) return false;
  const prevIndex = pr.next - 1;
  const prevTerm = r.log.termOrUndefined(prevIndex);
  if (prevTerm === undefined) return maybeSendSnapshot(r, to, pr);
  let entries = NO_ENTRIES;
  if (pr.state !== ProgressState.Replicate || !pr.inflights.full()) {
    try {
      entries = r.log.entries(pr.next, r.maxMessageBytes);
    } catch (error) {
      if (error instanceof CompactedError) return maybeSendSnapshot(r, to, pr);
      throw error;
    }
  }
  if (entries.length === 0 && !sendIfEmpty) return false;
  const commit = r.log.committed;
  r.send(MessageType.App, { to, index: prevIndex, logTerm: prevTerm, entries, commit });
  pr.sentEntries(entries.length, entries.length === 0 ? 0 : entriesSizeBytes(entries));
  pr.sentCommitTo(commit);
  return true;
}

/** Sends the latest snapshot to a recently active follower; true if sent. */
function maybeSendSnapshot(r: Raft, to: NodeId, pr: Progress): boolean {
  if (!pr.recentActive) return false;
  let snapshot;
  try {
    snapshot = r.log.snapshot();
  } catch (error) {
    if (error instanceof SnapshotTemporarilyUnavailableError) return false;
    throw error;
  }
  assert(!isEmptySnapshot(snapshot), 'need non-empty snapshot');
  pr.becomeSnapshot(snapshot.metadata.index);
  r.send(MessageType.Snap, { to, snapshot });
  return true;
}

/** Sends an empty heartbeat carrying the commit index the follower can safely use. */
export function sendHeartbeat(r: Raft, to: NodeId, context: Uint8Array): void {
  const pr = r.trk.mustGet(to);
  // Never forward a follower's commit past what it is known to hold.
  const commit = Math.min(pr.match, r.log.committed);
  r.send(MessageType.Heartbeat, { to, commit, context });
  pr.sentCommitTo(commit);
}

/** sendAppend to every other tracked node, in id order. */
export function bcastAppend(r: Raft): void {
  const ids = r.trk.ids;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id !== r.id) sendAppend(r, id);
  }
}

/** Heartbeats to every other tracked node, in id order. */
export function bcastHeartbeat(r: Raft, context: Uint8Array = r.readOnly.heartbeatContext()): void {
  const ids = r.trk.ids;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id !== r.id) sendHeartbeat(r, id, context);
  }
}
