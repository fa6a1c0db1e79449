// etcd's Cluster MemberAdd / MemberRemove / MemberUpdate / MemberPromote, at the leader: the admin
// check (etcd 3.7: membership changes need an admin once auth is on), etcd's refusals (bad or
// existing peer URL, unknown or removed id, too many learners, not a learner, learner not in
// sync, and the strict reconfiguration check: no change that the members reachable now could not
// carry), then the change proposed through raft (its entry's context names the member and this
// request) and the etcd response once it applied. Changes are decided one at a time (the Raft
// core takes one pending change). A new member is listed without a name or internal API address
// until it starts and publishes them (member.ts), as etcd's members do.
import { status as Status } from '@grpc/grpc-js';
import { encodeEtcdMessage, responseHeaderToProto } from '@ward/etcd/api-mapping';
import type { NodeMemberChangeRequest__Output, NodeResponse } from '@ward/etcd/proto';
import { ConfChangeTransition, ConfChangeType, ProposalDroppedError, type ConfChangeSingle } from '@ward/raft/core';
import { encodeChangeContext } from '../membership/codec';
import { MAX_LEARNERS, type MemberList, type MemberRecord } from '../membership/member-list';
import { MAX_MEMBERS, parseHostPort } from '../members';
import { adminRefusal } from './maintain';
import { notLeaderAnswer, responseAnswer, wireErrorAnswer } from './answers';
import { memberView, responseContext, timeoutOf, type NodeCore } from './node-core';

type Kind = NodeMemberChangeRequest__Output['kind'];
const KINDS: readonly Kind[] = ['ADD', 'REMOVE', 'UPDATE', 'PROMOTE'];

/** etcd's HealthInterval: a member counts as active once the leader's stream to it has been up this long. */
export const HEALTH_INTERVAL_MS = 5000;

/** etcd's readyPercent: a learner is promotable once its match index is this share of the leader's. */
export const LEARNER_READY_FRACTION = 0.9;

/** A peer URL as etcd accepts it (http or https, host:port, no path), as ward's `host:port`. */
function peerAddressOf(url: string): string | undefined {
  const match = /^https?:\/\/([^/?#@\s]+)\/?$/.exec(url);
  if (match === null) return undefined;
  try {
    parseHostPort(match[1]!);
    return match[1]!;
  } catch {
    return undefined;
  }
}

/** The single peer URL ward members have, or undefined when the list is not exactly one valid URL. */
function peerAddressesOf(urls: readonly string[]): string | undefined {
  if (urls.length !== 1) return undefined;
  return peerAddressOf(urls[0]!);
}

function parseId(text: string): bigint | undefined {
  if (!/^[0-9]{1,20}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id > 0n && id < 2n ** 64n ? id : undefined;
}

/** Decisions are taken one at a time per member: the last one queued, per member. */
const queues = new WeakMap<NodeCore, Promise<unknown>>();

export function memberChange(core: NodeCore, request: NodeMemberChangeRequest__Output): Promise<NodeResponse> {
  const run = (queues.get(core) ?? Promise.resolve()).then(() => decideAndPropose(core, request));
  queues.set(core, run.catch(() => undefined));
  return run;
}

async function decideAndPropose(core: NodeCore, request: NodeMemberChangeRequest__Output): Promise<NodeResponse> {
  if (!KINDS.includes(request.kind)) return { error: { code: Status.INVALID_ARGUMENT, message: 'ward: unknown membership change' } };
  if (!core.driver.isLeader) return notLeaderAnswer(core);
  const refusal = adminRefusal(core, request.username);
  if (refusal !== undefined) return refusal;
  const members = core.stateMachine.members;
  const decided = decide(core, members, request);
  if ('error' in decided) return decided.error;
  const requestId = core.ids.next();
  const context = encodeChangeContext({ requestId, records: decided.records });
  const waiting = core.membershipChanges.register(requestId, timeoutOf(core, request.timeout_ms));
  try {
    core.driver.proposeConfChange({ transition: ConfChangeTransition.Auto, changes: [decided.change], context });
  } catch (error) {
    core.membershipChanges.cancel(requestId);
    if (error instanceof ProposalDroppedError) return wireErrorAnswer(error.reason === 'no-leader' ? 'NoLeader' : error.reason === 'leader-transfer-in-progress' ? 'LeaderChanged' : error.reason === 'uncommitted-size-limit' ? 'TooManyRequests' : 'Unhealthy');
    throw error;
  }
  const outcome = await waiting;
  if (outcome.kind === 'timeout') return wireErrorAnswer('Timeout');
  if (outcome.kind === 'stopped') return wireErrorAnswer('Stopped');
  if (outcome.applied.refused !== undefined) return wireErrorAnswer('Unhealthy');
  return answer(core, request.kind, decided.change.nodeId);
}

type Decision = { change: ConfChangeSingle; records: MemberRecord[] } | { error: NodeResponse };

function decide(core: NodeCore, members: MemberList, request: NodeMemberChangeRequest__Output): Decision {
  const fail = (name: Parameters<typeof wireErrorAnswer>[0]): Decision => ({ error: wireErrorAnswer(name) });
  const peerTaken = (address: string, except: bigint): boolean => members.members.some((m) => m.id !== except && m.peerAddress === address);
  switch (request.kind) {
    case 'ADD': {
      const address = peerAddressesOf(request.peer_urls);
      if (address === undefined) return fail('MemberBadURLs');
      if (!request.is_learner && !readyToAddVoter(members)) return fail('MemberNotEnoughStarted');
      if (!connectedToAll(core, members)) return fail('Unhealthy');
      if (peerTaken(address, 0n)) return fail('PeerURLExist');
      if (request.is_learner && members.members.filter((m) => m.isLearner).length + 1 > MAX_LEARNERS) return fail('TooManyLearners');
      if (members.size >= MAX_MEMBERS) return fail('Unhealthy');
      const id = members.newMemberId();
      const record: MemberRecord = { id, name: '', peerAddress: address, apiAddress: '', isLearner: request.is_learner };
      return { change: { type: request.is_learner ? ConfChangeType.AddLearnerNode : ConfChangeType.AddNode, nodeId: id }, records: [record] };
    }
    case 'REMOVE': {
      const id = parseId(request.id);
      if (id === undefined) return fail('MemberNotFound');
      const member = members.get(id);
      if (member !== undefined && !member.isLearner) {
        const voters = members.members.filter((m) => !m.isLearner);
        if (!readyToRemoveVoter(members, id)) return fail('MemberNotEnoughStarted');
        // a member that is down is safe to remove: it is not part of the active quorum
        if (id === core.config.memberId || isActive(core, id)) {
          const active = voters.filter((m) => isActive(core, m.id)).length;
          if (active - 1 < 1 + Math.floor((voters.length - 1) / 2)) return fail('Unhealthy');
        }
      }
      if (member === undefined) return fail('MemberNotFound');
      return { change: { type: ConfChangeType.RemoveNode, nodeId: id }, records: [] };
    }
    case 'UPDATE': {
      const id = parseId(request.id);
      const address = peerAddressesOf(request.peer_urls);
      if (address === undefined) return fail('MemberBadURLs');
      const member = id === undefined ? undefined : members.get(id);
      if (id === undefined || member === undefined) return fail('MemberNotFound');
      if (peerTaken(address, id)) return fail('PeerURLExist');
      return { change: { type: ConfChangeType.UpdateNode, nodeId: id }, records: [{ ...member, peerAddress: address }] };
    }
    case 'PROMOTE': {
      const id = parseId(request.id);
      if (id === undefined) return fail('MemberNotFound');
      if (!learnerReady(core, id)) return fail('LearnerNotReady');
      const member = members.get(id);
      if (member === undefined) return fail('MemberNotFound');
      if (!member.isLearner) return fail('MemberNotLearner');
      if (!readyToAddVoter(members)) return fail('MemberNotEnoughStarted');
      if (!connectedToAll(core, members)) return fail('Unhealthy');
      return { change: { type: ConfChangeType.AddNode, nodeId: id }, records: [] };
    }
  }
  return { error: { error: { code: Status.INVALID_ARGUMENT, message: 'ward: unknown membership change' } } };
}

/** etcd's started member: one that published its name. */
function started(member: MemberRecord): boolean {
  return member.name !== '';
}

/** etcd's IsReadyToAddVotingMember: the started voters are a quorum of the voters with the new one. */
function readyToAddVoter(members: MemberList): boolean {
  const voters = members.members.filter((m) => !m.isLearner);
  const count = voters.length + 1;
  return voters.filter(started).length >= Math.floor(count / 2) + 1;
}

/** etcd's IsReadyToRemoveVotingMember: the started voters left are a quorum of the voters left. */
function readyToRemoveVoter(members: MemberList, id: bigint): boolean {
  const voters = members.members.filter((m) => !m.isLearner);
  const count = voters.length - 1;
  const startedLeft = voters.filter((m) => started(m) && m.id !== id).length;
  return count === 0 || startedLeft >= Math.floor(count / 2) + 1;
}

/** etcd's isConnectedSince: the leader's stream to member `id` has been up for HEALTH_INTERVAL_MS (itself always). */
function isActive(core: NodeCore, id: bigint): boolean {
  if (id === core.config.memberId) return true;
  return core.peerConnectedForMs(id) >= HEALTH_INTERVAL_MS;
}

/** etcd's isConnectedFullyToCluster over the voting members: the leader is connected to every voter. */
function connectedToAll(core: NodeCore, members: MemberList): boolean {
  return members.members.filter((m) => !m.isLearner).every((m) => isActive(core, m.id));
}

/** etcd's isLearnerReady: a member the leader tracks has caught up to LEARNER_READY_FRACTION of its log. */
function learnerReady(core: NodeCore, id: bigint): boolean {
  const progress = core.driver.progress();
  const learner = progress.get(id);
  if (learner === undefined) return true;
  const leader = progress.get(core.config.memberId);
  return learner.match >= (leader?.match ?? 0) * LEARNER_READY_FRACTION;
}

function etcdMember(core: NodeCore, id: bigint): object {
  const m = memberView(core, id)!;
  return { ID: m.id.toString(), name: m.name, peerURLs: m.peerAddress === '' ? [] : [`http://${m.peerAddress}`], clientURLs: [], isLearner: m.isLearner };
}

function answer(core: NodeCore, kind: Kind, id: bigint): NodeResponse {
  const header = responseHeaderToProto(responseContext(core), core.stateMachine.applier.keySpaceView.currentRevision);
  const members = core.stateMachine.members.members.map((m) => etcdMember(core, m.id));
  switch (kind) {
    case 'ADD':
      return responseAnswer(encodeEtcdMessage('etcdserverpb.MemberAddResponse', { header, member: etcdMember(core, id), members }));
    case 'REMOVE':
      return responseAnswer(encodeEtcdMessage('etcdserverpb.MemberRemoveResponse', { header, members }));
    case 'PROMOTE':
      return responseAnswer(encodeEtcdMessage('etcdserverpb.MemberPromoteResponse', { header, members }));
    default:
      return responseAnswer(encodeEtcdMessage('etcdserverpb.MemberUpdateResponse', { header, members }));
  }
}
