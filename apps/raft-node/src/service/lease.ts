// Lease: the lessor's answers (keep-alive renewal, time-to-live, the list of leases), served by the
// leader only since only the leader knows deadlines. Like etcd's leader it first waits until
// everything committed is applied, then checks the caller's permission against the current auth
// store (spec §3.5: a user while auth is on; admin or WRITE/READ on every attached key).
import { encodeEtcdMessage, responseHeaderToProto, toInt64String } from '@ward/etcd/api-mapping';
import type { LeaseQuery } from '@ward/etcd/apply';
import type { NodeLeaseRequest__Output, NodeResponse } from '@ward/etcd/proto';
import { errorAnswer, notLeaderAnswer, responseAnswer, wireErrorAnswer } from './answers';
import { responseContext, timeoutOf, type NodeCore } from './node-core';

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

function queryOf(request: NodeLeaseRequest__Output, id: bigint): LeaseQuery {
  switch (request.kind) {
    case 'KEEP_ALIVE':
      return { type: 'keepAlive', id };
    case 'TIME_TO_LIVE':
      return { type: 'timeToLive', id, keys: request.keys };
    case 'LEASES':
      return { type: 'leases' };
  }
}

export async function lease(core: NodeCore, request: NodeLeaseRequest__Output): Promise<NodeResponse> {
  if (!core.driver.isLeader || !core.lessor.isPrimary) return notLeaderAnswer(core);
  const id = BigInt(request.id);
  if (id > MAX_INT64 || id < MIN_INT64) return wireErrorAnswer('LeaseNotFound');
  // etcd's waitAppliedIndex: a lease granted and committed must be known here before answering.
  if (!core.applied.hasRoom()) return wireErrorAnswer('TooManyRequests');
  if (!(await core.applied.wait(core.raftIndexes().commit, timeoutOf(core, request.timeout_ms)))) return wireErrorAnswer('TimeoutWaitAppliedIndex');
  if (!core.driver.isLeader || !core.lessor.isPrimary) return notLeaderAnswer(core);
  const applier = core.stateMachine.applier;
  const refusal = applier.checkLeaseQuery({ username: request.username, authRevision: Number(request.auth_revision) }, queryOf(request, id));
  if (refusal !== null) return errorAnswer(refusal);
  const header = responseHeaderToProto(responseContext(core), applier.keySpaceView.currentRevision);
  const nowMs = core.clock.monotonicMs();
  switch (request.kind) {
    case 'KEEP_ALIVE': {
      const outcome = core.lessor.renew(id, nowMs);
      if (outcome.kind === 'not_primary') return notLeaderAnswer(core);
      // etcd answers an unknown or expired lease with TTL 0 on the stream, not an error.
      const ttl = outcome.kind === 'renewed' ? outcome.ttlSeconds : 0;
      return responseAnswer(encodeEtcdMessage('etcdserverpb.LeaseKeepAliveResponse', { header, ID: toInt64String(id), TTL: toInt64String(ttl) }));
    }
    case 'TIME_TO_LIVE': {
      const remainingMs = core.lessor.remainingMs(id, nowMs);
      // etcd answers an unknown lease with TTL -1 (and no error): etcdctl prints "already expired".
      if (remainingMs === undefined) return responseAnswer(encodeEtcdMessage('etcdserverpb.LeaseTimeToLiveResponse', { header, ID: toInt64String(id), TTL: '-1', grantedTTL: '0', keys: [] }));
      const granted = applier.leaseView.ttlOf(id) ?? 0;
      const keys = request.keys ? applier.keySpaceView.leaseKeys(id).map((key) => Buffer.from(key)) : [];
      const message = { header, ID: toInt64String(id), TTL: toInt64String(Math.max(0, Math.trunc(remainingMs / 1000))), grantedTTL: toInt64String(granted), keys };
      return responseAnswer(encodeEtcdMessage('etcdserverpb.LeaseTimeToLiveResponse', message));
    }
    case 'LEASES': {
      const leases = applier.leaseView.entries().map(([leaseId]) => ({ ID: toInt64String(leaseId) }));
      return responseAnswer(encodeEtcdMessage('etcdserverpb.LeaseLeasesResponse', { header, leases }));
    }
  }
}
