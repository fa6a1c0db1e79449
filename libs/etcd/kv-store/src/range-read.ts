import type { ByteString } from './byte-string';
import { KVCompactedError, KVFutureRevisionError } from './errors';
import type { KeyRecord, KeyValueShape } from './key-record';
import { liveRecordAt } from './key-record';
import type { KeySpace } from './key-space';
import type { KeySpan } from './key-span';
import { toKeySpan } from './key-span';
import { materializeKeyValues } from './materialize';
import type { RangeRequest, RangeResponse, SortOrder, SortTarget } from './types';

/** Live keys of a span at a revision, in key order, as parallel arrays. */
export interface SpanRead {
  readonly keys: ByteString[];
  readonly records: KeyRecord[];
  /** Every live key of the span, also those beyond `collectLimit`. */
  readonly total: number;
}

/**
 * Resolves a request revision like etcd's rangeKeys: above `currentRevision` is a future
 * revision, 0 or below means `currentRevision`, below the compact revision is compacted.
 */
export function resolveReadRevision(space: KeySpace, requested: number, currentRevision: number): number {
  if (requested > currentRevision) throw new KVFutureRevisionError(requested, currentRevision);
  const revision = requested <= 0 ? currentRevision : requested;
  if (revision < space.compactRevision) throw new KVCompactedError(revision, space.compactRevision);
  return revision;
}

/**
 * Reads the live keys of `span` at `revision`. Collects at most `collectLimit` of them (0: all)
 * and stops there, but reports the total of the span, as etcd's index `Revisions(...,
 * withTotalCount)` does; that total costs what countSpan costs, not a visit of every key.
 */
export function readSpan(space: KeySpace, span: KeySpan, revision: number, collectLimit: number): SpanRead {
  const keys: ByteString[] = [];
  const records: KeyRecord[] = [];
  if (span.end === undefined) {
    const record = liveRecordAt(space.index.get(span.start), revision);
    if (record === null) return { keys, records, total: 0 };
    keys.push(span.start);
    records.push(record);
    return { keys, records, total: 1 };
  }
  let stoppedEarly = false;
  space.index.scan(span.start, span.end, (key, latest) => {
    const record = liveRecordAt(latest, revision);
    if (record === null) return true;
    if (collectLimit > 0 && keys.length === collectLimit) {
      stoppedEarly = true;
      return false;
    }
    keys.push(key);
    records.push(record);
    return true;
  });
  return { keys, records, total: stoppedEarly ? countSpan(space, span, revision) : keys.length };
}

/**
 * Number of live keys of `span` at `revision` (etcd's CountRevisions). The index keeps live totals
 * per subtree for its newest records, so parts of the span unchanged since `revision` are counted
 * in O(log n); only keys changed after `revision` are looked at one by one.
 */
export function countSpan(space: KeySpace, span: KeySpan, revision: number): number {
  if (span.end === undefined) return liveRecordAt(space.index.get(span.start), revision) === null ? 0 : 1;
  return space.index.countWhere(span.start, span.end, revision, (latest) => liveRecordAt(latest, revision) !== null);
}

/** etcd's IsDefaultOrdering: results already come in ascending key order. */
export function isDefaultOrdering(sortTarget: SortTarget, sortOrder: SortOrder): boolean {
  return sortOrder === 'NONE' || (sortTarget === 'KEY' && sortOrder === 'ASCEND');
}

/** etcd's HasRevisionFilters. */
export function hasRevisionFilters(request: RangeRequest): boolean {
  return (
    (request.minModRevision ?? 0) !== 0 ||
    (request.maxModRevision ?? 0) !== 0 ||
    (request.minCreateRevision ?? 0) !== 0 ||
    (request.maxCreateRevision ?? 0) !== 0
  );
}

/**
 * Executes a (validated) Range at `currentRevision` (the store's, or inside a write transaction
 * the transaction's read revision), following etcd's txn/range.go: fetch limit + 1 in key order
 * when neither sorting nor revision filters need everything, filter, sort, cut to `limit` and
 * report `more`; `count` is the span's total.
 */
export function executeRange(space: KeySpace, request: RangeRequest, currentRevision: number): RangeResponse {
  const revision = resolveReadRevision(space, request.revision ?? 0, currentRevision);
  const span = toKeySpan(request.key, request.rangeEnd);
  if (request.countOnly === true) {
    return { revision: currentRevision, kvs: [], more: false, count: countSpan(space, span, revision) };
  }
  const sortTarget = request.sortTarget ?? 'KEY';
  const sortOrder = request.sortOrder ?? 'NONE';
  const limit = request.limit ?? 0;
  const fetchAll = !isDefaultOrdering(sortTarget, sortOrder) || hasRevisionFilters(request);
  const read = readSpan(space, span, revision, fetchAll || limit <= 0 ? 0 : limit + 1);
  let order = filterByRevisions(read, request);
  order = sortResults(read, order, sortTarget, sortOrder);
  let more = false;
  if (limit > 0 && order.length > limit) {
    order = order.slice(0, limit);
    more = true;
  }
  const shape: KeyValueShape = request.keysOnly === true ? 'keys-only' : 'full';
  return { revision: currentRevision, kvs: materializeKeyValues(read.keys, read.records, order, shape), more, count: read.total };
}

/** Positions of the read that pass the min/max mod/create revision filters (etcd's pruneKVs). */
function filterByRevisions(read: SpanRead, request: RangeRequest): number[] {
  const minMod = request.minModRevision ?? 0;
  const maxMod = request.maxModRevision ?? 0;
  const minCreate = request.minCreateRevision ?? 0;
  const maxCreate = request.maxCreateRevision ?? 0;
  const order: number[] = [];
  const records = read.records;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (maxMod !== 0 && record.modRevision > maxMod) continue;
    if (minMod !== 0 && record.modRevision < minMod) continue;
    if (maxCreate !== 0 && record.createRevision > maxCreate) continue;
    if (minCreate !== 0 && record.createRevision < minCreate) continue;
    order.push(i);
  }
  return order;
}

/**
 * etcd's sortRangeResults: a target other than KEY with order NONE sorts ascending; ascending by
 * key is the read order already. Ties keep key order (etcd's sort is unstable there, so any
 * order is etcd's; ours is deterministic).
 */
function sortResults(read: SpanRead, order: number[], target: SortTarget, requestedOrder: SortOrder): number[] {
  const sortOrder: SortOrder = target !== 'KEY' && requestedOrder === 'NONE' ? 'ASCEND' : requestedOrder;
  if (isDefaultOrdering(target, sortOrder)) return order;
  const { keys, records } = read;
  const direction = sortOrder === 'DESCEND' ? -1 : 1;
  const compare = (a: number, b: number): number => {
    const ra = records[a]!;
    const rb = records[b]!;
    let result: number;
    switch (target) {
      case 'KEY':
        result = keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0;
        break;
      case 'VERSION':
        result = ra.version - rb.version;
        break;
      case 'CREATE':
        result = ra.createRevision - rb.createRevision;
        break;
      case 'MOD':
        result = ra.modRevision - rb.modRevision;
        break;
      case 'VALUE':
        result = ra.value! < rb.value! ? -1 : ra.value! > rb.value! ? 1 : 0;
        break;
    }
    return result !== 0 ? direction * Math.sign(result) : a - b;
  };
  return order.sort(compare);
}
