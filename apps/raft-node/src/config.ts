/**
 * Configuration of one raft-node, read once from `RAFT_NODE_*` environment variables by main.ts
 * (platform/config: defaults, units in names, unknown variables refused), then resolved into the
 * typed {@link RaftNodeConfig} that createRaftNode takes.
 */
import { DEFAULT_MAX_SIMPLE_TOKENS, DEFAULT_MAX_SIMPLE_TOKENS_PER_USER } from '@ward/etcd/apply';
import { ConfigError, bool, defineConfig, goTogether, int, list, loadConfig, oneOf, string, type ConfigValues } from '@ward/platform/config';
import type { LogLevel } from '@ward/platform/logging';
import { clusterIdOf, parseHostPort, parseMemberId, parseMembers, type HostPort, type MemberSpec } from './members';

const MIB = 1024 * 1024;

export const RAFT_NODE_CONFIG = defineConfig({
  prefix: 'RAFT_NODE',
  options: {
    memberId: string({ default: '', pattern: /^(|0x[0-9a-fA-F]{1,16}|[0-9]{1,20})$/, maxLengthChars: 20, why: 'This member: its id in the member list (decimal or 0x-hex). Required.' }),
    members: list({
      default: [],
      maxItems: 9,
      pattern: /^[^=,\s]+=[^=,\s]+=[^=,\s]+=[^=,\s]+$/,
      why: 'Every member as id=name=peerHost:port=apiHost:port; the same ids on every member (addresses may differ, e.g. through proxies). Required.',
    }),
    initialClusterState: oneOf({
      default: 'new',
      values: ['new', 'existing'] as const,
      why: "'new': the members of RAFT_NODE_MEMBERS create the cluster. 'existing': this member joins a running cluster it was added to (etcdctl member add), RAFT_NODE_MEMBERS listing the current members; it starts as a learner or voter as added, and catches up from the leader.",
    }),
    dataDir: string({ default: '', maxLengthChars: 4096, why: 'Directory of the WAL and snapshots (created if missing). Required.' }),
    apiListenAddress: string({ default: '', maxLengthChars: 300, why: "Where the internal API listens; empty: this member's api address from the member list." }),
    peerListenAddress: string({ default: '', maxLengthChars: 300, why: "Where the peer service listens; empty: this member's peer address from the member list." }),
    httpAddress: string({ default: '127.0.0.1:0', maxLengthChars: 300, why: 'Health, readiness and metrics (HTTP); port 0 picks a free port.' }),
    peerFrameStream: bool({
      default: true,
      why: "Send raft messages to peers on the frame stream (length-prefixed frames on a plain TCP or TLS connection) instead of gRPC; every peer port accepts both. Set false on every member while members of a version without the frame stream are still in the cluster.",
    }),
    tickMs: int({ default: 100, min: 1, max: 10_000, why: "Length of one raft tick (etcd's --heartbeat-interval)." }),
    electionTicks: int({ default: 10, min: 2, max: 1000, why: 'Ticks without a leader before campaigning; randomized to [n, 2n) (etcd: 10 x 100 ms).' }),
    heartbeatTicks: int({ default: 1, min: 1, max: 100, why: 'Ticks between leader heartbeats; must be below electionTicks.' }),
    initialElectionTickAdvance: bool({
      default: true,
      why: "etcd's --initial-election-tick-advance: at start, once more than one peer is connected (within 5 s), fast-forward electionTicks - 2 ticks, so a cluster started or restarted whole elects a leader about an election timeout sooner. A member alone in its cluster fast-forwards electionTicks - 1 whatever this says.",
    }),
    snapshotEntriesCount: int({ default: 10_000, min: 1, max: 10_000_000, why: "Applied entries between local snapshots (etcd --snapshot-count); once a snapshot is larger than RAFT_NODE_SNAPSHOT_BYTES, at least one entry per 4 KiB of it (a snapshot rewrites the whole state, so its cost per entry would otherwise grow with the state)." }),
    snapshotBytes: int({
      default: 64 * MIB,
      min: 1,
      max: 16 * 1024 * MIB,
      why: 'Or a local snapshot once the entries applied since the last one hold this many bytes, or as many as the last snapshot if it is larger (whichever of the count and the bytes comes first); a restart replays at most about this much log.',
    }),
    snapshotCatchUpEntriesCount: int({ default: 5_000, min: 0, max: 10_000_000, why: 'Entries kept behind a snapshot so lagging followers catch up without one.' }),
    snapshotCatchUpBytes: int({ default: 64 * MIB, min: 0, max: 16 * 1024 * MIB, why: 'Also at most this many bytes of entries kept behind a snapshot (whichever of the two keeps fewer).' }),
    maxRequestBytes: int({ default: 1.5 * MIB, min: 1024, max: 64 * MIB, why: "Largest proposal (etcd --max-request-bytes); larger ones get 'request is too large'." }),
    quotaBackendBytes: int({
      default: 0,
      min: -1,
      max: 64 * 1024 * MIB,
      why: "etcd's --quota-backend-bytes: a Put, Txn or LeaseGrant that would take the store's retained records (key + value + 256 bytes per version, until compaction drops it) to this size is refused with 'etcdserver: mvcc: database space exceeded'. 0: etcd's 2 GiB, or a quarter of the process's heap limit when that is smaller (raise the heap with node --max-old-space-size); -1: no quota. Whatever the quota, a write is refused the same way when the store could then no longer be snapshotted (key + value + 64 bytes per version reaching 3,967 MiB: a snapshot's bound of 4 GiB less 1 MiB, less 128 MiB for the rest of the state).",
    }),
    maxPendingProposalsCount: int({ default: 10_000, min: 1, max: 1_000_000, why: "Proposals waiting for apply; beyond it callers get 'too many requests'." }),
    maxPendingReadsCount: int({ default: 100_000, min: 1, max: 10_000_000, why: 'Linearizable reads waiting for their read index or apply.' }),
    defaultRequestTimeoutMs: int({ default: 5_000, min: 1, max: 600_000, why: 'Wait for apply or a read index when the caller gives no timeout.' }),
    maxRequestTimeoutMs: int({ default: 60_000, min: 1, max: 3_600_000, why: 'Upper bound of any caller-given timeout.' }),
    maxWatchStreamsCount: int({ default: 10_000, min: 1, max: 1_000_000, why: 'Concurrent Watch streams on this member.' }),
    maxWatchersPerStreamCount: int({ default: 10_000, min: 1, max: 1_000_000, why: 'Watchers on one stream.' }),
    watchBatchEventsCount: int({ default: 1_000, min: 1, max: 1_000_000, why: 'Events read per watcher per response (whole revisions); slow watchers are paged.' }),
    watchProgressIntervalMs: int({ default: 600_000, min: 100, max: 86_400_000, why: "Progress notifications for progress_notify watchers (etcd's 10 min)." }),
    snapshotStallTimeoutMs: int({ default: 30_000, min: 100, max: 3_600_000, why: 'A Snapshot stream whose reader takes nothing for this long is dropped and its slot freed.' }),
    simpleTokenTtlSeconds: int({ default: 300, min: 1, max: 31_536_000, why: "Idle simple tokens expire after this (etcd's --auth-token-ttl, sliding)." }),
    maxSimpleTokensCount: int({
      default: DEFAULT_MAX_SIMPLE_TOKENS,
      min: 1,
      max: 10_000_000,
      why: 'Live simple tokens in the replicated table; beyond it the user holding the most tokens loses its oldest. Every member must use the same value.',
    }),
    maxSimpleTokensPerUserCount: int({
      default: DEFAULT_MAX_SIMPLE_TOKENS_PER_USER,
      min: 1,
      max: 10_000_000,
      why: "Live simple tokens of one user; a user's next Authenticate beyond it drops that user's own oldest token. Every member must use the same value.",
    }),
    maxTxnOpsCount: int({ default: 128, min: 1, max: 100_000, why: "etcd's --max-txn-ops; every member must use the same value." }),
    eventHistoryEventsCount: int({ default: 200_000, min: 1, max: 100_000_000, why: 'Events kept for Watch; every member must use the same value.' }),
    snapshotFormat: oneOf({
      default: '2',
      values: ['1', '2'] as const,
      why: "Format of the key space in the snapshots this member writes (local, sent to a follower, a gateway's replica feed, etcdctl snapshot save); every format is read. Set 1 on every member while members or gateways of a version that reads format 1 only are still in the cluster.",
    }),
    tlsCertFile: string({ default: '', maxLengthChars: 4096, why: 'PEM certificate of this member for its internal API and peer ports (and as the client to its peers); with the key and CA files, both ports take only mutual TLS. Empty: plaintext.' }),
    tlsKeyFile: string({ default: '', maxLengthChars: 4096, why: 'PEM private key of RAFT_NODE_TLS_CERT_FILE.' }),
    tlsCaFile: string({ default: '', maxLengthChars: 4096, why: 'PEM CA bundle that peers, gateways and this member\'s peers are verified against.' }),
    maxGrpcStreamsCount: int({ default: 10_000, min: 1, max: 1_000_000, why: 'Concurrent HTTP/2 streams per client connection on the internal API.' }),
    logLevel: oneOf({ default: 'info', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, why: 'pino log level.' }),
  },
  validate: (c) => {
    const problems: string[] = [];
    if (c.memberId === '') problems.push('RAFT_NODE_MEMBER_ID is required');
    if (c.members.length === 0) problems.push('RAFT_NODE_MEMBERS is required');
    if (c.dataDir === '') problems.push('RAFT_NODE_DATA_DIR is required');
    if (c.electionTicks <= c.heartbeatTicks) problems.push('RAFT_NODE_ELECTION_TICKS must be greater than RAFT_NODE_HEARTBEAT_TICKS');
    const tls = goTogether({ RAFT_NODE_TLS_CERT_FILE: c.tlsCertFile, RAFT_NODE_TLS_KEY_FILE: c.tlsKeyFile, RAFT_NODE_TLS_CA_FILE: c.tlsCaFile });
    if (tls !== undefined) problems.push(tls);
    if (c.defaultRequestTimeoutMs > c.maxRequestTimeoutMs) problems.push('RAFT_NODE_DEFAULT_REQUEST_TIMEOUT_MS must not exceed RAFT_NODE_MAX_REQUEST_TIMEOUT_MS');
    if (c.maxSimpleTokensPerUserCount > c.maxSimpleTokensCount) problems.push('RAFT_NODE_MAX_SIMPLE_TOKENS_PER_USER_COUNT must not exceed RAFT_NODE_MAX_SIMPLE_TOKENS_COUNT');
    return problems;
  },
});

export type RaftNodeEnvConfig = ConfigValues<(typeof RAFT_NODE_CONFIG)['options']>;

/** Everything createRaftNode needs, checked and typed. */
export interface RaftNodeConfig {
  readonly memberId: bigint;
  readonly members: readonly MemberSpec[];
  /** Derived from the member ids (etcd's rule); never configured. A joining member learns it from the cluster. */
  readonly clusterId: bigint;
  readonly initialClusterState: 'new' | 'existing';
  /** The voters the cluster was created with (its configuration at index 0): RAFT_NODE_MEMBERS, or learnt when joining. */
  readonly initialMemberIds: readonly bigint[];
  readonly dataDir: string;
  readonly apiListen: HostPort;
  readonly peerListen: HostPort;
  /** Raft messages to peers on the frame stream (true) or gRPC's Send stream. */
  readonly peerFrameStream: boolean;
  readonly httpListen: HostPort;
  readonly tickMs: number;
  readonly electionTicks: number;
  readonly heartbeatTicks: number;
  readonly initialElectionTickAdvance: boolean;
  readonly snapshotEntriesCount: number;
  readonly snapshotBytes: number;
  readonly snapshotCatchUpEntriesCount: number;
  readonly snapshotCatchUpBytes: number;
  readonly maxRequestBytes: number;
  /** RAFT_NODE_QUOTA_BACKEND_BYTES as given (0: the default, -1: none); see effectiveQuotaBytes. */
  readonly quotaBackendBytes: number;
  readonly maxPendingProposalsCount: number;
  readonly maxPendingReadsCount: number;
  readonly defaultRequestTimeoutMs: number;
  readonly maxRequestTimeoutMs: number;
  readonly maxWatchStreamsCount: number;
  readonly maxWatchersPerStreamCount: number;
  readonly watchBatchEventsCount: number;
  readonly watchProgressIntervalMs: number;
  readonly snapshotStallTimeoutMs: number;
  readonly simpleTokenTtlSeconds: number;
  readonly maxSimpleTokensCount: number;
  readonly maxSimpleTokensPerUserCount: number;
  readonly maxTxnOpsCount: number;
  readonly eventHistoryEventsCount: number;
  /** The key-space image format of the snapshots this member writes. */
  readonly snapshotFormat: '1' | '2';
  readonly maxGrpcStreamsCount: number;
  /** Mutual TLS on the internal API and peer ports: all three files, or none (plaintext). */
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly tlsCaFile: string;
  readonly logLevel: LogLevel;
}

/**
 * Reads RAFT_NODE_* once and resolves it: every problem, the member list's included, is a
 * ConfigError (exit code 2).
 */
export function loadRaftNodeConfig(env: Readonly<Record<string, string | undefined>>): RaftNodeConfig {
  const values = loadConfig(RAFT_NODE_CONFIG, env);
  try {
    return resolveRaftNodeConfig(values);
  } catch (error) {
    throw new ConfigError(RAFT_NODE_CONFIG.prefix, [(error as Error).message]);
  }
}

/** Resolves the environment values; throws an Error naming the problem. */
export function resolveRaftNodeConfig(env: RaftNodeEnvConfig): RaftNodeConfig {
  const members = parseMembers(env.members);
  const memberId = parseMemberId(env.memberId);
  const self = members.find((m) => m.id === memberId);
  if (self === undefined) throw new Error(`RAFT_NODE_MEMBER_ID ${env.memberId} is not in RAFT_NODE_MEMBERS`);
  const { memberId: _id, members: _members, apiListenAddress, peerListenAddress, httpAddress, ...rest } = env;
  return Object.freeze({
    ...rest,
    memberId,
    members: Object.freeze(members),
    clusterId: clusterIdOf(members.map((m) => m.id)),
    initialMemberIds: Object.freeze(members.map((m) => m.id)),
    apiListen: parseHostPort(apiListenAddress === '' ? self.apiAddress : apiListenAddress),
    peerListen: parseHostPort(peerListenAddress === '' ? self.peerAddress : peerListenAddress),
    httpListen: parseHostPort(httpAddress),
  });
}
