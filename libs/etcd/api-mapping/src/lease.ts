// etcd's LeaseGrant / LeaseRevoke requests → operations. The lease table is replicated; expiry and
// keep-alive belong to a lessor outside the state machine (see @ward/etcd/apply).
import { MAX_LEASE_TTL_SECONDS, type ApplyOperation } from '@ward/etcd/apply';
import type { LeaseGrantRequest__Output, LeaseRevokeRequest__Output } from '@ward/etcd/proto';
import { wireError } from '@ward/etcd/wire-errors';
import { int64ToBigInt, int64ToNumber } from './int64';

type Op<T extends ApplyOperation['type']> = Extract<ApplyOperation, { type: T }>;

/**
 * LeaseGrant: an ID of 0 asks the server to pick one; it stays 0 here, and the leader draws a
 * positive one from its request-id generator before proposing (as etcd's server does). A TTL above
 * etcd's maximum is refused with etcd's error before anything is proposed (so no oversized number
 * is encoded); the lease table checks it again at apply.
 */
export function leaseGrantOperation(proto: LeaseGrantRequest__Output): Op<'leaseGrant'> {
  if (int64ToBigInt(proto.TTL, 'LeaseGrantRequest.TTL') > BigInt(MAX_LEASE_TTL_SECONDS)) throw wireError('LeaseTTLTooLarge');
  return { type: 'leaseGrant', request: { id: int64ToBigInt(proto.ID, 'LeaseGrantRequest.ID'), ttlSeconds: int64ToNumber(proto.TTL, 'LeaseGrantRequest.TTL') } };
}

export function leaseRevokeOperation(proto: LeaseRevokeRequest__Output): Op<'leaseRevoke'> {
  return { type: 'leaseRevoke', request: { id: int64ToBigInt(proto.ID, 'LeaseRevokeRequest.ID') } };
}
