import type { TxnRequest } from '@ward/etcd/kv-store';

/** etcd's isTxnSerializable: every operation of both branches is a serializable Range. */
export function isTxnSerializable(request: TxnRequest): boolean {
  for (const op of request.success) if (op.type !== 'range' || op.request.serializable !== true) return false;
  for (const op of request.failure) if (op.type !== 'range' || op.request.serializable !== true) return false;
  return true;
}
