import type { ResponseContext } from '@ward/etcd/api-mapping';
import type { Clock } from '@ward/shared/clock';
import type { AppliedWaiters } from '../applied-waiters';
import type { BackendQuota } from '../backend-quota';
import type { RaftNodeConfig } from '../config';
import type { Lessor } from '../lessor';
import type { MemberSpec } from '../members';
import type { ChangeWaiters } from '../membership/change-waiters';
import type { NodeMetrics } from '../node-metrics';
import type { ProposalWaiters } from '../proposals';
import type { RaftDriver } from '../raft-driver';
import type { ReadIndexBatcher } from '../read-index';
import type { RequestIdGenerator } from '../request-ids';
import type { StateMachine } from '../state-machine';
import type { TokenTtlKeeper } from '../token-ttl';
import type { WatchHub } from '../watch/watch-hub';
import type { FollowFeeds } from './follow';
import type { LeaderWatches } from './leader-watch';

/** What the internal API's handlers work with: the member's parts, wired by createRaftNode. */
export interface NodeCore {
  readonly config: RaftNodeConfig;
  readonly driver: RaftDriver;
  readonly stateMachine: StateMachine;
  readonly proposals: ProposalWaiters;
  /** etcd's backend quota, checked before a request is proposed. */
  readonly quota: BackendQuota;
  readonly reads: ReadIndexBatcher;
  readonly applied: AppliedWaiters;
  readonly watches: WatchHub;
  /** The feeds of gateways' read replicas. */
  readonly follows: FollowFeeds;
  /** Gateways' watches of who leads. */
  readonly leaderWatches: LeaderWatches;
  readonly tokens: TokenTtlKeeper;
  readonly lessor: Lessor;
  readonly ids: RequestIdGenerator;
  readonly metrics: NodeMetrics;
  readonly clock: Clock;
  /** Size of the last snapshot written or booted from (Status' db_size_bytes). */
  readonly snapshotBytes: number;
  /** Membership changes this member proposed, waiting for their entry to apply. */
  readonly membershipChanges: ChangeWaiters;
  /** How long this member's stream to peer `id` has been up, in ms (0: not connected). */
  peerConnectedForMs(id: bigint): number;
  /** This member was removed from the cluster: every API call is refused. */
  readonly removed: boolean;
  /**
   * Aborted once this member began to stop: proposals are refused as a follower refuses them
   * (nothing proposed, the gateway tries the leader), and Exchange streams drain and end.
   */
  readonly stopping: AbortSignal;
  /** The raft commit and last log index (for Status and readiness). */
  readonly raftIndexes: () => { commit: number; last: number };
}

/** The header context of responses this member sends now. */
export function responseContext(core: NodeCore): ResponseContext {
  return { clusterId: core.config.clusterId, memberId: core.config.memberId, raftTerm: core.driver.currentTerm };
}

/** The current leader's entry in the member list (undefined while no leader is known). */
export function leaderMember(core: NodeCore): MemberSpec | undefined {
  return memberView(core, core.driver.leader);
}

/**
 * A member as this member sees it: the replicated record, with the addresses this member's own
 * configuration gives for it when it lists it (members may reach each other through proxies).
 */
export function memberView(core: NodeCore, id: bigint): (MemberSpec & { isLearner: boolean }) | undefined {
  const record = core.stateMachine.members.get(id);
  if (record === undefined) return undefined;
  const configured = core.config.members.find((m) => m.id === id);
  return configured === undefined ? record : { ...record, peerAddress: configured.peerAddress, apiAddress: configured.apiAddress };
}

/** A caller's timeout: 0 means the default; never above the maximum. */
export function timeoutOf(core: NodeCore, requestedMs: number): number {
  const ms = requestedMs > 0 ? requestedMs : core.config.defaultRequestTimeoutMs;
  return Math.min(ms, core.config.maxRequestTimeoutMs);
}
