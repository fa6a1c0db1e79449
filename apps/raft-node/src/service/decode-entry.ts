import { status } from '@grpc/grpc-js';
import { decodeApplyRequest, type ApplyRequest } from '@ward/etcd/apply';
import { GrpcStatusError } from '@ward/platform/grpc-server';

/** Room for the entry header on top of the request limit. */
export const ENTRY_OVERHEAD_BYTES = 64 * 1024;

/** A gateway's encoded ApplyRequest; anything that does not decode is the caller's bug. */
export function decodeEntry(entry: Uint8Array, maxRequestBytes: number): ApplyRequest {
  try {
    return decodeApplyRequest(entry, { maxEntryBytes: maxRequestBytes + ENTRY_OVERHEAD_BYTES });
  } catch (error) {
    throw new GrpcStatusError(status.INVALID_ARGUMENT, 'invalid entry: not an encoded ApplyRequest', { cause: error });
  }
}
