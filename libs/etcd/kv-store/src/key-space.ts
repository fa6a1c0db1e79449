import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { EventHistory } from './event-history';
import type { KeyRecord } from './key-record';
import { LeaseIndex } from './lease-index';
import { DEFAULT_ORDER, OrderedMap, type EntryStats, type SortedMapBuilder } from './ordered-map';
import { StateDigest } from './state-digest';

/** etcd's first revision: an empty store is at revision 1 and the first change makes 2. */
export const INITIAL_REVISION = 1;
/** etcd's compactMainRev before any compaction. */
export const NEVER_COMPACTED = -1;

/**
 * What the index keeps per subtree: how many keys are live at the newest record, and the highest
 * newest-record revision. A read at a revision at or above that bound sees every key's newest
 * record, so the subtree's live total is its count there (range-read.ts countSpan).
 */
export const KEY_RECORD_STATS: EntryStats<KeyRecord> = {
  counted: (latest) => latest.value !== null,
  stamp: (latest) => latest.modRevision,
};

/** An index of newest records from `count` keys handed over one at a time in strictly ascending order, as a snapshot is decoded. */
export function keyIndexBuilder(count: number): SortedMapBuilder<KeyRecord> {
  return OrderedMap.sortedBuilder(count, DEFAULT_ORDER, KEY_RECORD_STATS);
}

/** A compaction whose dropped records are still being cut from their chains (compaction.ts). */
export interface PendingCompaction {
  readonly revision: number;
  /** The next key whose chain is to be cut. */
  cursor: ByteString;
}

/**
 * The replicated state of the key space: every key's MVCC chain in key order, the revision
 * counters, and what is derived from them (lease attachments, live-key count, the Watch log).
 */
export class KeySpace {
  /** Newest record of every key that still has history (live or tombstoned). */
  readonly index: OrderedMap<KeyRecord>;
  /** Revision of the last completed change (etcd's currentRev). */
  currentRevision: number;
  /** Revision of the last compaction (etcd's compactMainRev), NEVER_COMPACTED before any. */
  compactRevision: number;
  readonly leases: LeaseIndex;
  readonly history: EventHistory;
  /** Number of keys whose newest record is a put. */
  liveKeys: number;
  /**
   * Sizes of every retained record, and their incremental digest once something has read it (kept
   * in step by every change and compaction from then on; see StateDigest.deferred).
   */
  readonly digest: StateDigest;
  /** The compaction still cutting chains, if any (not part of the state: see compactKeySpace). */
  compaction: PendingCompaction | null = null;
  /** Keys compaction has taken out of the index, ever (a snapshot in the making counts those it takes out meanwhile). */
  keysCompactedAway = 0;

  constructor(
    index: OrderedMap<KeyRecord>,
    currentRevision: number,
    compactRevision: number,
    history: EventHistory,
    leases: LeaseIndex,
    liveKeys: number,
    digest: StateDigest,
  ) {
    assert(Number.isSafeInteger(currentRevision) && currentRevision >= INITIAL_REVISION, 'key-space: current revision');
    assert(compactRevision === NEVER_COMPACTED || compactRevision >= 0, 'key-space: compact revision');
    assert(compactRevision <= currentRevision, 'key-space: compacted beyond the current revision');
    this.index = index;
    this.currentRevision = currentRevision;
    this.compactRevision = compactRevision;
    this.history = history;
    this.leases = leases;
    this.liveKeys = liveKeys;
    this.digest = digest;
  }

  static empty(): KeySpace {
    return new KeySpace(new OrderedMap(DEFAULT_ORDER, KEY_RECORD_STATS), INITIAL_REVISION, NEVER_COMPACTED, new EventHistory(INITIAL_REVISION), new LeaseIndex(), 0, StateDigest.deferred());
  }

  latest(key: ByteString): KeyRecord | undefined {
    return this.index.get(key);
  }
}
