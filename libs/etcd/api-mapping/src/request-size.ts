// etcd refuses a proposal whose encoded internal request exceeds --max-request-bytes
// (`etcdserver: request is too large`); the gRPC server accepts messages up to that limit plus
// 512 KiB of overhead, so oversized requests get the etcd error rather than a transport one.
import { encodeApplyRequest, type ApplyRequest } from '@ward/etcd/apply';
import { wireError } from '@ward/etcd/wire-errors';

/** etcd's default --max-request-bytes: 1.5 MiB. */
export const DEFAULT_MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;

/** etcd's grpcOverheadBytes: the gRPC receive limit is max-request-bytes plus this. */
export const GRPC_OVERHEAD_BYTES = 512 * 1024;

/** Throws etcd's RequestTooLarge wire error when `entryBytes` is over the limit. */
export function checkRequestSize(entryBytes: number, maxRequestBytes: number = DEFAULT_MAX_REQUEST_BYTES): void {
  if (!Number.isSafeInteger(maxRequestBytes) || maxRequestBytes <= 0) throw new TypeError('checkRequestSize: maxRequestBytes must be a positive integer');
  if (entryBytes > maxRequestBytes) throw wireError('RequestTooLarge');
}

/**
 * The log entry of a proposal (`encodeApplyRequest`), refused with RequestTooLarge above
 * `maxRequestBytes` as etcd refuses an oversized InternalRaftRequest.
 */
export function encodeProposal(request: ApplyRequest, maxRequestBytes: number = DEFAULT_MAX_REQUEST_BYTES): Uint8Array {
  checkRequestSize(0, maxRequestBytes);
  let entry: Uint8Array;
  try {
    entry = encodeApplyRequest(request, { maxEntryBytes: Math.max(maxRequestBytes + 1, 16) });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_APPLY_ENTRY_TOO_LARGE') throw wireError('RequestTooLarge', { cause: error });
    throw error;
  }
  checkRequestSize(entry.length, maxRequestBytes);
  return entry;
}
