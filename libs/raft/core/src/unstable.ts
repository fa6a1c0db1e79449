import { assert } from '@ward/shared/errors';
import type { Entry, Index, Snapshot, Term } from './types';

/**
 * Entries (and possibly a snapshot) the core has accepted but the caller has not yet confirmed as
 * persisted. `entries[i]` has index `offset + i`. Entries below `offsetInProgress` have been handed
 * out in a Ready and are being written; they leave this structure on `stableTo`.
 */
export class Unstable {
  snapshot: Snapshot | undefined = undefined;
  entries: Entry[] = [];
  offset: Index;
  snapshotInProgress = false;
  offsetInProgress: Index;

  constructor(offset: Index) {
    this.offset = offset;
    this.offsetInProgress = offset;
  }

  /** First index held only here: the snapshot's index + 1, if there is a snapshot. */
  maybeFirstIndex(): Index | undefined {
    return this.snapshot === undefined ? undefined : this.snapshot.metadata.index + 1;
  }

  /** Last index held here, if any. */
  maybeLastIndex(): Index | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot === undefined ? undefined : this.snapshot.metadata.index;
  }

  /** Term of `index` if this structure knows it. */
  maybeTerm(index: Index): Term | undefined {
    if (index < this.offset) {
      const snap = this.snapshot;
      return snap !== undefined && snap.metadata.index === index ? snap.metadata.term : undefined;
    }
    const entry = this.entries[index - this.offset];
    return entry === undefined ? undefined : entry.term;
  }

  /** Entries not yet handed out for persisting. */
  nextEntries(): Entry[] {
    const inProgress = this.offsetInProgress - this.offset;
    if (inProgress >= this.entries.length) return [];
    return inProgress === 0 ? this.entries.slice() : this.entries.slice(inProgress);
  }

  hasNextEntries(): boolean {
    return this.offsetInProgress - this.offset < this.entries.length;
  }

  /** The snapshot, if not yet handed out for persisting. */
  nextSnapshot(): Snapshot | undefined {
    return this.snapshot === undefined || this.snapshotInProgress ? undefined : this.snapshot;
  }

  /** Marks everything currently held as handed out (called when a Ready is accepted). */
  acceptInProgress(): void {
    if (this.entries.length > 0) this.offsetInProgress = this.offset + this.entries.length;
    if (this.snapshot !== undefined) this.snapshotInProgress = true;
  }

  /**
   * The caller persisted entries up to (index, term). Ignored if this structure no longer holds
   * that exact entry (it was overwritten by a newer leader meanwhile).
   */
  stableTo(index: Index, term: Term): void {
    if (index < this.offset) return;
    const entry = this.entries[index - this.offset];
    if (entry === undefined || entry.term !== term) return;
    const drop = index + 1 - this.offset;
    this.entries = drop === this.entries.length ? [] : this.entries.slice(drop);
    this.offset = index + 1;
    if (this.offsetInProgress < this.offset) this.offsetInProgress = this.offset;
  }

  /** The caller persisted the snapshot at `index`. */
  stableSnapTo(index: Index): void {
    if (this.snapshot !== undefined && this.snapshot.metadata.index === index) {
      this.snapshot = undefined;
      this.snapshotInProgress = false;
    }
  }

  /** Replaces everything with a snapshot received from the leader. */
  restore(snapshot: Snapshot): void {
    this.offset = snapshot.metadata.index + 1;
    this.offsetInProgress = this.offset;
    this.entries = [];
    this.snapshot = snapshot;
    this.snapshotInProgress = false;
  }

  /** Appends `entries`, first discarding any held entry at or after their first index. */
  truncateAndAppend(entries: readonly Entry[]): void {
    const from = entries[0]!.index;
    const end = this.offset + this.entries.length;
    if (from === end) {
      for (let i = 0; i < entries.length; i++) this.entries.push(entries[i]!);
      return;
    }
    if (from <= this.offset) {
      this.entries = entries.slice();
      this.offset = from;
      this.offsetInProgress = from;
      return;
    }
    assert(from < end, `unstable: append at ${from} leaves a gap after ${end - 1}`);
    const kept = this.entries.slice(0, from - this.offset);
    for (let i = 0; i < entries.length; i++) kept.push(entries[i]!);
    this.entries = kept;
    if (this.offsetInProgress > from) this.offsetInProgress = from;
  }

  /** Entries in [lo, hi), which must lie within this structure. */
  slice(lo: Index, hi: Index): Entry[] {
    assert(lo <= hi && lo >= this.offset && hi <= this.offset + this.entries.length, `unstable.slice[${lo},${hi}) out of bound [${this.offset},${this.offset + this.entries.length}]`);
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
