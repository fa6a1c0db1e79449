import { assertNever } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { toByteString } from './byte-string';
import type { KeyRecord } from './key-record';
import { liveRecordAt } from './key-record';
import type { KeySpace } from './key-space';
import { toKeySpan } from './key-span';
import type { Compare, CompareResult } from './types';
import { NO_LEASE } from './types';

/**
 * etcd's applyCompare: reads the compare's key or range at `revision` and requires every live
 * key to satisfy it. With no live key, a VALUE compare fails (a missing value has no
 * representation) and any other target compares against zero (version, revisions and lease 0).
 */
export function compareHolds(space: KeySpace, compare: Compare, revision: number): boolean {
  const span = toKeySpan(compare.key, compare.rangeEnd);
  const operand = compare.target === 'VALUE' ? toByteString(compare.value) : null;
  if (span.end === undefined) {
    const record = liveRecordAt(space.index.get(span.start), revision);
    if (record === null) return compare.target !== 'VALUE' && compareAbsent(compare);
    return compareRecord(compare, record, operand);
  }
  let found = false;
  let holds = true;
  space.index.scan(span.start, span.end, (_key, latest) => {
    const record = liveRecordAt(latest, revision);
    if (record === null) return true;
    found = true;
    holds = compareRecord(compare, record, operand);
    return holds;
  });
  if (!found) return compare.target !== 'VALUE' && compareAbsent(compare);
  return holds;
}

/** Every compare of a txn holds (etcd's applyCompares). */
export function comparesHold(space: KeySpace, compares: readonly Compare[], revision: number): boolean {
  for (const compare of compares) if (!compareHolds(space, compare, revision)) return false;
  return true;
}

function compareAbsent(compare: Compare): boolean {
  switch (compare.target) {
    case 'VERSION':
      return outcome(compare.result, Math.sign(0 - compare.version));
    case 'CREATE':
      return outcome(compare.result, Math.sign(0 - compare.createRevision));
    case 'MOD':
      return outcome(compare.result, Math.sign(0 - compare.modRevision));
    case 'LEASE':
      return outcome(compare.result, NO_LEASE < compare.lease ? -1 : NO_LEASE > compare.lease ? 1 : 0);
    case 'VALUE':
      return false;
    default:
      return assertNever(compare, 'compare target');
  }
}

function compareRecord(compare: Compare, record: KeyRecord, operand: ByteString | null): boolean {
  switch (compare.target) {
    case 'VERSION':
      return outcome(compare.result, Math.sign(record.version - compare.version));
    case 'CREATE':
      return outcome(compare.result, Math.sign(record.createRevision - compare.createRevision));
    case 'MOD':
      return outcome(compare.result, Math.sign(record.modRevision - compare.modRevision));
    case 'LEASE':
      return outcome(compare.result, record.lease < compare.lease ? -1 : record.lease > compare.lease ? 1 : 0);
    case 'VALUE': {
      const value = record.value!;
      return outcome(compare.result, value < operand! ? -1 : value > operand! ? 1 : 0);
    }
    default:
      return assertNever(compare, 'compare target');
  }
}

function outcome(result: CompareResult, sign: number): boolean {
  switch (result) {
    case 'EQUAL':
      return sign === 0;
    case 'NOT_EQUAL':
      return sign !== 0;
    case 'GREATER':
      return sign > 0;
    case 'LESS':
      return sign < 0;
    default:
      return assertNever(result, 'compare result');
  }
}
