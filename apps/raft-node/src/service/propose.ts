// Propose: append a gateway's request to the log and answer once this member applied it.
import { status } from '@grpc/grpc-js';
import { encodeApplyResponse } from '@ward/etcd/api-mapping';
import { encodeApplyRequest, quotaCostBytes, type ApplyOperation, type ApplyRequest } from '@ward/etcd/apply';
import type { NodeResponse, ProposeRequest__Output } from '@ward/etcd/proto';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { ProposalDroppedError } from '@ward/raft/core';
import { maxEntryBytesOf } from '../member-parts';
import type { ProposalOutcomeLabel } from '../node-metrics';
import { errorAnswer, notLeaderAnswer, responseAnswer, wireErrorAnswer } from './answers';
import { decodeEntry } from './decode-entry';
import { responseContext, timeoutOf, type NodeCore } from './node-core';

const POSITIVE_INT64_MASK = 2n ** 63n - 1n;

/**
 * What the leader settles before a grant enters the log, as etcd's lessor does at grant time: a
 * TTL below the minimum is raised to it, and an ID of 0 gets a unique positive one.
 */
function leaderOperation(core: NodeCore, operation: ApplyOperation): ApplyOperation {
  if (operation.type !== 'leaseGrant') return operation;
  let id = operation.request.id;
  while (id === 0n) id = core.ids.next() & POSITIVE_INT64_MASK;
  return { type: 'leaseGrant', request: { id, ttlSeconds: core.lessor.grantTtl(operation.request.ttlSeconds) } };
}

export async function propose(core: NodeCore, request: ProposeRequest__Output): Promise<NodeResponse> {
  const started = performance.now();
  const done = (outcome: ProposalOutcomeLabel, answer: NodeResponse): NodeResponse => {
    core.metrics.proposal(outcome, (performance.now() - started) / 1000);
    return answer;
  };
  if (request.entry.length > core.config.maxRequestBytes) return done('refused', wireErrorAnswer('RequestTooLarge'));
  const decoded = decodeEntry(request.entry, core.config.maxRequestBytes);
  if (decoded.operation.type === 'simpleTokenExpire') {
    throw new GrpcStatusError(status.INVALID_ARGUMENT, 'simpleTokenExpire is proposed by the leader itself');
  }
  if (!core.driver.isLeader) return done('not_leader', notLeaderAnswer(core));
  // Handing leadership over before a stop: nothing more enters the log through this member.
  if (core.stopping.aborted) return done('not_leader', { not_leader: { leader_id: '0', leader_address: '' } });
  if (!core.proposals.hasRoom()) return done('too_many', wireErrorAnswer('TooManyRequests'));
  const cost = quotaCostBytes(decoded.operation);
  if (cost === undefined) return proposeReserved(core, decoded, request, done);
  if (!core.quota.reserve(cost)) return done('refused', wireErrorAnswer('NoSpace'));
  try {
    return await proposeReserved(core, decoded, request, done);
  } finally {
    core.quota.release(cost);
  }
}

/** Proposes an admitted request and waits for its outcome. */
async function proposeReserved(
  core: NodeCore,
  decoded: ApplyRequest,
  request: ProposeRequest__Output,
  done: (outcome: ProposalOutcomeLabel, answer: NodeResponse) => NodeResponse,
): Promise<NodeResponse> {
  // The member stamps its own request id: unique per proposal whoever sent it.
  const id = core.ids.next();
  const entry = encodeApplyRequest({ header: { ...decoded.header, id }, operation: leaderOperation(core, decoded.operation) }, { maxEntryBytes: maxEntryBytesOf(core.config) });
  const outcome = core.proposals.register(id, timeoutOf(core, request.timeout_ms));
  const termAtPropose = core.driver.currentTerm;
  try {
    core.driver.propose(entry);
  } catch (error) {
    core.proposals.cancel(id);
    if (!(error instanceof ProposalDroppedError)) throw error;
    return core.driver.isLeader ? done('dropped', wireErrorAnswer('TooManyRequests')) : done('not_leader', notLeaderAnswer(core));
  }
  const settled = await outcome;
  switch (settled.kind) {
    case 'applied': {
      const { result } = settled;
      if (!result.ok) return done('refused', errorAnswer(result.error));
      const answer = responseAnswer(encodeApplyResponse(result.result, result.header.revision, responseContext(core)));
      return done('applied', { ...answer, applied_index: String(core.stateMachine.appliedIndex) });
    }
    case 'timeout':
      return done('timeout', wireErrorAnswer(core.driver.currentTerm !== termAtPropose ? 'TimeoutDueToLeaderFail' : 'Timeout'));
    case 'stopped':
      return done('stopped', wireErrorAnswer('Stopped'));
  }
}
