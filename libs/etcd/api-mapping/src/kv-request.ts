// etcd's KV requests (etcdserverpb Range/Put/DeleteRange/Txn/Compaction, as grpc-js decodes them)
// ↔ @ward/etcd/kv-store's request types. `...FromProto` also runs etcd's API-layer checks and
// throws the etcd wire error (EmptyKey, InvalidSortOption, ValueProvided, LeaseProvided,
// TooManyOps, DuplicateKey, KeyNotFound for an empty txn op) exactly where etcd does.
import type { CompactRequest } from '@ward/etcd/apply';
import { KVTooManyOpsError, MAX_TXN_NESTING_DEPTH, toWireError as kvToWireError } from '@ward/etcd/kv-store';
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '@ward/etcd/kv-store';
import type {
  CompactionRequest__Output,
  Compare__Output,
  DeleteRangeRequest__Output,
  PutRequest__Output,
  RangeRequest__Output,
  RequestOp__Output,
  TxnRequest__Output,
} from '@ward/etcd/proto';
import { boolFromProto, bytesFromProto, bytesToProto } from './bytes-field';
import { COMPARE_RESULT_NAMES, COMPARE_TARGET_NAMES, SORT_ORDER_NAMES, SORT_TARGET_NAMES, enumFromProto, enumToProto } from './enum-names';
import { ApiMappingError } from './errors';
import { int64ToBigInt, int64ToNumber, toInt64String } from './int64';
import { DEFAULT_KV_REQUEST_LIMITS, checkDeleteRange, checkPut, checkRange, checkTxn, type KvRequestLimits } from './kv-validate';
import { refuseTooDeepTxn } from './txn-nesting';

/**
 * An enum value outside the proto enum: kept as a value the kv-store validators refuse, so the
 * refusal comes in etcd's order (empty key before sort options, earlier ops before later ones).
 */
const INVALID_ENUM = 'INVALID' as never;
/** A RequestOp with no request set: the validators answer it `key not found`, as etcd's checkRequestOp. */
const EMPTY_OP = { type: 'empty' } as unknown as RequestOp;

function rangeFromProto(proto: RangeRequest__Output, path: string): RangeRequest {
  return {
    key: bytesFromProto(proto.key, `${path}.key`),
    rangeEnd: bytesFromProto(proto.range_end, `${path}.range_end`),
    limit: int64ToNumber(proto.limit, `${path}.limit`),
    revision: int64ToNumber(proto.revision, `${path}.revision`),
    sortOrder: enumFromProto(SORT_ORDER_NAMES, proto.sort_order) ?? INVALID_ENUM,
    sortTarget: enumFromProto(SORT_TARGET_NAMES, proto.sort_target) ?? INVALID_ENUM,
    serializable: boolFromProto(proto.serializable, `${path}.serializable`),
    keysOnly: boolFromProto(proto.keys_only, `${path}.keys_only`),
    countOnly: boolFromProto(proto.count_only, `${path}.count_only`),
    minModRevision: int64ToNumber(proto.min_mod_revision, `${path}.min_mod_revision`),
    maxModRevision: int64ToNumber(proto.max_mod_revision, `${path}.max_mod_revision`),
    minCreateRevision: int64ToNumber(proto.min_create_revision, `${path}.min_create_revision`),
    maxCreateRevision: int64ToNumber(proto.max_create_revision, `${path}.max_create_revision`),
  };
}

function putFromProto(proto: PutRequest__Output, path: string): PutRequest {
  return {
    key: bytesFromProto(proto.key, `${path}.key`),
    value: bytesFromProto(proto.value, `${path}.value`),
    lease: int64ToBigInt(proto.lease, `${path}.lease`),
    prevKv: boolFromProto(proto.prev_kv, `${path}.prev_kv`),
    ignoreValue: boolFromProto(proto.ignore_value, `${path}.ignore_value`),
    ignoreLease: boolFromProto(proto.ignore_lease, `${path}.ignore_lease`),
  };
}

function deleteRangeFromProto(proto: DeleteRangeRequest__Output, path: string): DeleteRangeRequest {
  return {
    key: bytesFromProto(proto.key, `${path}.key`),
    rangeEnd: bytesFromProto(proto.range_end, `${path}.range_end`),
    prevKv: boolFromProto(proto.prev_kv, `${path}.prev_kv`),
  };
}

/**
 * A Compare's operand is read from the field named by its target; when the oneof holds another
 * field (or none), etcd compares against the zero value, and so do we.
 */
function compareFromProto(proto: Compare__Output, path: string): Compare {
  const result = enumFromProto(COMPARE_RESULT_NAMES, proto.result);
  const target = enumFromProto(COMPARE_TARGET_NAMES, proto.target);
  if (result === undefined) throw new ApiMappingError(`${path}.result`, `unknown compare result ${String(proto.result)}`);
  if (target === undefined) throw new ApiMappingError(`${path}.target`, `unknown compare target ${String(proto.target)}`);
  const base = { result, key: bytesFromProto(proto.key, `${path}.key`), rangeEnd: bytesFromProto(proto.range_end, `${path}.range_end`) };
  switch (target) {
    case 'VERSION':
      return { ...base, target, version: int64ToNumber(proto.version, `${path}.version`) };
    case 'CREATE':
      return { ...base, target, createRevision: int64ToNumber(proto.create_revision, `${path}.create_revision`) };
    case 'MOD':
      return { ...base, target, modRevision: int64ToNumber(proto.mod_revision, `${path}.mod_revision`) };
    case 'VALUE':
      return { ...base, target, value: bytesFromProto(proto.value, `${path}.value`) };
    case 'LEASE':
      return { ...base, target, lease: int64ToBigInt(proto.lease, `${path}.lease`) };
  }
}

function requestOpFromProto(proto: RequestOp__Output, path: string, depth: number): RequestOp {
  switch (proto.request) {
    case 'request_range':
      return proto.request_range ? { type: 'range', request: rangeFromProto(proto.request_range, `${path}.request_range`) } : EMPTY_OP;
    case 'request_put':
      return proto.request_put ? { type: 'put', request: putFromProto(proto.request_put, `${path}.request_put`) } : EMPTY_OP;
    case 'request_delete_range':
      return proto.request_delete_range
        ? { type: 'deleteRange', request: deleteRangeFromProto(proto.request_delete_range, `${path}.request_delete_range`) }
        : EMPTY_OP;
    case 'request_txn':
      return proto.request_txn ? { type: 'txn', request: txnFromProto(proto.request_txn, `${path}.request_txn`, depth + 1) } : EMPTY_OP;
    default:
      return EMPTY_OP;
  }
}

function txnFromProto(proto: TxnRequest__Output, path: string, depth: number): TxnRequest {
  // Past the bound: etcd's answer for a txn nested deeper than its operation budget allows.
  if (depth > MAX_TXN_NESTING_DEPTH) throw kvToWireError(new KVTooManyOpsError(depth, MAX_TXN_NESTING_DEPTH))!;
  const list = <T>(items: readonly T[] | undefined): readonly T[] => items ?? [];
  return {
    compare: list(proto.compare).map((c, i) => compareFromProto(c, `${path}.compare[${i}]`)),
    success: list(proto.success).map((op, i) => requestOpFromProto(op, `${path}.success[${i}]`, depth)),
    failure: list(proto.failure).map((op, i) => requestOpFromProto(op, `${path}.failure[${i}]`, depth)),
  };
}

/** etcd's Range handler: checkRangeRequest (empty key, sort options), then the domain request. */
export function rangeRequestFromProto(proto: RangeRequest__Output): RangeRequest {
  const request = rangeFromProto(proto, 'RangeRequest');
  checkRange(request);
  return request;
}

/** etcd's Put handler: checkPutRequest (empty key, value/lease with ignore_value/ignore_lease). */
export function putRequestFromProto(proto: PutRequest__Output): PutRequest {
  const request = putFromProto(proto, 'PutRequest');
  checkPut(request);
  return request;
}

/** etcd's DeleteRange handler: checkDeleteRequest (empty key). */
export function deleteRangeRequestFromProto(proto: DeleteRangeRequest__Output): DeleteRangeRequest {
  const request = deleteRangeFromProto(proto, 'DeleteRangeRequest');
  checkDeleteRange(request);
  return request;
}

/**
 * etcd's Txn handler: checkTxnRequest (per-level op budget, empty keys, every op) and
 * checkIntervals on both branches (duplicate keys), plus ward's bound over all nesting levels.
 */
export function txnRequestFromProto(proto: TxnRequest__Output, limits: KvRequestLimits = DEFAULT_KV_REQUEST_LIMITS): TxnRequest {
  refuseTooDeepTxn(proto);
  const request = txnFromProto(proto, 'TxnRequest', 1);
  checkTxn(request, limits);
  return request;
}

/** etcd's Compact handler (no API-layer checks: compacted / future revision are decided at apply). */
export function compactionRequestFromProto(proto: CompactionRequest__Output): CompactRequest {
  return { revision: int64ToNumber(proto.revision, 'CompactionRequest.revision'), physical: boolFromProto(proto.physical, 'CompactionRequest.physical') };
}

// ---- domain → proto ------------------------------------------------------------------------

export function rangeRequestToProto(request: RangeRequest): RangeRequest__Output {
  return {
    key: bytesToProto(request.key),
    range_end: bytesToProto(request.rangeEnd),
    limit: toInt64String(request.limit ?? 0),
    revision: toInt64String(request.revision ?? 0),
    sort_order: enumToProto(SORT_ORDER_NAMES, request.sortOrder ?? 'NONE') as RangeRequest__Output['sort_order'],
    sort_target: enumToProto(SORT_TARGET_NAMES, request.sortTarget ?? 'KEY') as RangeRequest__Output['sort_target'],
    serializable: request.serializable ?? false,
    keys_only: request.keysOnly ?? false,
    count_only: request.countOnly ?? false,
    min_mod_revision: toInt64String(request.minModRevision ?? 0),
    max_mod_revision: toInt64String(request.maxModRevision ?? 0),
    min_create_revision: toInt64String(request.minCreateRevision ?? 0),
    max_create_revision: toInt64String(request.maxCreateRevision ?? 0),
  };
}

export function putRequestToProto(request: PutRequest): PutRequest__Output {
  return {
    key: bytesToProto(request.key),
    value: bytesToProto(request.value),
    lease: toInt64String(request.lease ?? 0n),
    prev_kv: request.prevKv ?? false,
    ignore_value: request.ignoreValue ?? false,
    ignore_lease: request.ignoreLease ?? false,
  };
}

export function deleteRangeRequestToProto(request: DeleteRangeRequest): DeleteRangeRequest__Output {
  return { key: bytesToProto(request.key), range_end: bytesToProto(request.rangeEnd), prev_kv: request.prevKv ?? false };
}

function compareToProto(compare: Compare): Compare__Output {
  const base = {
    result: enumToProto(COMPARE_RESULT_NAMES, compare.result) as Compare__Output['result'],
    target: enumToProto(COMPARE_TARGET_NAMES, compare.target) as Compare__Output['target'],
    key: bytesToProto(compare.key),
    range_end: bytesToProto(compare.rangeEnd),
  };
  switch (compare.target) {
    case 'VERSION':
      return { ...base, version: toInt64String(compare.version), target_union: 'version' };
    case 'CREATE':
      return { ...base, create_revision: toInt64String(compare.createRevision), target_union: 'create_revision' };
    case 'MOD':
      return { ...base, mod_revision: toInt64String(compare.modRevision), target_union: 'mod_revision' };
    case 'VALUE':
      return { ...base, value: bytesToProto(compare.value), target_union: 'value' };
    case 'LEASE':
      return { ...base, lease: toInt64String(compare.lease), target_union: 'lease' };
  }
}

function requestOpToProto(op: RequestOp): RequestOp__Output {
  switch (op.type) {
    case 'range':
      return { request_range: rangeRequestToProto(op.request), request: 'request_range' };
    case 'put':
      return { request_put: putRequestToProto(op.request), request: 'request_put' };
    case 'deleteRange':
      return { request_delete_range: deleteRangeRequestToProto(op.request), request: 'request_delete_range' };
    case 'txn':
      return { request_txn: txnRequestToProto(op.request), request: 'request_txn' };
  }
}

export function txnRequestToProto(request: TxnRequest): TxnRequest__Output {
  return {
    compare: request.compare.map(compareToProto),
    success: request.success.map(requestOpToProto),
    failure: request.failure.map(requestOpToProto),
  };
}

export function compactionRequestToProto(request: CompactRequest): CompactionRequest__Output {
  return { revision: toInt64String(request.revision), physical: request.physical ?? false };
}

