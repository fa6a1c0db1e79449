// Joining a running cluster (RAFT_NODE_INITIAL_CLUSTER_STATE=existing). The member was added
// first (etcdctl member add: its id and peer URL are in the cluster's member list); started with
// an empty data dir and the current member list, it asks the members it lists for the cluster's
// identity: the cluster id and the voters the cluster was created with. It must start from that
// configuration (index 0), not an empty one: the initial membership is not in the log, and the
// leader may send it the log from the start rather than a snapshot. The identity is written to
// the data dir (`cluster-identity.json`) before anything else, so restarts use it without asking.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { credentials as grpcCredentials, type ChannelCredentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { wardNodeGrpc, type NodeMemberListResponse__Output } from '@ward/etcd/proto';
import type { Logger } from '@ward/platform/logging';
import type { RaftNodeConfig } from '../config';
import { formatMemberId, parseMemberId } from '../members';

export const IDENTITY_FILE = 'cluster-identity.json';
/** How long one member may take to answer the joining member's MemberList. */
const JOIN_ASK_TIMEOUT_MS = 3000;
/** Rounds over the listed members before giving up (the cluster may be electing). */
const JOIN_ROUNDS = 10;
const JOIN_ROUND_PAUSE_MS = 1000;

export interface ClusterIdentity {
  readonly clusterId: bigint;
  readonly initialMemberIds: readonly bigint[];
}

/** The cluster's identity as one member answers it; throws when it does not list `memberId`. */
export function identityOf(list: NodeMemberListResponse__Output, memberId: bigint): ClusterIdentity {
  if (!list.members.some((m) => BigInt(m.id) === memberId)) {
    throw new Error(`member ${formatMemberId(memberId)} is not in the cluster's member list; add it first (etcdctl member add)`);
  }
  if (list.initial_member_ids.length === 0) throw new Error('the cluster does not report its initial members');
  return { clusterId: BigInt(list.cluster_id), initialMemberIds: list.initial_member_ids.map((id) => BigInt(id)) };
}

async function readIdentity(dataDir: string): Promise<ClusterIdentity | undefined> {
  let text: string;
  try {
    text = await readFile(join(dataDir, IDENTITY_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = JSON.parse(text) as { clusterId: string; initialMemberIds: string[] };
  return { clusterId: parseMemberId(parsed.clusterId), initialMemberIds: parsed.initialMemberIds.map(parseMemberId) };
}

async function writeIdentity(dataDir: string, identity: ClusterIdentity): Promise<void> {
  const text = JSON.stringify({ clusterId: `0x${identity.clusterId.toString(16)}`, initialMemberIds: identity.initialMemberIds.map((id) => `0x${id.toString(16)}`) });
  const staging = join(dataDir, `.${IDENTITY_FILE}.tmp`);
  await writeFile(staging, `${text}\n`, { flush: true });
  await rename(staging, join(dataDir, IDENTITY_FILE));
}

type MemberListCall = (address: string) => Promise<NodeMemberListResponse__Output>;

type Unary<Res> = (request: object, options: { deadline: Date }, callback: (error: ServiceError | null, response?: Res) => void) => void;

/** One unary call of another member's internal API, on a connection opened for it. */
export function askMember<Res>(channelCredentials: ChannelCredentials, method: 'MemberList' | 'Status', address: string, timeoutMs = JOIN_ASK_TIMEOUT_MS): Promise<Res> {
  return new Promise((resolve, reject) => {
    const Node = wardNodeGrpc().Node as unknown as new (address: string, creds: ChannelCredentials, options: object) => Client & Record<'MemberList' | 'Status', Unary<Res>>;
    const client = new Node(address, channelCredentials, { 'grpc.enable_retries': 0 });
    client[method].call(client, {}, { deadline: new Date(Date.now() + timeoutMs) }, (error, response) => {
      client.close();
      if (error !== null || response === undefined) reject(error ?? new Error('no answer'));
      else resolve(response);
    });
  });
}

/**
 * The configuration this member runs with: unchanged for a member of a new cluster; for a
 * joining member, with the cluster id and initial members of the cluster it joins (read from the
 * data dir, or asked from the listed members on first start).
 */
export async function joinedConfig(config: RaftNodeConfig, logger: Logger, options: { credentials?: ChannelCredentials; ask?: MemberListCall; isFresh: boolean }): Promise<RaftNodeConfig> {
  let identity = await readIdentity(config.dataDir);
  if (identity === undefined) {
    if (config.initialClusterState === 'new' || !options.isFresh) return config;
    const credentials = options.credentials ?? grpcCredentials.createInsecure();
    const ask = options.ask ?? ((address: string) => askMember<NodeMemberListResponse__Output>(credentials, 'MemberList', address));
    const others = config.members.filter((m) => m.id !== config.memberId);
    const problems: string[] = [];
    for (let round = 0; round < JOIN_ROUNDS && identity === undefined; round++) {
      if (round > 0) await new Promise((done) => setTimeout(done, JOIN_ROUND_PAUSE_MS));
      for (const member of others) {
        try {
          identity = identityOf(await ask(member.apiAddress), config.memberId);
          break;
        } catch (error) {
          problems.push(`${member.apiAddress}: ${(error as Error).message}`);
          if (/not in the cluster's member list/.test((error as Error).message)) throw new Error(`cannot join: ${(error as Error).message}`);
        }
      }
    }
    if (identity === undefined) throw new Error(`cannot join: no listed member answered (${problems.slice(-others.length).join('; ')})`);
    await writeIdentity(config.dataDir, identity);
    logger.info({ cluster: formatMemberId(identity.clusterId), initialMembers: identity.initialMemberIds.map(formatMemberId) }, 'joining the existing cluster');
  }
  return Object.freeze({ ...config, clusterId: identity.clusterId, initialMemberIds: Object.freeze([...identity.initialMemberIds]) });
}
