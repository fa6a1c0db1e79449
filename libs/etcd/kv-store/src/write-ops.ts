import type { ByteString } from './byte-string';
import { EMPTY_BYTE_STRING, toByteString } from './byte-string';
import { KVKeyNotFoundError, KVLeaseNotFoundError } from './errors';
import type { KeyRecord } from './key-record';
import { liveRecordAt, toKeyValue } from './key-record';
import type { KeySpace } from './key-space';
import { toKeySpan } from './key-span';
import { materializeKeyValues } from './materialize';
import type { DeleteRangeRequest, DeleteRangeResponse, LeaseLookup, PutRequest, PutResponse } from './types';
import { NO_LEASE } from './types';
import type { WriteContext } from './write-context';

// Put and DeleteRange on a write transaction (etcd's server/etcdserver/txn/put.go, delete.go).

/**
 * The checks etcd makes when it applies a put, before any change (checkLease and
 * checkAndGetPrevKV): a named lease must exist; ignore_value / ignore_lease need the key to exist
 * at `revision`. `deletedBefore` says whether an earlier operation of the same txn deletes the key
 * (see txn.ts).
 */
export function checkPut(
  space: KeySpace,
  request: PutRequest,
  revision: number,
  leases: LeaseLookup,
  deletedBefore: (key: ByteString) => boolean,
): void {
  const lease = request.lease ?? NO_LEASE;
  if (lease !== NO_LEASE && !leases.leaseExists(lease)) throw new KVLeaseNotFoundError(lease);
  if (request.ignoreValue === true || request.ignoreLease === true) {
    const key = toByteString(request.key);
    if (liveRecordAt(space.index.get(key), revision) === null || deletedBefore(key)) {
      throw new KVKeyNotFoundError('ignore-flag-on-missing-key');
    }
  }
}

/** Applies a checked put (etcd's txn.put + storeTxnWrite.put). */
export function executePut(context: WriteContext, request: PutRequest): PutResponse {
  const key = toByteString(request.key);
  // checkPut guarantees a live previous version whenever a flag asks to keep part of it.
  const value = request.ignoreValue === true ? null : request.value === undefined ? EMPTY_BYTE_STRING : toByteString(request.value);
  const lease = request.ignoreLease === true ? null : (request.lease ?? NO_LEASE);
  const previous = context.put(key, value, lease);
  if (request.prevKv === true && previous !== null) {
    return { revision: context.writeRevision, prevKv: toKeyValue(key, previous, 'full') };
  }
  return { revision: context.writeRevision };
}

/** Applies a DeleteRange (etcd's txn.deleteRange + storeTxnWrite.deleteRange). */
export function executeDeleteRange(context: WriteContext, space: KeySpace, request: DeleteRangeRequest): DeleteRangeResponse {
  const span = toKeySpan(request.key, request.rangeEnd);
  const keys: ByteString[] = [];
  const records: KeyRecord[] = [];
  const collect = request.prevKv === true;
  let deleted: number;
  if (span.end === undefined) {
    const live = liveRecordAt(space.index.get(span.start), context.readRevision);
    if (live !== null) {
      keys.push(span.start);
      records.push(live);
      context.delete(span.start, live);
    }
    deleted = keys.length;
  } else {
    if (span.end !== null && !(span.start < span.end)) return { revision: context.readRevision, deleted: 0, prevKvs: [] };
    deleted = context.deleteRange(span.start, span.end, (key, live) => {
      if (!collect) return;
      keys.push(key);
      records.push(live);
    });
  }
  const prevKvs = collect ? materializeKeyValues(keys, records, keys.map((_key, i) => i), 'full') : [];
  return { revision: context.readRevision, deleted, prevKvs };
}
