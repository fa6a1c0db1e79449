import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { fromByteString } from './byte-string';
import type { KeyRecord } from './key-record';
import { toKeyValue } from './key-record';
import type { KeySpan } from './key-span';
import { spanContains } from './key-span';
import type { WatchEvent } from './types';
import { NO_LEASE } from './types';

/** Drop the consumed front of the arrays once it is this long and at least half of them. */
const RECLAIM_FRONT_MIN = 4096;

/**
 * The revision-ordered change log Watch reads (etcd's watchable store replays the same changes
 * from its backend). Each entry is a (key, record) pair; the record is the one the key's MVCC
 * chain holds, so the log costs two array slots per change.
 *
 * Complete from `floorRevision` on: every change with revision >= floor is present. The floor
 * rises with compaction (etcd: watching below the compact revision is refused) and when the log
 * exceeds its size bound, whole revisions at a time, never the newest revision.
 */
export class EventHistory {
  private keys: ByteString[] = [];
  private records: KeyRecord[] = [];
  private head = 0;
  private floor: number;

  constructor(floorRevision: number) {
    assert(Number.isSafeInteger(floorRevision) && floorRevision >= 1, 'event-history: floor >= 1');
    this.floor = floorRevision;
  }

  /**
   * A log of changes already in (revision, sub-revision) order and complete from `floorRevision`
   * (a snapshot's decoder checked both), taken as they are: the arrays become the log's.
   */
  static fromOrdered(floorRevision: number, keys: ByteString[], records: KeyRecord[]): EventHistory {
    assert(keys.length === records.length, 'event-history: keys and records differ in length');
    const history = new EventHistory(floorRevision);
    history.keys = keys;
    history.records = records;
    return history;
  }

  /** Smallest revision from which the log is complete. */
  get floorRevision(): number {
    return this.floor;
  }

  /** Number of events held. */
  get size(): number {
    return this.records.length - this.head;
  }

  /** Appends one change; changes arrive in (revision, sub-revision) order. */
  append(key: ByteString, record: KeyRecord): void {
    const last = this.records.length > this.head ? this.records[this.records.length - 1]! : null;
    assert(
      last === null ||
        record.modRevision > last.modRevision ||
        (record.modRevision === last.modRevision && record.subRevision === last.subRevision + 1),
      'event-history: changes out of order',
    );
    assert(record.modRevision >= this.floor, 'event-history: change below the floor');
    this.keys.push(key);
    this.records.push(record);
  }

  /** Drops whole oldest revisions until at most `maxEvents` remain (the newest revision stays). */
  trim(maxEvents: number): void {
    if (this.size <= maxEvents) return;
    const newest = this.records[this.records.length - 1]!.modRevision;
    while (this.size > maxEvents) {
      const oldest = this.records[this.head]!.modRevision;
      if (oldest === newest) break;
      this.dropBefore(oldest + 1);
    }
    this.reclaimFront();
  }

  /** Drops every change below `revision` and raises the floor to it (compaction). */
  compact(revision: number): void {
    if (revision > this.floor) {
      this.dropBefore(revision);
      this.floor = revision;
    }
    this.reclaimFront();
  }

  private dropBefore(revision: number): void {
    const records = this.records;
    let head = this.head;
    while (head < records.length && records[head]!.modRevision < revision) head++;
    if (head > this.head) this.floor = Math.max(this.floor, records[head - 1]!.modRevision + 1);
    this.head = head;
  }

  private reclaimFront(): void {
    if (this.head < RECLAIM_FRONT_MIN || this.head * 2 < this.records.length) return;
    this.keys = this.keys.slice(this.head);
    this.records = this.records.slice(this.head);
    this.head = 0;
  }

  /** Index of the first event with revision >= `revision`. */
  private firstAtOrAfter(revision: number): number {
    let low = this.head;
    let high = this.records.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.records[mid]!.modRevision < revision) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /**
   * Events with revision >= `fromRevision` whose key is in `span`, whole revisions only, stopping
   * after the revision in which `maxEvents` matches were reached. `fromRevision` must be >= the
   * floor (the caller checks). Returns the events and the revision to continue from
   * (`currentRevision + 1` when the log was read to its end).
   */
  read(
    fromRevision: number,
    span: KeySpan,
    prevKv: boolean,
    maxEvents: number,
    currentRevision: number,
    compactRevision: number,
  ): { events: WatchEvent[]; nextRevision: number } {
    assert(fromRevision >= this.floor, 'event-history: read below the floor');
    const events: WatchEvent[] = [];
    const records = this.records;
    let index = this.firstAtOrAfter(fromRevision);
    while (index < records.length) {
      const record = records[index]!;
      if (events.length >= maxEvents && record.modRevision !== records[index - 1]!.modRevision) {
        return { events, nextRevision: record.modRevision };
      }
      const key = this.keys[index]!;
      if (spanContains(span, key)) events.push(toWatchEvent(key, record, prevKv, compactRevision));
      index++;
    }
    return { events, nextRevision: Math.max(fromRevision, currentRevision + 1) };
  }

  /** Every held (key, record) pair in log order (for snapshots and tests). */
  forEach(visit: (key: ByteString, record: KeyRecord) => void): void {
    for (let i = this.head; i < this.records.length; i++) visit(this.keys[i]!, this.records[i]!);
  }
}

/**
 * A watch event in etcd's form. prev_kv follows etcd's watch server: the key read at
 * revision - 1, absent when that read fails (compacted) or finds nothing, and never for a
 * creation (a PUT with version 1).
 */
function toWatchEvent(key: ByteString, record: KeyRecord, prevKv: boolean, compactRevision: number): WatchEvent {
  const revision = record.modRevision;
  const kv =
    record.value === null
      ? { key: fromByteString(key), createRevision: 0, modRevision: revision, version: 0, value: new Uint8Array(0), lease: NO_LEASE }
      : toKeyValue(key, record, 'full');
  const event: WatchEvent = {
    type: record.value === null ? 'DELETE' : 'PUT',
    kv,
    revision,
    subRevision: record.subRevision,
  };
  if (!prevKv || revision - 1 < compactRevision) return event;
  if (record.value !== null && record.version === 1) return event;
  // The key as of revision - 1: skip earlier changes of the same revision (a put followed by a
  // from-key delete in one txn reports, on the delete, the version from before the txn).
  let previous = record.prev;
  while (previous !== null && previous.modRevision >= revision) previous = previous.prev;
  if (previous === null || previous.value === null) return event;
  return { ...event, prevKv: toKeyValue(key, previous, 'full') };
}
