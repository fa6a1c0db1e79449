// The parts of a member built from its configuration and what boot found on disk.
import { randomInt } from 'node:crypto';
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { ApplierOptions } from '@ward/etcd/apply';
import type { TlsMaterial } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import { RawNode, votersConfState, type Message, type NodeId, type Snapshot } from '@ward/raft/core';
import type { BootedRaft, SnapshotDataStream } from '@ward/raft/storage';
import { RaftMessenger, transportMetricsHooks, type SnapshotSink } from '@ward/raft/transport';
import { SeededRng } from '@ward/shared/clock';
import type { RaftNodeConfig } from './config';
import { formatMemberId, type MemberSpec } from './members';
import type { NodeMetrics } from './node-metrics';
import { ENTRY_OVERHEAD_BYTES } from './service/decode-entry';
import { StateMachine, type RestoredState } from './state-machine';

const MIB = 1024 * 1024;

/** Largest log entry a member accepts: the proposal limit plus room for the request header. */
export function maxEntryBytesOf(config: RaftNodeConfig): number {
  return config.maxRequestBytes + ENTRY_OVERHEAD_BYTES;
}

/** The state machine's limits (every member of a cluster must share them: they decide outcomes). */
function applierOptionsOf(config: RaftNodeConfig): ApplierOptions {
  return {
    kv: { maxTxnOps: config.maxTxnOpsCount, eventHistoryMaxEvents: config.eventHistoryEventsCount, snapshotFormat: config.snapshotFormat === '1' ? 1 : 2 },
    maxSimpleTokens: config.maxSimpleTokensCount,
    maxSimpleTokensPerUser: config.maxSimpleTokensPerUserCount,
  };
}

/** The state of the snapshot the member booted from (if any), decoded as its file is read. */
export async function restoreBootSnapshot(config: RaftNodeConfig, booted: BootedRaft): Promise<RestoredState | undefined> {
  if (booted.snapshot === undefined) return undefined;
  return StateMachine.decodeStreamed(applierOptionsOf(config), booted.snapshot.metadata, await booted.persistence.snapshotData(booted.snapshot));
}

export function createStateMachine(config: RaftNodeConfig, restored: RestoredState | undefined, metrics: NodeMetrics, logger: Logger): StateMachine {
  return StateMachine.fromRestored(
    {
      applier: applierOptionsOf(config),
      maxEntryBytes: maxEntryBytesOf(config),
      onUndecodable: (index, error) => {
        metrics.undecodableEntry();
        logger.error({ index, err: error }, 'committed entry does not decode; skipped');
      },
      // A joining member knows the initial members' ids; their records come with the snapshot
      // or the log (placeholders until then, with the configured addresses where it lists them).
      initialMembers: config.initialMemberIds.map((id) => config.members.find((m) => m.id === id) ?? { id, name: '', peerAddress: '', apiAddress: '' }),
      initialConfState: votersConfState(config.initialMemberIds),
      clusterId: config.clusterId,
    },
    restored,
  );
}

/**
 * Committed entry bytes one Ready hands the apply loop, at most (one entry always). A Ready's
 * entries are applied in one piece: at 1 MiB (the core's default, etcd's) a Ready of a bulk
 * load's txns (about 29 of 128 puts) held a member's event loop for up to ~85 ms. The loop lets
 * the event loop in between Readies (READY_TURN_MS).
 */
export const MAX_COMMITTED_BYTES_PER_READY = 256 * 1024;

/**
 * The Raft core: PreVote and CheckQuorum on, ReadIndex safe, 1 MiB per MsgApp, 256 messages and
 * 16 MiB in flight per follower (which also bounds what one follower Ready persists), at most
 * 64 MiB of uncommitted proposals, MAX_COMMITTED_BYTES_PER_READY applied per Ready.
 */
export function createRawNode(config: RaftNodeConfig, booted: BootedRaft, appliedIndex: number): RawNode {
  return new RawNode({
    id: config.memberId,
    storage: booted.storage,
    rng: new SeededRng(randomInt(0, 2 ** 31)),
    applied: appliedIndex,
    electionTimeoutTicks: config.electionTicks,
    heartbeatIntervalTicks: config.heartbeatTicks,
    checkQuorum: true,
    preVote: true,
    maxMessageBytes: MIB,
    maxCommittedBytesPerReady: MAX_COMMITTED_BYTES_PER_READY,
    maxInflightMessages: 256,
    maxInflightBytes: 16 * MIB,
    maxUncommittedEntriesBytes: 64 * MIB,
  });
}

/** Where the messenger delivers (the driver, once it exists). */
export interface PeerInbox {
  step(message: Message): void;
  reportSnapshot(to: NodeId, succeeded: boolean): void;
  reportUnreachable(to: NodeId): void;
}

/**
 * Where this member reaches member `id`: the address its own configuration gives (members may
 * reach each other through different addresses, e.g. proxies), else the replicated one.
 */
export function peerAddressOf(config: RaftNodeConfig, member: MemberSpec): string {
  return config.members.find((m) => m.id === member.id)?.peerAddress ?? member.peerAddress;
}

/**
 * The peers to reach: every other member of the (replicated) list that has a peer address, and
 * every member this member's configuration lists that the list does not say was removed (a
 * joining member must answer a leader that joined after the cluster was created before its own
 * list, still the initial one, names it).
 */
export function peersOf(config: RaftNodeConfig, members: { readonly members: readonly MemberSpec[]; isRemoved(id: bigint): boolean }): (readonly [bigint, string])[] {
  const listed = new Set(members.members.map((m) => m.id));
  const configured = config.members.filter((m) => !listed.has(m.id) && !members.isRemoved(m.id));
  return [...members.members, ...configured].filter((m) => m.id !== config.memberId && peerAddressOf(config, m) !== '').map((m) => [m.id, peerAddressOf(config, m)] as const);
}

export function createMessenger(
  config: RaftNodeConfig,
  members: { readonly members: readonly MemberSpec[]; isRemoved(id: bigint): boolean },
  inbox: () => PeerInbox | undefined,
  snapshotData: (snapshot: Snapshot) => Promise<SnapshotDataStream>,
  receiveSnapshot: (message: Message, totalBytes: number) => Promise<SnapshotSink>,
  metrics: Metrics,
  logger: Logger,
  tls?: { readonly credentials: ChannelCredentials; readonly material: TlsMaterial },
): RaftMessenger {
  return new RaftMessenger({
    ...(tls === undefined ? {} : { credentials: tls.credentials, frameStreamTls: tls.material }),
    frameStream: config.peerFrameStream,
    localId: config.memberId,
    clusterId: config.clusterId,
    peers: peersOf(config, members),
    onMessage: (message) => inbox()?.step(message),
    onSnapshotStatus: (to, ok) => inbox()?.reportSnapshot(to, ok),
    snapshotData,
    receiveSnapshot,
    onUnreachable: (to) => inbox()?.reportUnreachable(to),
    onInvalidMessage: (from, reason) => logger.warn({ from: formatMemberId(from), reason }, 'invalid peer message dropped'),
    limits: { maxMessageBytes: Math.max(16 * MIB, 2 * maxEntryBytesOf(config)) },
    hooks: transportMetricsHooks(metrics),
  });
}
