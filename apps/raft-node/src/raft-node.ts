// createRaftNode: one member of a ward cluster, assembled from the Raft core, the WAL and
// snapshots, the peer transport, the state machine, and the internal API (wardnode.Node), plus
// /healthz /readyz /metrics.
import { mkdir } from 'node:fs/promises';
import { randomInt } from 'node:crypto';
import { DEFAULT_MAX_SIMPLE_TOKENS, encodeApplyRequest } from '@ward/etcd/apply';
import { GRPC_OVERHEAD_BYTES } from '@ward/etcd/api-mapping';
import { wardNodeServiceDefinition } from '@ward/etcd/proto';
import { createGrpcServer, type GrpcServer } from '@ward/platform/grpc-server';
import { createHttpServer } from '@ward/platform/http-server';
import { createLogger, type Logger } from '@ward/platform/logging';
import { createMetrics, type Metrics } from '@ward/platform/metrics';
import { NO_NODE, RawNode, votersConfState, type NodeId } from '@ward/raft/core';
import { RaftPersistence, memberWalMetadata, walMetricsHooks, type BootReport } from '@ward/raft/storage';
import { RaftMessenger, startPeerServer, transportMetricsHooks } from '@ward/raft/transport';
import { SeededRng, systemClock, type Clock } from '@ward/shared/clock';
import { AppliedWaiters } from './applied-waiters';
import type { RaftNodeConfig } from './config';
import { formatMemberId } from './members';
import { createNodeMetrics } from './node-metrics';
import { ProposalWaiters } from './proposals';
import { RaftDriver } from './raft-driver';
import { ReadIndexBatcher } from './read-index';
import { RequestIdGenerator } from './request-ids';
import { ENTRY_OVERHEAD_BYTES } from './service/decode-entry';
import type { NodeCore } from './service/node-core';
import { nodeServiceHandlers } from './service/node-service';
import { StateMachine, type AppliedRequest } from './state-machine';
import { TokenTtlKeeper } from './token-ttl';
import { WatchHub } from './watch/watch-hub';

const MIB = 1024 * 1024;

/** A running member. */
export interface RaftNode {
  readonly memberId: bigint;
  readonly clusterId: bigint;
  /** Bound ports (useful when the config asked for port 0). */
  readonly apiPort: number;
  readonly peerPort: number;
  readonly httpPort: number;
  /** What boot found on disk (snapshot used, torn tail repaired, ...). */
  readonly bootReport: BootReport;
  /** Leader known and everything known committed applied. */
  isReady(): boolean;
  /** Stops serving and closes the log; idempotent. */
  stop(): Promise<void>;
  /** Resolves when the member stopped by itself (a fatal storage error), with the error. */
  readonly fatal: Promise<unknown>;
}

export interface RaftNodeDeps {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly clock?: Clock;
}

/** Boots the member from its data dir and starts serving. Throws (nothing started) when it cannot. */
export async function createRaftNode(config: RaftNodeConfig, deps: RaftNodeDeps = {}): Promise<RaftNode> {
  const memberHex = formatMemberId(config.memberId);
  const logger = deps.logger ?? createLogger({ name: 'raft-node', level: config.logLevel, base: { member: memberHex } });
  const metrics = deps.metrics ?? createMetrics({ prefix: 'ward_raft_node_', defaultLabels: { member: memberHex }, collectProcessMetrics: true });
  const clock = deps.clock ?? systemClock;
  await mkdir(config.dataDir, { recursive: true });
  const booted = await RaftPersistence.open({
    dir: config.dataDir,
    metadata: memberWalMetadata(config.clusterId, config.memberId),
    bootstrapConfState: votersConfState(config.members.map((m) => m.id)),
    catchUpEntries: config.snapshotCatchUpEntriesCount,
    wal: { hooks: walMetricsHooks(metrics), maxBatchBytes: 64 * MIB, maxQueuedBytes: 256 * MIB, maxRecordBytes: Math.max(8 * MIB, config.maxRequestBytes + ENTRY_OVERHEAD_BYTES) },
  });
  logger.info({ report: summarizeBoot(booted.report), snapshotIndex: booted.snapshot?.metadata.index ?? 0 }, 'log opened');
  try {
    return await startMember(config, { logger, metrics, clock, booted });
  } catch (error) {
    await booted.persistence.close().catch(() => undefined);
    throw error;
  }
}

function summarizeBoot(report: BootReport): unknown {
  return JSON.parse(JSON.stringify(report, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? `${value.length} bytes` : value)));
}

interface StartInputs {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
  readonly booted: Awaited<ReturnType<typeof RaftPersistence.open>>;
}

async function startMember(config: RaftNodeConfig, inputs: StartInputs): Promise<RaftNode> {
  const { logger, metrics, clock, booted } = inputs;
  const nodeMetrics = createNodeMetrics(metrics);
  const raftLogger = logger.child({ component: 'raft' });
  const maxEntryBytes = config.maxRequestBytes + ENTRY_OVERHEAD_BYTES;
  const stateMachine = StateMachine.boot(
    {
      applier: { kv: { maxTxnOps: config.maxTxnOpsCount, eventHistoryMaxEvents: config.eventHistoryEventsCount } },
      maxEntryBytes,
      onUndecodable: (index, error) => {
        nodeMetrics.undecodableEntry();
        raftLogger.error({ index, err: error }, 'committed entry does not decode; skipped');
      },
    },
    booted.snapshot,
  );
  const node = new RawNode({
    id: config.memberId,
    storage: booted.storage,
    rng: new SeededRng(randomInt(0, 2 ** 31)),
    applied: stateMachine.appliedIndex,
    electionTimeoutTicks: config.electionTicks,
    heartbeatIntervalTicks: config.heartbeatTicks,
    checkQuorum: true,
    preVote: true,
    maxMessageBytes: MIB,
    maxInflightMessages: 256,
    maxInflightBytes: 16 * MIB,
    maxUncommittedEntriesBytes: 64 * MIB,
  });

  let driver: RaftDriver | undefined = undefined;
  const messenger = new RaftMessenger({
    localId: config.memberId,
    clusterId: config.clusterId,
    peers: config.members.filter((m) => m.id !== config.memberId).map((m) => [m.id, m.peerAddress] as const),
    onMessage: (message) => driver?.step(message),
    onSnapshotStatus: (to, ok) => driver?.reportSnapshot(to, ok),
    onUnreachable: (to) => driver?.reportUnreachable(to),
    onInvalidMessage: (from, reason) => raftLogger.warn({ from: formatMemberId(from), reason }, 'invalid peer message dropped'),
    limits: { maxMessageBytes: Math.max(16 * MIB, 2 * maxEntryBytes) },
    hooks: transportMetricsHooks(metrics),
  });
  const peer = await startPeerServer(messenger.transport, { host: config.peerListen.host, port: config.peerListen.port, logger: logger.child({ component: 'peer' }) });

  const proposals = new ProposalWaiters(config.maxPendingProposalsCount);
  const applied = new AppliedWaiters(config.maxPendingReadsCount, () => stateMachine.appliedIndex);
  const tokens = new TokenTtlKeeper({ ttlMs: config.simpleTokenTtlSeconds * 1000, maxTokens: DEFAULT_MAX_SIMPLE_TOKENS, maxTokensPerProposal: 1000, reproposeAfterMs: 10_000 });
  const ids = new RequestIdGenerator(config.memberId, clock.nowMs());
  let snapshotBytes = booted.snapshot?.data.length ?? 0;
  const reads = new ReadIndexBatcher({ issue: (context) => driver?.readIndex(context), retryMs: 500, maxWaiting: config.maxPendingReadsCount });
  const core = {} as { -readonly [K in keyof NodeCore]: NodeCore[K] };
  const watches = new WatchHub({
    applier: () => stateMachine.applier,
    context: () => ({ clusterId: config.clusterId, memberId: config.memberId, raftTerm: driver?.currentTerm ?? 0 }),
    limits: {
      maxWatchers: config.maxWatchersPerStreamCount,
      batchEvents: config.watchBatchEventsCount,
      fragmentBytes: config.maxRequestBytes + GRPC_OVERHEAD_BYTES,
      maxUnreadResponses: 1024,
    },
    maxStreams: config.maxWatchStreamsCount,
    progressIntervalMs: config.watchProgressIntervalMs,
    logger: logger.child({ component: 'watch' }),
  });

  let resolveFatal: (error: unknown) => void = () => undefined;
  const fatal = new Promise<unknown>((resolve) => (resolveFatal = resolve));
  driver = new RaftDriver({
    node,
    persistence: booted.persistence,
    send: (messages) => messenger.send(messages),
    stateMachine,
    confState: votersConfState(config.members.map((m) => m.id)),
    tickMs: config.tickMs,
    snapshotEntries: config.snapshotEntriesCount,
    bootSnapshotIndex: booted.snapshot?.metadata.index ?? 0,
    logger: raftLogger,
    hooks: {
      onLeaderChange: (lead, term) => onLeaderChange(lead, term),
      onApplied: (batch, index) => onApplied(batch, index),
      onRestored: (snapshot) => {
        raftLogger.info({ index: snapshot.metadata.index, term: snapshot.metadata.term, bytes: snapshot.data.length }, 'snapshot installed from the leader');
        applied.applied(stateMachine.appliedIndex);
        watches.notify();
      },
      onReadStates: (states) => reads.onReadStates(states),
      onSnapshot: (index, bytes, ms) => {
        snapshotBytes = bytes;
        nodeMetrics.snapshot(bytes, ms / 1000);
        raftLogger.info({ index, bytes, durationMs: Math.round(ms) }, 'snapshot written');
      },
      onFatal: (error) => {
        raftLogger.fatal({ err: error }, 'storage failed; the member stops');
        resolveFatal(error);
      },
    },
  });

  const onLeaderChange = (lead: NodeId, term: number): void => {
    const isLeader = lead === config.memberId;
    raftLogger.info({ leader: lead === NO_NODE ? null : formatMemberId(lead), term, isLeader }, 'leader changed');
    nodeMetrics.leaderChange(isLeader, lead !== NO_NODE, term);
    if (isLeader) tokens.renewAll(clock.monotonicMs());
    reads.leaderChanged();
  };
  const onApplied = (batch: readonly AppliedRequest[], index: number): void => {
    const now = clock.monotonicMs();
    for (const { request, result } of batch) {
      proposals.applied(request.header.id, result);
      if (result.ok && result.result.type === 'authenticate') tokens.touch(result.result.response.token, now);
    }
    applied.applied(index);
    watches.notify();
    const { commit } = node.basicStatus();
    nodeMetrics.progress(index, commit);
  };

  const housekeeping = setInterval(() => {
    expireIdleTokens();
    nodeMetrics.watch(watches.streamCount, watches.watcherCount);
    nodeMetrics.progress(stateMachine.appliedIndex, node.basicStatus().commit);
  }, 1000);
  const expireIdleTokens = (): void => {
    const applier = stateMachine.applier;
    if (!driver!.isLeader || !applier.authView.enabled) return;
    const due = tokens.expired(clock.monotonicMs(), (token) => applier.resolveSimpleToken(token) !== undefined);
    if (due.length === 0) return;
    const header = { id: ids.next(), username: 'root', authRevision: applier.authView.revision };
    try {
      driver!.propose(encodeApplyRequest({ header, operation: { type: 'simpleTokenExpire', request: { tokens: due } } }, { maxEntryBytes }));
      raftLogger.info({ tokens: due.length }, 'proposed expiry of idle simple tokens');
    } catch (error) {
      raftLogger.debug({ err: error }, 'token expiry not proposed');
    }
  };

  Object.assign(core, {
    config,
    driver,
    stateMachine,
    proposals,
    reads,
    applied,
    watches,
    tokens,
    ids,
    metrics: nodeMetrics,
    clock,
    raftIndexes: () => {
      const status = node.basicStatus();
      return { commit: status.commit, last: status.lastIndex };
    },
  } satisfies NodeCore);

  const isReady = (): boolean => {
    const status = node.basicStatus();
    return status.lead !== NO_NODE && stateMachine.appliedIndex >= status.commit;
  };
  const api = await startApi(config, core, logger, metrics, () => snapshotBytes);
  const http = createHttpServer({ logger: logger.child({ component: 'http' }), metrics, bodyLimitBytes: 64 * 1024, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, readiness: isReady });
  await http.listen({ host: config.httpListen.host, port: config.httpListen.port });
  const httpPort = (http.server.address() as { port: number }).port;
  driver.start();
  logger.info({ api: `${config.apiListen.host}:${api.port}`, peer: `${config.peerListen.host}:${peer.port}`, http: `${config.httpListen.host}:${httpPort}`, cluster: formatMemberId(config.clusterId) }, 'member started');

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      clearInterval(housekeeping);
      watches.stop();
      await api.server.stop(1000);
      await http.close();
      await driver!.stop();
      proposals.close();
      reads.close();
      applied.close();
      await messenger.close();
      await peer.server.stop(1000);
      await booted.persistence.close();
      logger.info('member stopped');
    })();
    return stopping;
  };
  return { memberId: config.memberId, clusterId: config.clusterId, apiPort: api.port, peerPort: peer.port, httpPort, bootReport: booted.report, isReady, stop, fatal };
}

async function startApi(config: RaftNodeConfig, core: NodeCore, logger: Logger, metrics: Metrics, snapshotBytes: () => number): Promise<{ server: GrpcServer; port: number }> {
  const server = createGrpcServer({
    host: config.apiListen.host,
    port: config.apiListen.port,
    maxReceiveMessageBytes: config.maxRequestBytes + GRPC_OVERHEAD_BYTES,
    maxSendMessageBytes: 256 * MIB,
    keepaliveTimeMs: 10_000,
    keepaliveTimeoutMs: 5_000,
    maxConcurrentStreams: config.maxGrpcStreamsCount,
    logger: logger.child({ component: 'api' }),
    metrics,
  });
  server.addService(wardNodeServiceDefinition(), nodeServiceHandlers(core, snapshotBytes));
  const port = await server.start();
  return { server, port };
}
