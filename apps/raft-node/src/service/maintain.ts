// etcd's admin-only Maintenance RPCs (spec/etcd-auth.md §3.5: Defragment, Snapshot, Hash, HashKV,
// MoveLeader, Downgrade and alarm changes need an admin). The leader decides the admin check
// against its auth store, as etcd's API layer does (IsAdminPermitted: the auth revision plays no
// part), then serves what ward implements: Defragment, MoveLeader, and HashKV/Hash computed over
// the leader's key space in steps between which the member keeps serving. Snapshot streams, so it has its own RPC (snapshot.ts);
// the SNAPSHOT kind here answers UNIMPLEMENTED like the others ward does not serve.
import { status as Status } from '@grpc/grpc-js';
import { encodeEtcdMessage, responseHeaderToProto } from '@ward/etcd/api-mapping';
import { authWireError, toWireError } from '@ward/etcd/apply';
import { HASH_KV_DEFAULT_STEP, type HashKvTask } from '@ward/etcd/kv-store';
import type { NodeMaintainRequest__Output, NodeResponse } from '@ward/etcd/proto';
import { errorAnswer, notLeaderAnswer, responseAnswer, wireErrorAnswer } from './answers';
import { responseContext, timeoutOf, type NodeCore } from './node-core';

type Kind = NodeMaintainRequest__Output['kind'];

/** The etcd RPC name of each kind, for the UNIMPLEMENTED answer. */
const RPC_NAMES: Readonly<Record<Kind, string>> = {
  DEFRAGMENT: 'Defragment',
  MOVE_LEADER: 'MoveLeader',
  HASH: 'Hash',
  HASH_KV: 'HashKV',
  SNAPSHOT: 'Snapshot',
  DOWNGRADE: 'Downgrade',
  ALARM_CHANGE: 'Alarm ACTIVATE/DEACTIVATE',
};

/** What a follower or a non-admin caller gets instead of a maintenance answer (undefined: go on). */
export function adminRefusal(core: NodeCore, username: string): NodeResponse | undefined {
  if (!core.driver.isLeader) return notLeaderAnswer(core);
  const denied = core.stateMachine.applier.authView.isAdminPermitted(username);
  return denied === null ? undefined : errorAnswer(authWireError(denied));
}

export async function maintain(core: NodeCore, request: NodeMaintainRequest__Output): Promise<NodeResponse> {
  if (!(request.kind in RPC_NAMES)) return { error: { code: Status.INVALID_ARGUMENT, message: 'ward: unknown maintenance request' } };
  const refusal = adminRefusal(core, request.username);
  if (refusal !== undefined) return refusal;
  switch (request.kind) {
    case 'DEFRAGMENT':
      // Nothing to defragment: the key space lives in memory, and disk space is given back by
      // snapshots and the WAL compaction that follows them. Success, as etcd answers when done.
      return respond(core, 'etcdserverpb.DefragmentResponse');
    case 'MOVE_LEADER':
      return moveLeader(core, request);
    case 'HASH_KV':
      return hashKv(core, request, 'etcdserverpb.HashKVResponse');
    case 'HASH':
      // etcd hashes its whole database file; ward's database is the key space: its HashKV now.
      return hashKv(core, { ...request, revision: '0' }, 'etcdserverpb.HashResponse');
    default:
      return { error: { code: Status.UNIMPLEMENTED, message: `ward: ${RPC_NAMES[request.kind]} is not supported` } };
  }
}

function respond(core: NodeCore, typeName: string): NodeResponse {
  const header = responseHeaderToProto(responseContext(core), core.stateMachine.applier.keySpaceView.currentRevision);
  return responseAnswer(encodeEtcdMessage(typeName, { header }));
}

/**
 * etcd's HashKV at the request's revision (0 or less: the current one) over this member's key
 * space, `HASH_KV_DEFAULT_STEP` keys or records at a time with the event loop free in between;
 * bounded by the request's timeout. The header carries the revision current when it started.
 */
async function hashKv(core: NodeCore, request: NodeMaintainRequest__Output, typeName: string): Promise<NodeResponse> {
  const keySpace = core.stateMachine.applier.keySpaceView;
  const revision = Number(request.revision);
  let task: HashKvTask;
  try {
    // An int64 beyond 2^53 is beyond any revision ward reaches: etcd's future-revision error.
    task = keySpace.hashKv(Number.isSafeInteger(revision) ? revision : keySpace.currentRevision + 1);
  } catch (error) {
    return errorAnswer(toWireError(error));
  }
  const header = responseHeaderToProto(responseContext(core), keySpace.currentRevision);
  const deadlineMs = core.clock.monotonicMs() + timeoutOf(core, request.timeout_ms);
  try {
    while (!task.step(HASH_KV_DEFAULT_STEP)) {
      if (core.clock.monotonicMs() >= deadlineMs) return { error: { code: Status.DEADLINE_EXCEEDED, message: 'ward: the hash took longer than the request timeout' } };
      await new Promise((done) => setImmediate(done));
    }
  } catch (error) {
    return errorAnswer(toWireError(error));
  }
  const { hash, compactRevision } = task.result;
  return responseAnswer(encodeEtcdMessage(typeName, { header, hash, compact_revision: String(compactRevision) }));
}

/**
 * etcd's MoveLeader: the transferee must be a voting member (not a learner); the leader steps a transfer and the
 * call returns once the transferee leads (at once when it already does), or fails with etcd's
 * `leader transfer took too long` when the deadline passes first.
 */
async function moveLeader(core: NodeCore, request: NodeMaintainRequest__Output): Promise<NodeResponse> {
  const target = parseId(request.target_id);
  const member = target === undefined ? undefined : core.stateMachine.members.get(target);
  if (target === undefined || member === undefined || member.isLearner) return wireErrorAnswer('BadLeaderTransferee');
  const deadlineMs = core.clock.monotonicMs() + timeoutOf(core, request.timeout_ms);
  if (core.driver.leader !== target) core.driver.transferLeader(target);
  while (core.driver.leader !== target) {
    if (core.clock.monotonicMs() >= deadlineMs) return wireErrorAnswer('TimeoutLeaderTransfer');
    await new Promise((done) => setTimeout(done, core.config.tickMs));
  }
  return respond(core, 'etcdserverpb.MoveLeaderResponse');
}

function parseId(text: string): bigint | undefined {
  if (!/^[0-9]{1,20}$/.test(text)) return undefined;
  const id = BigInt(text);
  return id > 0n && id < 2n ** 64n ? id : undefined;
}
