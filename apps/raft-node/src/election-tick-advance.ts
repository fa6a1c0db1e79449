// etcd's adjustTicks (server.go): at start a member fast-forwards its election ticks, so that a
// cluster started or restarted whole does not wait out a full election timeout before its first
// election. A member alone in its cluster campaigns on its next ticks; any other waits (at most
// rafthttp's ConnReadTimeout) until more than one peer is connected, then leaves two ticks (plus
// the randomized part of the timeout) for a leader's heartbeat to arrive first.

/** How long a member looks for connected peers before it gives up fast-forwarding (etcd: 5 s). */
export const TICK_ADVANCE_WAIT_MS = 5_000;
/** How often it looks (etcd: every 50 ms). */
export const TICK_ADVANCE_POLL_MS = 50;

export interface TickAdvanceInput {
  /** Members in the cluster's member list, this one and learners included (etcd's clusterN). */
  readonly members: number;
  /** Peers this member's streams to are open now. */
  readonly connectedPeers: number;
  /** At least 2 (RAFT_NODE_ELECTION_TICKS' minimum). */
  readonly electionTicks: number;
  /** RAFT_NODE_INITIAL_ELECTION_TICK_ADVANCE. */
  readonly enabled: boolean;
  /** A leader is already known: there is no first election left to speed up. */
  readonly leaderKnown: boolean;
}

/** Ticks to fast-forward now; 'wait' to look again in TICK_ADVANCE_POLL_MS; 'never' to stop looking. */
export function initialTicksToAdvance(input: TickAdvanceInput): number | 'wait' | 'never' {
  if (input.leaderKnown) return 'never';
  if (input.members === 1) return input.electionTicks - 1;
  if (!input.enabled) return 'never';
  return input.connectedPeers > 1 ? input.electionTicks - 2 : 'wait';
}
