// etcd's LeaseGrant / LeaseRevoke requests → operations. The lease table is replicated; expiry and
// keep-alive belong to a lessor outside the state machine (see @ward/etcd/apply).
import type { ApplyOperation } from '@ward/etcd/apply';
import type { LeaseGrantRequest__Output, LeaseRevokeRequest__Output } from '@ward/etcd/proto';
import { int64ToBigInt, int64ToNumber } from './int64';

type Op<T extends ApplyOperation['type']> = Extract<ApplyOperation, { type: T }>;

/**
 * LeaseGrant: an ID of 0 asks the server to pick one, which etcd's API layer does before
 * proposing; `drawLeaseId` must return a non-zero positive int64 (etcd keeps the top bit clear).
 */
export function leaseGrantOperation(proto: LeaseGrantRequest__Output, drawLeaseId: () => bigint): Op<'leaseGrant'> {
  let id = int64ToBigInt(proto.ID, 'LeaseGrantRequest.ID');
  if (id === 0n) {
    id = drawLeaseId();
    if (typeof id !== 'bigint' || id <= 0n || id >= 2n ** 63n) throw new TypeError('leaseGrantOperation: drawLeaseId must return a positive int64');
  }
  return { type: 'leaseGrant', request: { id, ttlSeconds: int64ToNumber(proto.TTL, 'LeaseGrantRequest.TTL') } };
}

export function leaseRevokeOperation(proto: LeaseRevokeRequest__Output): Op<'leaseRevoke'> {
  return { type: 'leaseRevoke', request: { id: int64ToBigInt(proto.ID, 'LeaseRevokeRequest.ID') } };
}
