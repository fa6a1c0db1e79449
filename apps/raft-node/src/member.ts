// One running member: the parts wired together, the driver's hooks, housekeeping and shutdown.
import { getHeapStatistics } from 'node:v8';
import { credentials as grpcCredentials, type ChannelCredentials } from '@grpc/grpc-js';
import type { NodeMemberListResponse__Output, NodeStatusResponse__Output } from '@ward/etcd/proto';
import { CompactionTurns, encodeApplyRequest, type ApplyOperation } from '@ward/etcd/apply';
import { GRPC_OVERHEAD_BYTES } from '@ward/etcd/api-mapping';
import { tlsChannelCredentials, type TlsMaterial } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import { ConfChangeTransition, ConfChangeType, NO_NODE, type NodeId, type RawNode, type Snapshot } from '@ward/raft/core';
import type { BootedRaft } from '@ward/raft/storage';
import type { RaftMessenger } from '@ward/raft/transport';
import type { Clock } from '@ward/shared/clock';
import { AppliedWaiters } from './applied-waiters';
import { ChangeWaiters } from './membership/change-waiters';
import { encodeChangeContext } from './membership/codec';
import { askMember } from './membership/join';
import type { RaftNodeConfig } from './config';
import { TICK_ADVANCE_POLL_MS, TICK_ADVANCE_WAIT_MS, initialTicksToAdvance } from './election-tick-advance';
import { createMessenger, createRawNode, createStateMachine, maxEntryBytesOf, peersOf } from './member-parts';
import { Lessor, minLeaseTtlSeconds } from './lessor';
import { formatMemberId } from './members';
import { createNodeMetrics, type NodeMetrics } from './node-metrics';
import { ProposalWaiters } from './proposals';
import { BackendQuota, effectiveQuotaBytes } from './backend-quota';
import { RaftDriver } from './raft-driver';
import { ReadIndexBatcher } from './read-index';
import { RequestIdGenerator } from './request-ids';
import { responseContext, type NodeCore } from './service/node-core';
import type { AppliedMembershipChange, AppliedRequest, RestoredState, StateMachine } from './state-machine';
import { TokenTtlKeeper } from './token-ttl';
import { WatchHub } from './watch/watch-hub';
import { DEFAULT_FOLLOW_FEEDS, FollowFeeds } from './service/follow';
import { LeaderWatches } from './service/leader-watch';
import { nodeStatus } from './service/status';

/** etcd's leaseRevokeRate: expired leases revoked per second at most. */
const LEASE_REVOKES_PER_SECOND = 1000;
/** How often the leader looks for expired leases (etcd: every 500 ms). */
const LEASE_EXPIRY_CHECK_MS = 500;
/** How often a member without a leader asks the others whether it was removed. */
const REMOVAL_CHECK_INTERVAL_MS = 5000;
/** How long one such question may take. */
const REMOVAL_CHECK_TIMEOUT_MS = 2000;
/** A revoke proposal that did not apply is proposed again after this long. */
const LEASE_REPROPOSE_AFTER_MS = 3000;

export interface MemberInputs {
  readonly config: RaftNodeConfig;
  readonly booted: BootedRaft;
  /** The state of the snapshot the member booted from (restoreBootSnapshot), if any. */
  readonly restored: RestoredState | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  /** How to reach the peers (TLS with this member's certificate and the cluster CA); default plaintext. */
  readonly peerTls?: TlsMaterial;
}

export class Member implements NodeCore {
  readonly config: RaftNodeConfig;
  readonly driver: RaftDriver;
  readonly stateMachine: StateMachine;
  readonly proposals: ProposalWaiters;
  readonly quota: BackendQuota;
  readonly membershipChanges = new ChangeWaiters();
  readonly reads: ReadIndexBatcher;
  readonly applied: AppliedWaiters;
  readonly watches: WatchHub;
  readonly follows: FollowFeeds;
  readonly leaderWatches: LeaderWatches;
  readonly tokens: TokenTtlKeeper;
  readonly lessor: Lessor;
  readonly ids: RequestIdGenerator;
  readonly metrics: NodeMetrics;
  readonly clock: Clock;
  readonly messenger: RaftMessenger;
  /** Size of the last snapshot written or booted from (Status' db_size_bytes). */
  snapshotBytes: number;
  /** Set once this member applied its own removal (or booted removed): its API refuses everything. */
  removed = false;
  private readonly stopController = new AbortController();
  /** Cuts a compaction's dropped records in turns (KVStore.compactionPending), never in one stall. */
  private readonly compaction = new CompactionTurns({ target: () => this.stateMachine.applier, now: () => performance.now(), defer: (turn) => setImmediate(turn) });
  /** Aborted when the member begins to stop (handOver). */
  readonly stopping: AbortSignal = this.stopController.signal;
  /** Settles with the error when storage fails and the member stops by itself. */
  readonly fatal: Promise<unknown>;
  /** Settles once this member knows it was removed from the cluster (the process then exits, as etcd's does). */
  readonly removal: Promise<void>;
  private resolveRemoval: () => void = () => undefined;
  private readonly node: RawNode;
  private readonly logger: Logger;
  private housekeeping: NodeJS.Timeout | undefined;
  /** Looks for connected peers at start, to fast-forward the election ticks (advanceInitialTicks). */
  private tickAdvance: NodeJS.Timeout | undefined;
  private leaseExpiry: NodeJS.Timeout | undefined;
  private resolveFatal: (error: unknown) => void = () => undefined;
  /** Peers the transport knows now. */
  private peers: Set<bigint>;
  /** Since when (monotonic ms) no leader has been known (undefined: one is). */
  private leaderlessSince: number | undefined;
  private nextRemovalCheckMs = 0;
  private readonly peerCredentials: ChannelCredentials | undefined;
  /** Since when (monotonic ms) the transport's stream to each peer has been up. */
  private readonly connectedSince = new Map<bigint, number>();

  constructor(inputs: MemberInputs) {
    const { config, booted, clock } = inputs;
    this.config = config;
    this.clock = clock;
    this.logger = inputs.logger.child({ component: 'raft' });
    this.metrics = createNodeMetrics(inputs.metrics);
    this.stateMachine = createStateMachine(config, inputs.restored, this.metrics, this.logger);
    this.node = createRawNode(config, booted, this.stateMachine.appliedIndex);
    const peerTls = inputs.peerTls === undefined ? undefined : { credentials: tlsChannelCredentials(inputs.peerTls), material: inputs.peerTls };
    this.peerCredentials = peerTls?.credentials;
    this.messenger = createMessenger(config, this.stateMachine.members, () => this.driver, (snapshot) => booted.persistence.snapshotData(snapshot), (message, totalBytes) => booted.persistence.receiveSnapshot(message.snapshot!.metadata, totalBytes), inputs.metrics, this.logger, peerTls);
    this.peers = new Set(peersOf(config, this.stateMachine.members).map(([id]) => id));
    this.proposals = new ProposalWaiters(config.maxPendingProposalsCount);
    this.quota = new BackendQuota(effectiveQuotaBytes(config.quotaBackendBytes, getHeapStatistics().heap_size_limit), () => this.stateMachine.applier.keySpaceView);
    this.applied = new AppliedWaiters(config.maxPendingReadsCount, () => this.stateMachine.appliedIndex);
    this.tokens = new TokenTtlKeeper({ ttlMs: config.simpleTokenTtlSeconds * 1000, maxTokens: config.maxSimpleTokensCount, maxTokensPerProposal: 1000, reproposeAfterMs: 10_000 });
    this.ids = new RequestIdGenerator(config.memberId, clock.nowMs());
    this.lessor = new Lessor(
      {
        minTtlSeconds: minLeaseTtlSeconds(config.electionTicks, config.tickMs),
        promoteExtendMs: config.electionTicks * config.tickMs,
        maxRevokesPerSecond: LEASE_REVOKES_PER_SECOND,
        reproposeAfterMs: LEASE_REPROPOSE_AFTER_MS,
      },
      () => this.stateMachine.applier.leaseView,
    );
    this.reads = new ReadIndexBatcher({ issue: (context) => this.driver.readIndex(context), nextId: () => this.ids.next(), retryMs: 500, maxWaiting: config.maxPendingReadsCount });
    this.watches = this.createWatchHub(inputs.logger);
    this.follows = new FollowFeeds({ ...DEFAULT_FOLLOW_FEEDS, logger: inputs.logger.child({ component: 'follow' }) });
    this.leaderWatches = new LeaderWatches(() => nodeStatus(this));
    this.snapshotBytes = booted.snapshotBytes;
    this.fatal = new Promise((resolve) => (this.resolveFatal = resolve));
    this.removal = new Promise((resolve) => (this.resolveRemoval = resolve));
    this.driver = this.createDriver(booted);
    if (this.stateMachine.members.isRemoved(config.memberId)) this.markRemoved(this.stateMachine.appliedIndex);
    // A compaction replayed from the log at boot is cut from here on.
    this.compaction.kick();
  }

  /** Starts ticking, housekeeping (token expiry, gauges) once a second and the lease expiry check. */
  start(): void {
    this.driver.start();
    this.housekeeping = setInterval(() => this.housekeep(), 1000);
    this.leaseExpiry = setInterval(() => this.revokeExpiredLeases(), LEASE_EXPIRY_CHECK_MS);
    this.advanceInitialTicks();
  }

  /**
   * etcd's initial election tick advance (election-tick-advance.ts): alone in its cluster, the
   * member fast-forwards at once; otherwise it dials its peers and, once more than one stream is
   * open (looked at every TICK_ADVANCE_POLL_MS for TICK_ADVANCE_WAIT_MS), fast-forwards.
   */
  private advanceInitialTicks(): void {
    const startedMs = this.clock.monotonicMs();
    const look = (): boolean => {
      const connectedPeers = this.connectedPeers().size;
      const members = this.stateMachine.members.size;
      const decision = initialTicksToAdvance({
        members,
        connectedPeers,
        electionTicks: this.config.electionTicks,
        enabled: this.config.initialElectionTickAdvance,
        leaderKnown: this.node.basicStatus().lead !== NO_NODE,
      });
      if (decision === 'never') return true;
      if (decision === 'wait') return this.clock.monotonicMs() - startedMs >= TICK_ADVANCE_WAIT_MS;
      this.logger.info({ ticks: decision, electionTicks: this.config.electionTicks, connectedPeers }, members === 1 ? 'alone in the cluster: fast-forwarding election ticks' : 'peers connected: fast-forwarding election ticks');
      this.driver.advanceTicks(decision);
      return true;
    };
    if (look()) return;
    this.messenger.transport.dialAll();
    this.tickAdvance = setInterval(() => {
      if (!look()) return;
      clearInterval(this.tickAdvance);
      this.tickAdvance = undefined;
    }, TICK_ADVANCE_POLL_MS);
  }

  raftIndexes(): { commit: number; last: number } {
    const status = this.node.basicStatus();
    return { commit: status.commit, last: status.lastIndex };
  }

  /** A leader is known and everything known committed is applied. */
  isReady(): boolean {
    const status = this.node.basicStatus();
    return status.lead !== NO_NODE && this.stateMachine.appliedIndex >= status.commit;
  }

  /**
   * The first step of a graceful stop, as etcd's leadership transfer on stop: no new proposal
   * enters the log here, Exchange streams drain, a leader hands leadership to the most caught-up
   * voter, and proposals already in the log get until `timeoutMs` to apply (the new leader commits
   * them), so no caller sees a write cut off by a restart. Bounded by `timeoutMs`.
   */
  async handOver(timeoutMs: number): Promise<void> {
    const deadlineMs = this.clock.monotonicMs() + timeoutMs;
    const pause = (): Promise<void> => new Promise((done) => setTimeout(done, this.config.tickMs));
    this.stopController.abort();
    if (this.driver.isLeader) {
      const transferee = this.bestTransferee();
      if (transferee !== undefined) {
        this.logger.info({ transferee: formatMemberId(transferee) }, 'stopping: handing leadership over');
        while (this.driver.isLeader && this.clock.monotonicMs() < deadlineMs) {
          // A transfer the core abandoned (after an election timeout) is asked for again.
          this.driver.transferLeader(transferee);
          await pause();
        }
      }
    }
    while (this.proposals.size > 0 && this.clock.monotonicMs() < deadlineMs) await pause();
    this.logger.info({ leader: !this.driver.isLeader ? formatMemberId(this.driver.leader) : 'still this member', unanswered: this.proposals.size }, 'stopping: handed over');
    // Gateways watching this member's view of the leader watch the others' from now on.
    this.leaderWatches.close();
  }

  /** The voter (not this member) whose log matches the leader's furthest; undefined when there is none. */
  private bestTransferee(): NodeId | undefined {
    let best: { id: NodeId; match: number } | undefined;
    for (const [id, progress] of this.driver.progress()) {
      if (id === this.config.memberId || progress.isLearner) continue;
      if (best === undefined || progress.match > best.match) best = { id, match: progress.match };
    }
    return best?.id;
  }

  /** Stops the raft side (the servers are stopped by the caller first). */
  async stop(): Promise<void> {
    if (this.housekeeping !== undefined) clearInterval(this.housekeeping);
    if (this.tickAdvance !== undefined) clearInterval(this.tickAdvance);
    if (this.leaseExpiry !== undefined) clearInterval(this.leaseExpiry);
    this.lessor.demote();
    this.compaction.stop();
    this.watches.stop();
    this.follows.close();
    this.leaderWatches.close();
    await this.driver.stop();
    this.proposals.close();
    this.membershipChanges.close();
    this.reads.close();
    this.applied.close();
    await this.messenger.close();
  }

  private createWatchHub(logger: Logger): WatchHub {
    return new WatchHub({
      applier: () => this.stateMachine.applier,
      context: () => responseContext(this),
      limits: {
        maxWatchers: this.config.maxWatchersPerStreamCount,
        batchEvents: this.config.watchBatchEventsCount,
        fragmentBytes: this.config.maxRequestBytes + GRPC_OVERHEAD_BYTES,
        maxUnreadResponses: 1024,
      },
      maxStreams: this.config.maxWatchStreamsCount,
      progressIntervalMs: this.config.watchProgressIntervalMs,
      logger: logger.child({ component: 'watch' }),
    });
  }

  private createDriver(booted: BootedRaft): RaftDriver {
    return new RaftDriver({
      node: this.node,
      persistence: booted.persistence,
      send: (messages) => this.messenger.send(messages),
      stateMachine: this.stateMachine,
      tickMs: this.config.tickMs,
      snapshotEntries: this.config.snapshotEntriesCount,
      snapshotBytes: this.config.snapshotBytes,
      bootSnapshotIndex: booted.snapshot?.metadata.index ?? 0,
      bootSnapshotBytes: booted.snapshotBytes,
      logger: this.logger,
      hooks: {
        onLeaderChange: (lead, term) => this.onLeaderChange(lead, term),
        onApplied: (batch, index) => this.onApplied(batch, index),
        onMembership: (change) => this.onMembership(change),
        onRestored: (snapshot, bytes) => this.onRestored(snapshot, bytes),
        onReadStates: (states) => this.reads.onReadStates(states),
        onSnapshot: (index, bytes, ms) => this.onSnapshot(index, bytes, ms),
        onFatal: (error) => {
          this.logger.fatal({ err: error }, 'storage failed; the member stops');
          this.resolveFatal(error);
        },
      },
    });
  }

  private onLeaderChange(lead: NodeId, term: number): void {
    const isLeader = lead === this.config.memberId;
    this.logger.info({ leader: lead === NO_NODE ? null : formatMemberId(lead), term, isLeader }, 'leader changed');
    this.metrics.leaderChange(isLeader, lead !== NO_NODE, term);
    if (isLeader) this.tokens.renewAll(this.clock.monotonicMs(), this.stateMachine.applier.simpleTokens());
    if (isLeader) this.lessor.promote(this.clock.monotonicMs());
    else this.lessor.demote();
    this.reads.leaderChanged();
    this.leaderWatches.changed();
  }

  private onApplied(batch: readonly AppliedRequest[], index: number): void {
    const now = this.clock.monotonicMs();
    for (const { request, result } of batch) {
      const { operation } = request;
      // etcd answers a physical compaction once its revisions are gone, here once they are cut.
      if (operation.type === 'compact' && operation.request.physical === true && result.ok) this.compaction.whenDone(() => this.proposals.applied(request.header.id, result));
      else this.proposals.applied(request.header.id, result);
      if (result.ok && result.result.type === 'authenticate') this.tokens.touch(result.result.response.token, now);
      if (result.ok && result.result.type === 'leaseGrant') this.lessor.granted(result.result.response.id, result.result.response.ttlSeconds, now);
      if (operation.type === 'leaseRevoke' && !this.stateMachine.applier.leaseView.leaseExists(operation.request.id)) this.lessor.revoked(operation.request.id);
    }
    this.compaction.kick();
    this.applied.applied(index);
    this.follows.applied(this, batch, index);
    this.watches.notify();
    this.metrics.progress(index, this.node.basicStatus().commit);
  }

  /** A membership change applied: the transport learns new peers, forgets removed ones. */
  private onMembership(applied: AppliedMembershipChange): void {
    const { index, refused, change, confState } = applied;
    this.membershipChanges.applied(applied);
    if (refused !== undefined) {
      this.logger.warn({ index, reason: refused }, 'membership change not applied');
      return;
    }
    const ids = (list: readonly { id: bigint }[]): string[] => list.map((m) => formatMemberId(m.id));
    this.logger.info(
      { index, added: ids(change.added), updated: ids(change.updated), removed: change.removed.map(formatMemberId), voters: confState.voters.map(formatMemberId), learners: confState.learners.map(formatMemberId) },
      'membership changed',
    );
    this.syncPeers(index);
  }

  /** Points the transport at the member list now applied: new peers learnt, removed ones forgotten. */
  private syncPeers(index: number): void {
    const members = this.stateMachine.members;
    if (members.isRemoved(this.config.memberId)) this.markRemoved(index);
    const next = new Map(peersOf(this.config, members));
    for (const id of this.peers) if (!next.has(id)) this.messenger.transport.removePeer(id);
    for (const [id, address] of next) this.messenger.transport.setPeer(id, address);
    this.peers = new Set(next.keys());
  }

  /**
   * This member is no longer part of the cluster: it says so once, refuses every API call, and
   * settles `removal` (main.ts then stops the process, as etcd's member exits).
   */
  private markRemoved(index: number): void {
    if (this.removed) return;
    this.removed = true;
    this.logger.error({ index }, 'this member was removed from the cluster: the member has been permanently removed from the cluster; it stops serving and exits (the data dir used by this member must be removed)');
    this.lessor.demote();
    this.reads.leaderChanged();
    this.follows.restart('the member was removed from the cluster');
    this.resolveRemoval();
  }

  private onRestored(snapshot: Snapshot, bytes: number): void {
    this.logger.info({ index: snapshot.metadata.index, term: snapshot.metadata.term, bytes }, 'snapshot installed from the leader');
    this.syncPeers(snapshot.metadata.index);
    this.follows.restart('the member installed a snapshot from the leader');
    this.applied.applied(this.stateMachine.appliedIndex);
    this.lessor.resync(this.clock.monotonicMs());
    this.watches.notify();
  }

  private onSnapshot(index: number, bytes: number, ms: number): void {
    this.snapshotBytes = bytes;
    this.metrics.snapshot(bytes, ms / 1000);
    this.logger.info({ index, bytes, durationMs: Math.round(ms) }, 'snapshot written');
  }

  /** How long the stream to peer `id` has been up, in ms (0: not connected). */
  peerConnectedForMs(id: bigint): number {
    this.trackConnections();
    const since = this.connectedSince.get(id);
    return since === undefined ? 0 : this.clock.monotonicMs() - since;
  }

  /** The peers whose stream from this member is open now. */
  private connectedPeers(): Set<bigint> {
    const up = new Set<bigint>();
    for (const peer of this.messenger.transport.stats().peers) if (peer.connected) up.add(peer.peer);
    return up;
  }

  private trackConnections(): void {
    const now = this.clock.monotonicMs();
    const up = this.connectedPeers();
    for (const id of [...this.connectedSince.keys()]) if (!up.has(id)) this.connectedSince.delete(id);
    for (const id of up) if (!this.connectedSince.has(id)) this.connectedSince.set(id, now);
  }

  /**
   * A member removed while it did not hear the commit of its removal (the leader stops replicating
   * to it once the change applied) never applies it. So a member that has had no leader for two
   * election timeouts asks the members it knows, every REMOVAL_CHECK_INTERVAL_MS, whether they
   * still list it: one of the same cluster that applied more than this member and does not list
   * it (though this member was listed at its own applied index) removed it.
   */
  private async checkRemoved(): Promise<void> {
    const now = this.clock.monotonicMs();
    if (this.removed || this.driver.leader !== NO_NODE) {
      this.leaderlessSince = undefined;
      return;
    }
    this.leaderlessSince ??= now;
    if (now - this.leaderlessSince < 2 * this.config.electionTicks * this.config.tickMs || now < this.nextRemovalCheckMs) return;
    this.nextRemovalCheckMs = now + REMOVAL_CHECK_INTERVAL_MS;
    const applied = this.stateMachine.appliedIndex;
    if (!this.stateMachine.members.has(this.config.memberId)) return;
    const credentials = this.peerCredentials ?? grpcCredentials.createInsecure();
    for (const member of this.stateMachine.members.members) {
      const address = this.config.members.find((m) => m.id === member.id)?.apiAddress ?? member.apiAddress;
      if (member.id === this.config.memberId || address === '') continue;
      try {
        const [status, list] = await Promise.all([
          askMember<NodeStatusResponse__Output>(credentials, 'Status', address, REMOVAL_CHECK_TIMEOUT_MS),
          askMember<NodeMemberListResponse__Output>(credentials, 'MemberList', address, REMOVAL_CHECK_TIMEOUT_MS),
        ]);
        const listed = list.members.some((m) => BigInt(m.id) === this.config.memberId);
        if (BigInt(list.cluster_id) === this.config.clusterId && !listed && Number(status.applied_index) > applied) {
          this.logger.warn({ by: formatMemberId(member.id) }, 'another member no longer lists this one');
          this.markRemoved(applied);
          return;
        }
      } catch {
        // unreachable or removed itself: ask the next one
      }
    }
  }

  private housekeep(): void {
    void this.checkRemoved();
    this.trackConnections();
    this.publishSelf();
    this.expireIdleTokens();
    this.metrics.watch(this.watches.streamCount, this.watches.watcherCount);
    this.metrics.progress(this.stateMachine.appliedIndex, this.node.basicStatus().commit);
    this.metrics.store(this.stateMachine.applier.keySpaceView.retainedBytes, this.quota.limitBytes);
  }

  /**
   * A member added by `member add` is listed without a name or internal API address until it
   * publishes them (etcd's publish): proposed as an UpdateNode change, which followers and
   * learners forward to the leader, every housekeeping round until the list shows them.
   */
  private publishSelf(): void {
    if (this.removed) return;
    const self = this.config.members.find((m) => m.id === this.config.memberId);
    const record = this.stateMachine.members.get(this.config.memberId);
    if (self === undefined || record === undefined || (record.name === self.name && record.apiAddress === self.apiAddress)) return;
    const context = encodeChangeContext({ requestId: 0n, records: [{ ...record, name: self.name, apiAddress: self.apiAddress }] });
    try {
      this.driver.proposeConfChange({ transition: ConfChangeTransition.Auto, changes: [{ type: ConfChangeType.UpdateNode, nodeId: self.id }], context });
    } catch (error) {
      this.logger.debug({ err: error }, 'publishing this member not proposed; retried');
    }
  }

  /** The leader proposes simpleTokenExpire, as root, for tokens idle longer than the TTL. */
  private expireIdleTokens(): void {
    const applier = this.stateMachine.applier;
    if (!this.driver.isLeader || !applier.authView.enabled) return;
    const due = this.tokens.expired(this.clock.monotonicMs(), (token) => applier.resolveSimpleToken(token) !== undefined);
    if (due.length === 0) return;
    try {
      this.proposeAsRoot({ type: 'simpleTokenExpire', request: { tokens: due } });
      this.logger.info({ tokens: due.length }, 'proposed expiry of idle simple tokens');
    } catch (error) {
      this.logger.debug({ err: error }, 'token expiry not proposed');
    }
  }

  /**
   * The leader proposes LeaseRevoke, as the internal root identity (etcd's WithRoot: expiry deletes
   * keys whoever attached them), for each expired lease the lessor hands out (rate-bounded; a
   * revoke that does not apply is proposed again later).
   */
  private revokeExpiredLeases(): void {
    if (!this.driver.isLeader) return;
    const due = this.lessor.expired(this.clock.monotonicMs());
    if (due.length === 0) return;
    let proposed = 0;
    for (const id of due) {
      try {
        this.proposeAsRoot({ type: 'leaseRevoke', request: { id } });
        proposed += 1;
      } catch (error) {
        this.logger.debug({ err: error }, 'lease revoke not proposed; retried later');
        break;
      }
    }
    this.logger.info({ leases: proposed, due: due.length }, 'proposed revocation of expired leases');
  }

  /** Proposes an operation the member itself issues, as the internal root identity. */
  private proposeAsRoot(operation: ApplyOperation): void {
    const header = { id: this.ids.next(), username: 'root', authRevision: this.stateMachine.applier.authView.revision };
    this.driver.propose(encodeApplyRequest({ header, operation }, { maxEntryBytes: maxEntryBytesOf(this.config) }));
  }
}
