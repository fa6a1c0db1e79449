import type { ResponseHeader__Output } from '@ward/etcd/proto';
import { int64ToNumber, toInt64String, uint64ToBigInt, uint64ToNumber } from './int64';

/**
 * What the answering member adds to every response header (etcd's v3rpc `header.fill`): the
 * cluster and member ids and its current raft term. The revision comes from the result.
 */
export interface ResponseContext {
  readonly clusterId: bigint;
  readonly memberId: bigint;
  readonly raftTerm: number;
}

/** A response header as the domain sees it. */
export interface ResponseHeaderFields extends ResponseContext {
  readonly revision: number;
}

/** A filled-in etcd ResponseHeader. */
export function responseHeaderToProto(context: ResponseContext, revision: number): ResponseHeader__Output {
  return {
    cluster_id: toInt64String(context.clusterId),
    member_id: toInt64String(context.memberId),
    revision: toInt64String(revision),
    raft_term: toInt64String(context.raftTerm),
  };
}

/** The header of a response nested in a Txn: etcd leaves everything but the revision zero. */
export function nestedHeaderToProto(revision: number): ResponseHeader__Output {
  return { cluster_id: '0', member_id: '0', revision: toInt64String(revision), raft_term: '0' };
}

/** A decoded header (absent: all zero). */
export function responseHeaderFromProto(proto: ResponseHeader__Output | null | undefined): ResponseHeaderFields {
  return {
    clusterId: uint64ToBigInt(proto?.cluster_id, 'header.cluster_id'),
    memberId: uint64ToBigInt(proto?.member_id, 'header.member_id'),
    revision: int64ToNumber(proto?.revision, 'header.revision'),
    raftTerm: uint64ToNumber(proto?.raft_term, 'header.raft_term'),
  };
}
