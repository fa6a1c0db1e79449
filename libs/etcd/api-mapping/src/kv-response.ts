// kv-store responses ↔ etcd's KV response messages. The top-level header is filled from the
// answering member's context; responses nested in a Txn carry only their revision, as etcd's.
import type {
  CompactResponse,
  DeleteRangeResponse,
  KeyValue,
  PutResponse,
  RangeResponse,
  ResponseOp,
  TxnResponse,
} from '@ward/etcd/kv-store';
import type {
  CompactionResponse__Output,
  DeleteRangeResponse__Output,
  KeyValue__Output,
  PutResponse__Output,
  RangeResponse__Output,
  ResponseHeader__Output,
  ResponseOp__Output,
  TxnResponse__Output,
} from '@ward/etcd/proto';
import { boolFromProto, bytesFromProto, bytesToProto } from './bytes-field';
import { ApiMappingError } from './errors';
import { nestedHeaderToProto, responseHeaderFromProto, responseHeaderToProto, type ResponseContext } from './header';
import { int64ToBigInt, int64ToNumber, toInt64String } from './int64';

/** How a response's header is made: top level (filled) or nested in a Txn (revision only). */
type HeaderOf = (revision: number) => ResponseHeader__Output;

function headerMaker(context: ResponseContext | undefined): HeaderOf {
  return context === undefined ? nestedHeaderToProto : (revision) => responseHeaderToProto(context, revision);
}

export function keyValueToProto(kv: KeyValue): KeyValue__Output {
  return {
    key: bytesToProto(kv.key),
    create_revision: toInt64String(kv.createRevision),
    mod_revision: toInt64String(kv.modRevision),
    version: toInt64String(kv.version),
    value: bytesToProto(kv.value),
    lease: toInt64String(kv.lease),
  };
}

export function keyValueFromProto(proto: KeyValue__Output, path = 'KeyValue'): KeyValue {
  return {
    key: bytesFromProto(proto.key, `${path}.key`),
    createRevision: int64ToNumber(proto.create_revision, `${path}.create_revision`),
    modRevision: int64ToNumber(proto.mod_revision, `${path}.mod_revision`),
    version: int64ToNumber(proto.version, `${path}.version`),
    value: bytesFromProto(proto.value, `${path}.value`),
    lease: int64ToBigInt(proto.lease, `${path}.lease`),
  };
}

/** Range answer; `context` given for a top-level response, omitted inside a Txn. */
export function rangeResponseToProto(response: RangeResponse, context?: ResponseContext): RangeResponse__Output {
  return {
    header: headerMaker(context)(response.revision),
    kvs: response.kvs.map(keyValueToProto),
    more: response.more,
    count: toInt64String(response.count),
  };
}

export function putResponseToProto(response: PutResponse, context?: ResponseContext): PutResponse__Output {
  return { header: headerMaker(context)(response.revision), prev_kv: response.prevKv === undefined ? null : keyValueToProto(response.prevKv) };
}

export function deleteRangeResponseToProto(response: DeleteRangeResponse, context?: ResponseContext): DeleteRangeResponse__Output {
  return {
    header: headerMaker(context)(response.revision),
    deleted: toInt64String(response.deleted),
    prev_kvs: response.prevKvs.map(keyValueToProto),
  };
}

function responseOpToProto(op: ResponseOp): ResponseOp__Output {
  switch (op.type) {
    case 'range':
      return { response_range: rangeResponseToProto(op.response), response: 'response_range' };
    case 'put':
      return { response_put: putResponseToProto(op.response), response: 'response_put' };
    case 'deleteRange':
      return { response_delete_range: deleteRangeResponseToProto(op.response), response: 'response_delete_range' };
    case 'txn':
      return { response_txn: txnResponseToProto(op.response), response: 'response_txn' };
  }
}

export function txnResponseToProto(response: TxnResponse, context?: ResponseContext): TxnResponse__Output {
  return { header: headerMaker(context)(response.revision), succeeded: response.succeeded, responses: response.responses.map(responseOpToProto) };
}

export function compactionResponseToProto(response: CompactResponse, context: ResponseContext): CompactionResponse__Output {
  return { header: responseHeaderToProto(context, response.revision) };
}

// ---- proto → domain (for gateways that decode, and for round-trip tests) ----------------------

export function rangeResponseFromProto(proto: RangeResponse__Output, path = 'RangeResponse'): RangeResponse {
  return {
    revision: responseHeaderFromProto(proto.header).revision,
    kvs: (proto.kvs ?? []).map((kv, i) => keyValueFromProto(kv, `${path}.kvs[${i}]`)),
    more: boolFromProto(proto.more, `${path}.more`),
    count: int64ToNumber(proto.count, `${path}.count`),
  };
}

export function putResponseFromProto(proto: PutResponse__Output, path = 'PutResponse'): PutResponse {
  const revision = responseHeaderFromProto(proto.header).revision;
  return proto.prev_kv ? { revision, prevKv: keyValueFromProto(proto.prev_kv, `${path}.prev_kv`) } : { revision };
}

export function deleteRangeResponseFromProto(proto: DeleteRangeResponse__Output, path = 'DeleteRangeResponse'): DeleteRangeResponse {
  return {
    revision: responseHeaderFromProto(proto.header).revision,
    deleted: int64ToNumber(proto.deleted, `${path}.deleted`),
    prevKvs: (proto.prev_kvs ?? []).map((kv, i) => keyValueFromProto(kv, `${path}.prev_kvs[${i}]`)),
  };
}

function responseOpFromProto(proto: ResponseOp__Output, path: string): ResponseOp {
  switch (proto.response) {
    case 'response_range':
      if (proto.response_range) return { type: 'range', response: rangeResponseFromProto(proto.response_range, `${path}.response_range`) };
      break;
    case 'response_put':
      if (proto.response_put) return { type: 'put', response: putResponseFromProto(proto.response_put, `${path}.response_put`) };
      break;
    case 'response_delete_range':
      if (proto.response_delete_range) {
        return { type: 'deleteRange', response: deleteRangeResponseFromProto(proto.response_delete_range, `${path}.response_delete_range`) };
      }
      break;
    case 'response_txn':
      if (proto.response_txn) return { type: 'txn', response: txnResponseFromProto(proto.response_txn, `${path}.response_txn`) };
      break;
  }
  throw new ApiMappingError(path, 'no response set');
}

export function txnResponseFromProto(proto: TxnResponse__Output, path = 'TxnResponse'): TxnResponse {
  return {
    revision: responseHeaderFromProto(proto.header).revision,
    succeeded: boolFromProto(proto.succeeded, `${path}.succeeded`),
    responses: (proto.responses ?? []).map((op, i) => responseOpFromProto(op, `${path}.responses[${i}]`)),
  };
}

export function compactionResponseFromProto(proto: CompactionResponse__Output): CompactResponse {
  return { revision: responseHeaderFromProto(proto.header).revision };
}
