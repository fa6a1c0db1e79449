// etcd's Watch messages ↔ domain types for the raft-node's watch streams: WatchRequest →
// a command (create / cancel / progress), domain responses and @ward/etcd/kv-store events →
// WatchResponse, plus etcd's fragmentation of large responses.
import type { EventType, KeyValue, WatchEvent } from '@ward/etcd/kv-store';
import type { Event__Output, WatchCreateRequest__Output, WatchRequest__Output, WatchResponse__Output } from '@ward/etcd/proto';
import { boolFromProto, bytesFromProto, bytesToProto } from './bytes-field';
import { EVENT_TYPE_NAMES, WATCH_FILTER_NAMES, enumFromProto, enumToProto, type WatchFilter } from './enum-names';
import { ApiMappingError } from './errors';
import { responseHeaderFromProto, responseHeaderToProto, type ResponseContext } from './header';
import { int64ToBigInt, int64ToNumber, toInt64String } from './int64';
import { keyValueFromProto, keyValueToProto } from './kv-response';

/** etcd's clientv3.InvalidWatchID: refused creates and stream-wide progress notifications. */
export const INVALID_WATCH_ID = -1n;
/** etcd's clientv3.AutoWatchID: the server picks the id. */
export const AUTO_WATCH_ID = 0n;

/** etcd's cancel reasons that are not wire errors (mvcc's watch stream errors). */
export const WATCH_CANCEL_REASONS = Object.freeze({
  emptyRange: 'mvcc: watcher range is empty',
  duplicateId: 'mvcc: duplicate watch ID provided on the WatchStream',
});

/** A watch creation, normalized as etcd's watch server does before anything else. */
export interface WatchCreateRequest {
  /** Never empty: etcd replaces an empty key by `\x00`, the smallest key. */
  readonly key: Uint8Array;
  /** kv-store range meanings: empty = the key alone, `[0x00]` = every key from `key` on. */
  readonly rangeEnd: Uint8Array;
  /** 0 = from the next revision; negative values are refused by the server (etcd: compacted). */
  readonly startRevision: number;
  readonly progressNotify: boolean;
  /** Known filters only (etcd ignores unknown filter numbers). */
  readonly filters: readonly WatchFilter[];
  readonly prevKv: boolean;
  /** 0 = the server picks one. */
  readonly watchId: bigint;
  readonly fragment: boolean;
}

/** One request on a watch stream. `ignored`: nothing set; etcd skips it and keeps the stream. */
export type WatchCommand =
  | { readonly type: 'create'; readonly request: WatchCreateRequest }
  | { readonly type: 'cancel'; readonly watchId: bigint }
  | { readonly type: 'progress' }
  | { readonly type: 'ignored' };

/** An event as it travels to a client (kv-store's WatchEvent without its position fields). */
export type WatchEventFields = Pick<WatchEvent, 'type' | 'kv' | 'prevKv'>;

/** A WatchResponse in domain terms; `revision` is the header's. */
export interface WatchResponse {
  readonly revision: number;
  readonly watchId: bigint;
  readonly created: boolean;
  readonly canceled: boolean;
  readonly compactRevision: number;
  readonly cancelReason: string;
  readonly fragment: boolean;
  readonly events: readonly WatchEventFields[];
}

function createFromProto(proto: WatchCreateRequest__Output): WatchCreateRequest {
  const path = 'WatchCreateRequest';
  const key = bytesFromProto(proto.key, `${path}.key`);
  const filters: WatchFilter[] = [];
  for (const filter of proto.filters ?? []) {
    const known = enumFromProto(WATCH_FILTER_NAMES, filter);
    if (known !== undefined) filters.push(known);
  }
  return {
    key: key.length === 0 ? new Uint8Array([0]) : key,
    rangeEnd: bytesFromProto(proto.range_end, `${path}.range_end`),
    startRevision: int64ToNumber(proto.start_revision, `${path}.start_revision`),
    progressNotify: boolFromProto(proto.progress_notify, `${path}.progress_notify`),
    filters,
    prevKv: boolFromProto(proto.prev_kv, `${path}.prev_kv`),
    watchId: int64ToBigInt(proto.watch_id, `${path}.watch_id`),
    fragment: boolFromProto(proto.fragment, `${path}.fragment`),
  };
}

/** etcd's recvLoop dispatch of one WatchRequest. */
export function watchRequestFromProto(proto: WatchRequest__Output): WatchCommand {
  switch (proto.request_union) {
    case 'create_request':
      return proto.create_request ? { type: 'create', request: createFromProto(proto.create_request) } : { type: 'ignored' };
    case 'cancel_request':
      return proto.cancel_request
        ? { type: 'cancel', watchId: int64ToBigInt(proto.cancel_request.watch_id, 'WatchCancelRequest.watch_id') }
        : { type: 'ignored' };
    case 'progress_request':
      return proto.progress_request ? { type: 'progress' } : { type: 'ignored' };
    default:
      return { type: 'ignored' };
  }
}

export function watchRequestToProto(command: WatchCommand): WatchRequest__Output {
  switch (command.type) {
    case 'create': {
      const r = command.request;
      const create: WatchCreateRequest__Output = {
        key: bytesToProto(r.key),
        range_end: bytesToProto(r.rangeEnd),
        start_revision: toInt64String(r.startRevision),
        progress_notify: r.progressNotify,
        filters: r.filters.map((filter) => enumToProto(WATCH_FILTER_NAMES, filter) as WatchCreateRequest__Output['filters'][number]),
        prev_kv: r.prevKv,
        watch_id: toInt64String(r.watchId),
        fragment: r.fragment,
      };
      return { create_request: create, request_union: 'create_request' };
    }
    case 'cancel':
      return { cancel_request: { watch_id: toInt64String(command.watchId) }, request_union: 'cancel_request' };
    case 'progress':
      return { progress_request: {}, request_union: 'progress_request' };
    case 'ignored':
      return {};
  }
}

export function watchEventToProto(event: WatchEventFields): Event__Output {
  return {
    type: enumToProto(EVENT_TYPE_NAMES, event.type) as Event__Output['type'],
    kv: keyValueToProto(event.kv),
    prev_kv: event.prevKv === undefined ? null : keyValueToProto(event.prevKv),
  };
}

export function watchEventFromProto(proto: Event__Output, path = 'Event'): WatchEventFields {
  const type: EventType | undefined = enumFromProto(EVENT_TYPE_NAMES, proto.type);
  if (type === undefined) throw new ApiMappingError(`${path}.type`, `unknown event type ${String(proto.type)}`);
  const kv: KeyValue = proto.kv ? keyValueFromProto(proto.kv, `${path}.kv`) : keyValueFromProto({} as never, `${path}.kv`);
  return proto.prev_kv ? { type, kv, prevKv: keyValueFromProto(proto.prev_kv, `${path}.prev_kv`) } : { type, kv };
}

export function watchResponseToProto(response: WatchResponse, context: ResponseContext): WatchResponse__Output {
  return {
    header: responseHeaderToProto(context, response.revision),
    watch_id: toInt64String(response.watchId),
    created: response.created,
    canceled: response.canceled,
    compact_revision: toInt64String(response.compactRevision),
    cancel_reason: response.cancelReason,
    fragment: response.fragment,
    events: response.events.map(watchEventToProto),
  };
}

export function watchResponseFromProto(proto: WatchResponse__Output): WatchResponse {
  const path = 'WatchResponse';
  return {
    revision: responseHeaderFromProto(proto.header).revision,
    watchId: int64ToBigInt(proto.watch_id, `${path}.watch_id`),
    created: boolFromProto(proto.created, `${path}.created`),
    canceled: boolFromProto(proto.canceled, `${path}.canceled`),
    compactRevision: int64ToNumber(proto.compact_revision, `${path}.compact_revision`),
    cancelReason: typeof proto.cancel_reason === 'string' ? proto.cancel_reason : '',
    fragment: boolFromProto(proto.fragment, `${path}.fragment`),
    events: (proto.events ?? []).map((event, i) => watchEventFromProto(event, `${path}.events[${i}]`)),
  };
}
