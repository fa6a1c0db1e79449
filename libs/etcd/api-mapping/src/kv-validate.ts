// etcd's API-layer checks (v3rpc key.go) run through @ward/etcd/kv-store's validators, so the
// gateway, the raft-node and the apply layer give the same answers; a refusal becomes the etcd
// wire error with etcd's exact code and text.
import {
  DEFAULT_MAX_TXN_OPS,
  DEFAULT_MAX_TXN_OPS_TOTAL,
  KVError,
  toWireError as kvToWireError,
  validateDeleteRangeRequest,
  validatePutRequest,
  validateRangeRequest,
  validateTxnRequest,
  type DeleteRangeRequest,
  type PutRequest,
  type RangeRequest,
  type TxnLimits,
  type TxnRequest,
} from '@ward/etcd/kv-store';

/** Txn limits of the API layer (etcd's --max-txn-ops and ward's bound over all nesting levels). */
export interface KvRequestLimits {
  readonly maxTxnOps: number;
  readonly maxTxnOpsTotal: number;
}

export const DEFAULT_KV_REQUEST_LIMITS: KvRequestLimits = Object.freeze({
  maxTxnOps: DEFAULT_MAX_TXN_OPS,
  maxTxnOpsTotal: DEFAULT_MAX_TXN_OPS_TOTAL,
});

function asWireError(run: () => void): void {
  try {
    run();
  } catch (error) {
    if (error instanceof KVError) {
      const wire = kvToWireError(error);
      if (wire !== undefined) throw wire;
    }
    throw error;
  }
}

export function checkRange(request: RangeRequest): void {
  asWireError(() => validateRangeRequest(request));
}

export function checkPut(request: PutRequest): void {
  asWireError(() => validatePutRequest(request));
}

export function checkDeleteRange(request: DeleteRangeRequest): void {
  asWireError(() => validateDeleteRangeRequest(request));
}

export function checkTxn(request: TxnRequest, limits: TxnLimits): void {
  asWireError(() => validateTxnRequest(request, limits));
}
