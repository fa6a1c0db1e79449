import type { ConfState, Entry, HardState, Index, Snapshot, Term } from './types';

/**
 * What the core reads of the log, synchronously (etcd's Storage contract). The caller keeps the
 * live tail in memory (for example {@link MemoryStorage}), persists through its own write-ahead
 * log, and rebuilds the memory copy from disk at boot.
 *
 * Errors: `entries` and `term` throw `CompactedError` for an index below the retained range and
 * `UnavailableError` above it; `snapshot` may throw `SnapshotTemporarilyUnavailableError`. Any
 * other exception makes the raft instance inoperable (it is not caught). Returned entries and
 * snapshots are shared and must never be modified by anyone.
 */
export interface Storage {
  /** The persisted HardState and the membership as of the latest snapshot. */
  initialState(): { hardState: HardState; confState: ConfState };
  /**
   * Entries in [lo, hi), at most `maxBytes` of them by encoded size but always at least one when
   * the range is not empty.
   */
  entries(lo: Index, hi: Index, maxBytes: number): Entry[];
  /** Term of entry `index`, valid in [firstIndex() - 1, lastIndex()]. */
  term(index: Index): Term;
  /** Index of the last entry (the snapshot's index when the log is empty). */
  lastIndex(): Index;
  /** Index of the first retained entry (the snapshot's index + 1). */
  firstIndex(): Index;
  /** The most recent snapshot. */
  snapshot(): Snapshot;
}
