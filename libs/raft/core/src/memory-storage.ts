import { assert } from '@ward/shared/errors';
import { CompactedError, SnapshotOutOfDateError, UnavailableError } from './errors';
import { limitSize } from './limit-size';
import type { Storage } from './storage';
import type { ConfState, Entry, HardState, Index, Snapshot, Term } from './types';
import { EMPTY_CONF_STATE, EMPTY_HARD_STATE, EntryType } from './types';
import { EMPTY_BYTES } from '@ward/shared/bytes';

/**
 * The in-memory {@link Storage}: the live log tail, the latest snapshot and the HardState. The
 * caller appends to it only after the same data is durable on disk, and rebuilds it from disk at
 * boot (`applySnapshot`, `setHardState`, `append`).
 *
 * Position 0 of the entry array is a dummy whose index and term are the snapshot's, so that
 * `term(firstIndex() - 1)` is always answerable.
 */
export class MemoryStorage implements Storage {
  private hardState: HardState = EMPTY_HARD_STATE;
  private snap: Snapshot;
  private ents: Entry[];

  /** An empty log; `confState` is the membership of a brand-new cluster (index 0). */
  constructor(confState: ConfState = EMPTY_CONF_STATE) {
    this.snap = { data: EMPTY_BYTES, metadata: { confState, index: 0, term: 0 } };
    this.ents = [dummy(0, 0)];
  }

  initialState(): { hardState: HardState; confState: ConfState } {
    return { hardState: this.hardState, confState: this.snap.metadata.confState };
  }

  /** Records the HardState the caller has just persisted. */
  setHardState(hardState: HardState): void {
    this.hardState = hardState;
  }

  entries(lo: Index, hi: Index, maxBytes: number): Entry[] {
    const offset = this.ents[0]!.index;
    if (lo <= offset) throw new CompactedError(lo);
    assert(hi <= this.lastIndex() + 1, `entries' hi(${hi}) is out of bound lastindex(${this.lastIndex()})`);
    if (this.ents.length === 1) throw new UnavailableError(lo);
    return limitSize(this.ents.slice(lo - offset, hi - offset), maxBytes);
  }

  term(index: Index): Term {
    const offset = this.ents[0]!.index;
    if (index < offset) throw new CompactedError(index);
    if (index - offset >= this.ents.length) throw new UnavailableError(index);
    return this.ents[index - offset]!.term;
  }

  lastIndex(): Index {
    return this.ents[0]!.index + this.ents.length - 1;
  }

  firstIndex(): Index {
    return this.ents[0]!.index + 1;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /** Replaces the whole log with a snapshot received from the leader (after persisting it). */
  applySnapshot(snapshot: Snapshot): void {
    const index = snapshot.metadata.index;
    if (this.snap.metadata.index >= index) throw new SnapshotOutOfDateError(index);
    this.snap = snapshot;
    this.ents = [dummy(index, snapshot.metadata.term)];
  }

  /**
   * Records a snapshot of the application's state at applied index `index` (which must be in the
   * log) so that the log before it can be compacted and lagging followers sent the snapshot.
   */
  createSnapshot(index: Index, confState: ConfState | undefined, data: Uint8Array): Snapshot {
    if (index <= this.snap.metadata.index) throw new SnapshotOutOfDateError(index);
    const offset = this.ents[0]!.index;
    assert(index <= this.lastIndex(), `snapshot ${index} is out of bound lastindex(${this.lastIndex()})`);
    const term = this.ents[index - offset]!.term;
    this.snap = { data, metadata: { confState: confState ?? this.snap.metadata.confState, index, term } };
    return this.snap;
  }

  /** Discards entries before `compactIndex`; `compactIndex` itself becomes the dummy position. */
  compact(compactIndex: Index): void {
    const offset = this.ents[0]!.index;
    if (compactIndex <= offset) throw new CompactedError(compactIndex);
    assert(compactIndex <= this.lastIndex(), `compact ${compactIndex} is out of bound lastindex(${this.lastIndex()})`);
    const i = compactIndex - offset;
    const kept = this.ents.slice(i);
    kept[0] = dummy(compactIndex, this.ents[i]!.term);
    this.ents = kept;
  }

  /**
   * Appends entries the caller has just persisted. Entries at or below the first index are
   * ignored; an entry at an existing index replaces that entry and everything after it.
   */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[0]!.index + entries.length - 1;
    if (last < first) return;
    const from = first > entries[0]!.index ? first - entries[0]!.index : 0;
    const offset = entries[from]!.index - this.ents[0]!.index;
    assert(offset <= this.ents.length, `missing log entry [last: ${this.lastIndex()}, append at: ${entries[from]!.index}]`);
    if (offset < this.ents.length) this.ents.length = offset;
    for (let i = from; i < entries.length; i++) this.ents.push(entries[i]!);
  }
}

function dummy(index: Index, term: Term): Entry {
  return { term, index, type: EntryType.Normal, data: EMPTY_BYTES };
}
