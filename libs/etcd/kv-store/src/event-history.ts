import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { fromByteString } from './byte-string';
import type { KeyRecord } from './key-record';
import { toKeyValue } from './key-record';
import type { KeySpan } from './key-span';
import { spanContains } from './key-span';
import type { WatchEvent } from './types';
import { NO_LEASE } from './types';

/**
 * Events per chunk of the log (a power of two). The log is a list of fixed-size chunks, not two
 * arrays that grow and are copied: at 200,000 events an array's growth (or the copy that dropped its
 * consumed front) allocated and filled megabytes at once, which held a member's event loop for up
 * to ~190 ms under a bulk load where fresh memory is dear. A chunk is 4,096 slots (16 KiB).
 */
export const EVENT_CHUNK_EVENTS = 4096;
const CHUNK_SHIFT = 12;
const CHUNK_MASK = EVENT_CHUNK_EVENTS - 1;

/**
 * The revision-ordered change log Watch reads (etcd's watchable store replays the same changes
 * from its backend). Each entry is a (key, record) pair; the record is the one the key's MVCC
 * chain holds, so the log costs two slots per change.
 *
 * Complete from `floorRevision` on: every change with revision >= floor is present. The floor
 * rises with compaction (etcd: watching below the compact revision is refused) and when the log
 * exceeds its size bound, whole revisions at a time, never the newest revision.
 *
 * Storage: the pairs sit in chunks of EVENT_CHUNK_EVENTS slots, the first held pair at `head` of
 * the first chunk; a position counts slots from the first chunk's start. Appending fills the last
 * chunk or starts a new one; dropping the oldest moves `head` and lets go of whole chunks.
 */
export class EventHistory {
  private keyChunks: ByteString[][] = [];
  private recordChunks: KeyRecord[][] = [];
  /** Position of the first held pair (within the first chunk once whole chunks are let go). */
  private head = 0;
  /** Position after the last held pair. */
  private end = 0;
  private floor: number;

  constructor(floorRevision: number) {
    assert(Number.isSafeInteger(floorRevision) && floorRevision >= 1, 'event-history: floor >= 1');
    this.floor = floorRevision;
  }

  /**
   * A log of changes already in (revision, sub-revision) order and complete from `floorRevision`
   * (a snapshot's decoder checked both), taken as they are.
   */
  static fromOrdered(floorRevision: number, keys: readonly ByteString[], records: readonly KeyRecord[]): EventHistory {
    assert(keys.length === records.length, 'event-history: keys and records differ in length');
    const history = new EventHistory(floorRevision);
    for (let from = 0; from < records.length; from += EVENT_CHUNK_EVENTS) {
      history.keyChunks.push(keys.slice(from, from + EVENT_CHUNK_EVENTS));
      history.recordChunks.push(records.slice(from, from + EVENT_CHUNK_EVENTS));
    }
    history.end = records.length;
    return history;
  }

  /** Smallest revision from which the log is complete. */
  get floorRevision(): number {
    return this.floor;
  }

  /** Number of events held. */
  get size(): number {
    return this.end - this.head;
  }

  /** Appends one change; changes arrive in (revision, sub-revision) order. */
  append(key: ByteString, record: KeyRecord): void {
    const last = this.end > this.head ? this.recordAt(this.end - 1) : null;
    assert(
      last === null ||
        record.modRevision > last.modRevision ||
        (record.modRevision === last.modRevision && record.subRevision === last.subRevision + 1),
      'event-history: changes out of order',
    );
    assert(record.modRevision >= this.floor, 'event-history: change below the floor');
    if ((this.end & CHUNK_MASK) === 0) {
      this.keyChunks.push([]);
      this.recordChunks.push([]);
    }
    this.keyChunks[this.keyChunks.length - 1]!.push(key);
    this.recordChunks[this.recordChunks.length - 1]!.push(record);
    this.end++;
  }

  /** Drops whole oldest revisions until at most `maxEvents` remain (the newest revision stays). */
  trim(maxEvents: number): void {
    if (this.size <= maxEvents) return;
    const newest = this.recordAt(this.end - 1).modRevision;
    while (this.size > maxEvents) {
      const oldest = this.recordAt(this.head).modRevision;
      if (oldest === newest) break;
      this.dropBefore(oldest + 1);
    }
    this.releaseChunks();
  }

  /** Drops every change below `revision` and raises the floor to it (compaction). */
  compact(revision: number): void {
    if (revision > this.floor) {
      this.dropBefore(revision);
      this.floor = revision;
    }
    this.releaseChunks();
  }

  private recordAt(position: number): KeyRecord {
    return this.recordChunks[position >>> CHUNK_SHIFT]![position & CHUNK_MASK]!;
  }

  private keyAt(position: number): ByteString {
    return this.keyChunks[position >>> CHUNK_SHIFT]![position & CHUNK_MASK]!;
  }

  private dropBefore(revision: number): void {
    const head = this.firstAtOrAfter(revision);
    if (head > this.head) this.floor = Math.max(this.floor, this.recordAt(head - 1).modRevision + 1);
    this.head = head;
  }

  /** Lets go of the chunks wholly before `head` (every chunk once nothing is held). */
  private releaseChunks(): void {
    if (this.head === this.end) {
      this.keyChunks = [];
      this.recordChunks = [];
      this.head = this.end = 0;
      return;
    }
    const whole = this.head >>> CHUNK_SHIFT;
    if (whole === 0) return;
    this.keyChunks.splice(0, whole);
    this.recordChunks.splice(0, whole);
    this.head -= whole * EVENT_CHUNK_EVENTS;
    this.end -= whole * EVENT_CHUNK_EVENTS;
  }

  /** Position of the first event with revision >= `revision` (`end` when none). */
  private firstAtOrAfter(revision: number): number {
    let low = this.head;
    let high = this.end;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.recordAt(mid).modRevision < revision) low = mid + 1;
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
    let previous: KeyRecord | null = null;
    for (let position = this.firstAtOrAfter(fromRevision); position < this.end; position++) {
      const record = this.recordAt(position);
      if (events.length >= maxEvents && record.modRevision !== previous!.modRevision) {
        return { events, nextRevision: record.modRevision };
      }
      const key = this.keyAt(position);
      if (spanContains(span, key)) events.push(toWatchEvent(key, record, prevKv, compactRevision));
      previous = record;
    }
    return { events, nextRevision: Math.max(fromRevision, currentRevision + 1) };
  }

  /** Every held (key, record) pair in log order (for snapshots and tests). */
  forEach(visit: (key: ByteString, record: KeyRecord) => void): void {
    for (let position = this.head; position < this.end; position++) visit(this.keyAt(position), this.recordAt(position));
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
