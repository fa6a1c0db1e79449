// What a request adds to the store, as etcd's backend quota charges it (etcd's quota.go): a put
// costs its key and value bytes plus 256, a txn the costlier of its two branches, a lease grant 64.
// Everything else costs nothing and is never refused for space.
import type { PutRequest, RequestOp, TxnRequest } from '@ward/etcd/kv-store';
import type { ApplyOperation } from './request';

/** etcd's kvOverhead: what a put costs beyond its key and value. */
export const PUT_OVERHEAD_BYTES = 256;
/** etcd's leaseOverhead: what a lease grant costs. */
export const LEASE_GRANT_COST_BYTES = 64;

function putCost(request: PutRequest): number {
  return PUT_OVERHEAD_BYTES + request.key.length + (request.value?.length ?? 0);
}

function opsCost(ops: readonly RequestOp[]): number {
  let cost = 0;
  for (const op of ops) {
    if (op.type === 'put') cost += putCost(op.request);
    // etcd counts only a branch's own puts; a nested txn's puts are counted here too, so that
    // nesting cannot hide them from the quota.
    else if (op.type === 'txn') cost += txnCost(op.request);
  }
  return cost;
}

function txnCost(request: TxnRequest): number {
  return Math.max(opsCost(request.success), opsCost(request.failure));
}

/**
 * The quota cost of an operation, or undefined when the quota does not apply to it (etcd checks
 * only Put, Txn and LeaseGrant; a Txn is checked even when it writes nothing).
 */
export function quotaCostBytes(operation: ApplyOperation): number | undefined {
  switch (operation.type) {
    case 'put':
      return putCost(operation.request);
    case 'txn':
      return txnCost(operation.request);
    case 'leaseGrant':
      return LEASE_GRANT_COST_BYTES;
    default:
      return undefined;
  }
}
