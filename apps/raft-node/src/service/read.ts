// Read: a Range or read-only Txn, linearizable through ReadIndex (then wait until applied >= the
// read index) or serializable from this member's applied state.
import { status } from '@grpc/grpc-js';
import { encodeApplyResponse } from '@ward/etcd/api-mapping';
import type { ApplyRequest } from '@ward/etcd/apply';
import { isTxnReadOnly } from '@ward/etcd/kv-store';
import type { NodeResponse, ReadIndexRequest__Output, ReadRequest__Output } from '@ward/etcd/proto';
import type { WireErrorName } from '@ward/etcd/wire-errors';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import type { ReadOutcomeLabel } from '../node-metrics';
import { errorAnswer, responseAnswer, wireErrorAnswer } from './answers';
import { decodeEntry } from './decode-entry';
import { responseContext, timeoutOf, type NodeCore } from './node-core';

/**
 * Waits until this member may serve a linearizable read: a read index confirmed by a quorum, then
 * applied up to it. Returns the wire error to answer when that does not happen in time.
 */
export async function linearizableBarrier(core: NodeCore, timeoutMs: number): Promise<WireErrorName | undefined> {
  if (!core.reads.hasRoom() || !core.applied.hasRoom()) return 'TooManyRequests';
  const deadline = performance.now() + timeoutMs;
  const index = await core.reads.request(timeoutMs);
  if (index === undefined) return 'Timeout';
  const remainingMs = Math.max(1, Math.round(deadline - performance.now()));
  return (await core.applied.wait(index, remainingMs)) ? undefined : 'TimeoutWaitAppliedIndex';
}

function checkReadOnly(request: ApplyRequest): void {
  const { operation } = request;
  if (operation.type === 'range' || (operation.type === 'txn' && isTxnReadOnly(operation.request))) return;
  throw new GrpcStatusError(status.INVALID_ARGUMENT, `Read serves Range and read-only Txn, not ${operation.type}`);
}

export async function read(core: NodeCore, request: ReadRequest__Output): Promise<NodeResponse> {
  const started = performance.now();
  const kind = request.serializable ? 'serializable' : 'linearizable';
  const done = (outcome: ReadOutcomeLabel, answer: NodeResponse): NodeResponse => {
    core.metrics.read(kind, outcome, (performance.now() - started) / 1000);
    return answer;
  };
  if (request.entry.length > core.config.maxRequestBytes) return done('refused', wireErrorAnswer('RequestTooLarge'));
  const decoded = decodeEntry(request.entry, core.config.maxRequestBytes);
  checkReadOnly(decoded);
  if (!request.serializable) {
    const failure = await linearizableBarrier(core, timeoutOf(core, request.timeout_ms));
    if (failure !== undefined) return done(failure === 'TooManyRequests' ? 'too_many' : 'timeout', wireErrorAnswer(failure));
  }
  const result = core.stateMachine.applier.read(decoded);
  if (!result.ok) return done('refused', errorAnswer(result.error));
  return done('ok', responseAnswer(encodeApplyResponse(result.result, result.header.revision, responseContext(core))));
}

/**
 * ReadIndex alone, for a gateway's read replica: the index a linearizable read starting now must
 * see applied (confirmed by a quorum; a follower asks the leader). Linearizable reads queued
 * together share one round, as the member's own reads do.
 */
export async function readIndex(core: NodeCore, request: ReadIndexRequest__Output): Promise<NodeResponse> {
  if (!core.reads.hasRoom()) return wireErrorAnswer('TooManyRequests');
  const index = await core.reads.request(timeoutOf(core, request.timeout_ms));
  if (index === undefined) return wireErrorAnswer('Timeout');
  return { read_index: String(index) };
}
