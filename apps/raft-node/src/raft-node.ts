// createRaftNode: one member of a ward cluster, assembled from the Raft core, the WAL and
// snapshots, the peer transport, the state machine, and the internal API (wardnode.Node), plus
// /healthz /readyz /metrics.
import { mkdir, readdir } from 'node:fs/promises';
import { GRPC_OVERHEAD_BYTES } from '@ward/etcd/api-mapping';
import { EXCHANGE_FRAMES, NODE_MAX_MESSAGE_BYTES } from '@ward/etcd/node-calls';
import { wardNodeServiceDefinition } from '@ward/etcd/proto';
import { HTTP2_PREFACE, createGrpcServer, loadTlsMaterial, startSharedListener, tlsChannelCredentials, type TlsMaterial } from '@ward/platform/grpc-server';
import { createHttpServer } from '@ward/platform/http-server';
import { createLogger, type Logger } from '@ward/platform/logging';
import { createMetrics, watchEventLoopStalls, type Metrics } from '@ward/platform/metrics';
import { votersConfState } from '@ward/raft/core';
import { RaftPersistence, memberWalMetadata, walMetricsHooks, type BootReport, type BootedRaft } from '@ward/raft/storage';
import { startPeerServer } from '@ward/raft/transport';
import { systemClock, type Clock } from '@ward/shared/clock';
import type { RaftNodeConfig } from './config';
import { Member } from './member';
import { maxEntryBytesOf, restoreBootSnapshot } from './member-parts';
import { formatMemberId } from './members';
import { joinedConfig } from './membership/join';
import { serveExchangeFrames } from './service/exchange';
import { nodeServiceHandlers } from './service/node-service';
import { withEncodedSnapshotAnswers } from './service/snapshot-answer';

const MIB = 1024 * 1024;
/**
 * Longest leadership hand-over and wait for the proposals in the log when the member stops (well
 * inside docker's stop grace period, 15 s in infra/docker-compose.yml, and launchers' alike).
 */
const HAND_OVER_TIMEOUT_MS = 5000;

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
  /** Settles when the member stopped by itself (a storage failure), with the error. */
  readonly fatal: Promise<unknown>;
  /** Settles when the member learnt it was removed from the cluster (it refuses every call from then on). */
  readonly removed: Promise<void>;
}

export interface RaftNodeDeps {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly clock?: Clock;
}

/** The member's logger: JSON lines named raft-node, each carrying the member id in hex. */
export function createMemberLogger(config: RaftNodeConfig): Logger {
  return createLogger({ name: 'raft-node', level: config.logLevel, base: { member: formatMemberId(config.memberId) } });
}

/** Boots the member from its data dir and starts serving. Throws (nothing left running) when it cannot. */
export async function createRaftNode(configured: RaftNodeConfig, deps: RaftNodeDeps = {}): Promise<RaftNode> {
  const logger = deps.logger ?? createMemberLogger(configured);
  const tls = internalTls(configured);
  const metrics = deps.metrics ?? createMetrics({ prefix: 'ward_raft_node_', defaultLabels: { member: formatMemberId(configured.memberId) }, collectProcessMetrics: true });
  const stalls = watchEventLoopStalls(metrics);
  const isFresh = await isEmptyOrMissing(configured.dataDir);
  await mkdir(configured.dataDir, { recursive: true });
  const config = await joinedConfig(configured, logger, { isFresh, ...(tls === null ? {} : { credentials: tlsChannelCredentials(tls) }) });
  const booted = await RaftPersistence.open({
    dir: config.dataDir,
    metadata: memberWalMetadata(config.clusterId, config.memberId),
    bootstrapConfState: votersConfState(config.initialMemberIds),
    catchUpEntries: config.snapshotCatchUpEntriesCount,
    catchUpBytes: config.snapshotCatchUpBytes,
    // The state machine holds the state; a snapshot's bytes stay in its file (sent from there).
    snapshotDataInMemory: false,
    wal: { hooks: walMetricsHooks(metrics), maxBatchBytes: 64 * MIB, maxQueuedBytes: 256 * MIB, maxRecordBytes: Math.max(8 * MIB, maxEntryBytesOf(config)) },
  });
  logger.info({ report: plain(booted.report), snapshotIndex: booted.snapshot?.metadata.index ?? 0 }, 'log opened');
  try {
    const node = await serve(config, booted, logger, metrics, deps.clock ?? systemClock, tls);
    stalls.reset();
    return { ...node, stop: async () => { await node.stop(); stalls.disable(); } };
  } catch (error) {
    stalls.disable();
    await booted.persistence.close().catch(() => undefined);
    throw error;
  }
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/** A boot report as plain JSON for the log (bigints as text, bytes as their length). */
function plain(report: BootReport): unknown {
  return JSON.parse(JSON.stringify(report, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? `${value.length} bytes` : value)));
}

/**
 * Mutual TLS for the internal API and peer ports, when configured: this member's certificate, and
 * the cluster CA that callers' and peers' certificates must chain to. Read (and checked) once.
 */
function internalTls(config: RaftNodeConfig): TlsMaterial | null {
  if (config.tlsCertFile === '') return null;
  return loadTlsMaterial({
    certFile: config.tlsCertFile,
    keyFile: config.tlsKeyFile,
    caFile: config.tlsCaFile,
    names: { cert: 'RAFT_NODE_TLS_CERT_FILE', key: 'RAFT_NODE_TLS_KEY_FILE', ca: 'RAFT_NODE_TLS_CA_FILE' },
  });
}

async function serve(config: RaftNodeConfig, booted: BootedRaft, logger: Logger, metrics: Metrics, clock: Clock, tls: TlsMaterial | null): Promise<RaftNode> {
  const restored = await restoreBootSnapshot(config, booted);
  const member = new Member({ config, booted, restored, logger, metrics, clock, ...(tls === null ? {} : { peerTls: tls }) });
  // What has started so far is stopped again, newest first, when a later step fails (a port in
  // use, say): a member that cannot serve must not linger half-open, holding its other ports.
  const undo: Array<() => Promise<unknown>> = [() => member.stop()];
  let peer: Awaited<ReturnType<typeof startPeerServer>>;
  let api: Awaited<ReturnType<typeof startApi>>;
  let http: ReturnType<typeof createHttpServer>;
  try {
    peer = await startPeerServer(member.messenger.transport, {
      host: config.peerListen.host,
      port: config.peerListen.port,
      logger: logger.child({ component: 'peer' }),
      ...(tls === null ? {} : { tls }),
    });
    undo.push(() => peer.server.stop(1000));
    api = await startApi(config, member, logger, metrics, tls);
    undo.push(() => api.server.stop(1000));
    http = createHttpServer({ logger: logger.child({ component: 'http' }), metrics, bodyLimitBytes: 64 * 1024, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, readiness: () => member.isReady() });
    await http.listen({ host: config.httpListen.host, port: config.httpListen.port });
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => undefined);
    throw error;
  }
  const httpPort = (http.server.address() as { port: number }).port;
  member.start();
  logger.info({ api: `${config.apiListen.host}:${api.port}`, peer: `${config.peerListen.host}:${peer.port}`, http: `${config.httpListen.host}:${httpPort}`, mutualTls: tls !== null, cluster: formatMemberId(config.clusterId) }, 'member started');
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await member.handOver(HAND_OVER_TIMEOUT_MS);
      await api.server.stop(1000);
      await http.close();
      await member.stop();
      await peer.server.stop(1000);
      await booted.persistence.close();
      logger.info('member stopped');
    })();
    return stopping;
  };
  return {
    memberId: config.memberId,
    clusterId: config.clusterId,
    apiPort: api.port,
    peerPort: peer.port,
    httpPort,
    bootReport: booted.report,
    isReady: () => member.isReady(),
    stop,
    fatal: member.fatal,
    removed: member.removal,
  };
}

/**
 * Connections open at once on the internal API port (gRPC and framed Exchange streams); more are
 * refused at accept. A gateway holds up to four per member (unary, streams, snapshots, Exchange).
 */
const API_MAX_CONNECTIONS_COUNT = 4096;
/** A connection that has not told its protocol (TLS handshake included) within this is closed. */
const API_HANDSHAKE_TIMEOUT_MS = 10_000;
const API_KEEPALIVE_TIME_MS = 10_000;
const API_KEEPALIVE_TIMEOUT_MS = 5_000;

interface ApiServer {
  /** Stops accepting; gRPC calls and framed Exchange streams get `graceMs` to finish, then every connection is cut. */
  stop(graceMs: number): Promise<void>;
}

/**
 * The internal API port: gRPC (wardnode.Node) and framed Exchange streams (a gateway's hot calls
 * without HTTP/2), told apart by their first bytes, or under TLS by ALPN. Mutual TLS when configured.
 */
async function startApi(config: RaftNodeConfig, member: Member, logger: Logger, metrics: Metrics, tls: TlsMaterial | null): Promise<{ server: ApiServer; port: number }> {
  const maxReceiveBytes = config.maxRequestBytes + GRPC_OVERHEAD_BYTES;
  const apiLogger = logger.child({ component: 'api' });
  const grpc = createGrpcServer({
    host: config.apiListen.host,
    port: config.apiListen.port,
    maxReceiveMessageBytes: maxReceiveBytes,
    maxSendMessageBytes: NODE_MAX_MESSAGE_BYTES,
    keepaliveTimeMs: API_KEEPALIVE_TIME_MS,
    keepaliveTimeoutMs: API_KEEPALIVE_TIMEOUT_MS,
    maxConcurrentStreams: config.maxGrpcStreamsCount,
    logger: apiLogger,
    metrics,
  });
  grpc.addService(withEncodedSnapshotAnswers(wardNodeServiceDefinition()), nodeServiceHandlers(member));
  const exchangeOptions = { maxReceiveBytes, logger: apiLogger };
  const listener = await startSharedListener({
    host: config.apiListen.host,
    port: config.apiListen.port,
    tls: tls === null ? null : { ...tls, requireClientCertificate: true },
    sniffTimeoutMs: API_HANDSHAKE_TIMEOUT_MS,
    maxConnectionsCount: API_MAX_CONNECTIONS_COUNT,
    protocols: [
      { name: 'grpc', preface: HTTP2_PREFACE, alpn: 'h2', take: (socket) => grpc.injectConnection(socket) },
      {
        name: 'exchange-frames',
        preface: EXCHANGE_FRAMES.preface,
        alpn: EXCHANGE_FRAMES.alpn,
        take: (socket) => void serveExchangeFrames(member, socket, exchangeOptions),
      },
    ],
  });
  let stopping: Promise<void> | undefined;
  const server: ApiServer = {
    stop(graceMs) {
      // Framed streams drained when the member began stopping (core.stopping): the listener waits
      // for their connections to close and cuts what is still open after the grace.
      stopping ??= Promise.all([listener.close(graceMs), grpc.stop(graceMs)]).then(() => undefined);
      return stopping;
    },
  };
  return { server, port: listener.port };
}
