import { MAX_DEFERRED_READS } from './constants';
import type { NodeId } from './ids';
import { NO_NODE } from './ids';
import type { Message } from './message';
import { MessageType } from './message';
import type { Raft } from './raft';
import { bcastHeartbeat } from './replication';

/** Answers a ReadIndex request at `index`: locally as a ReadState, or to the follower that asked. */
function respondToReadIndex(r: Raft, from: NodeId, context: Uint8Array, index: number): void {
  if (from === NO_NODE || from === r.id) {
    if (r.readStates.length < MAX_DEFERRED_READS) r.readStates.push({ index, context });
  } else {
    r.send(MessageType.ReadIndexResp, { to: from, index, context });
  }
}

export function readIndex(r: Raft, m: Message): void {
  if (r.trk.isSingleton() || r.mutated('read-index-without-heartbeat')) {
    // The only voter needs no confirmation from anyone.
    respondToReadIndex(r, m.from, m.context, r.log.committed);
    return;
  }
  // A new leader does not know the commit index until an entry of its term commits (§6.4).
  if (!r.committedEntryInCurrentTerm()) {
    if (r.pendingReadIndexMessages.length < MAX_DEFERRED_READS) r.pendingReadIndexMessages.push(m);
    return;
  }
  sendReadIndexResponse(r, m);
}

function sendReadIndexResponse(r: Raft, m: Message): void {
  if (r.readOnly.option === 'lease-based') {
    respondToReadIndex(r, m.from, m.context, r.log.committed);
    return;
  }
  if (!r.readOnly.addRequest({ from: m.from, context: m.context, index: r.log.committed })) return;
  const context = r.readOnly.heartbeatContext();
  r.readOnly.recvAck(r.id, context);
  bcastHeartbeat(r, context);
}

/** Reads deferred until this leader's first commit in its term. */
export function releasePendingReadIndexMessages(r: Raft): void {
  if (r.pendingReadIndexMessages.length === 0 || !r.committedEntryInCurrentTerm()) return;
  const pending = r.pendingReadIndexMessages;
  r.pendingReadIndexMessages = [];
  for (const m of pending) sendReadIndexResponse(r, m);
}

/** A follower echoed a heartbeat context: serve every read a quorum has now confirmed (§6.4). */
export function confirmReads(r: Raft, m: Message): void {
  r.readOnly.recvAck(m.from, m.context);
  const confirmed = r.trk.committedBy((id) => r.readOnly.ackedBy(id));
  for (const read of r.readOnly.advance(confirmed)) respondToReadIndex(r, read.from, read.context, read.index);
}
