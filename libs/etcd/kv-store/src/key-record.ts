import type { ByteString } from './byte-string';
import { EMPTY_BYTE_STRING, fromByteString } from './byte-string';
import type { KeyValue, LeaseId } from './types';

/**
 * One revision of one key: a put (value set) or a delete (tombstone, value `null`).
 *
 * A key's history is a chain from its newest record through `prev` to older ones (newest first,
 * strictly decreasing (modRevision, subRevision)). Compaction cuts the chain; nothing else
 * mutates a record after it is linked.
 */
export class KeyRecord {
  constructor(
    /** The value, or `null` for a tombstone. */
    readonly value: ByteString | null,
    /** Main revision of the change. */
    readonly modRevision: number,
    /** Position of the change within its main revision (etcd's sub-revision). */
    readonly subRevision: number,
    /** Creation revision of the key's current generation (0 for a tombstone). */
    readonly createRevision: number,
    /** Puts since creation (0 for a tombstone). */
    readonly version: number,
    /** Attached lease (NO_LEASE for none and for tombstones). */
    readonly lease: LeaseId,
    /** The previous record of this key, or `null` (none, or cut by compaction). */
    public prev: KeyRecord | null,
  ) {}

  get isTombstone(): boolean {
    return this.value === null;
  }
}

/** The record a read at `revision` sees: the newest with modRevision <= revision, or null. */
export function recordAt(latest: KeyRecord | undefined, revision: number): KeyRecord | null {
  let record: KeyRecord | null = latest ?? null;
  while (record !== null && record.modRevision > revision) record = record.prev;
  return record;
}

/** The live (non-tombstone) record a read at `revision` sees, or null when the key is absent. */
export function liveRecordAt(latest: KeyRecord | undefined, revision: number): KeyRecord | null {
  const record = recordAt(latest, revision);
  return record === null || record.value === null ? null : record;
}

/**
 * How much of a record a response carries: everything, or everything but the value (keys_only:
 * etcd 3.4.23 keeps key, revisions, version and lease, whatever the sort target).
 */
export type KeyValueShape = 'full' | 'keys-only';

/** The response form of a live record. Fresh arrays: callers may keep or mutate them. */
export function toKeyValue(key: ByteString, record: KeyRecord, shape: KeyValueShape): KeyValue {
  const withValue = shape === 'full';
  return {
    key: fromByteString(key),
    createRevision: record.createRevision,
    modRevision: record.modRevision,
    version: record.version,
    value: withValue ? fromByteString(record.value ?? EMPTY_BYTE_STRING) : new Uint8Array(0),
    lease: record.lease,
  };
}
