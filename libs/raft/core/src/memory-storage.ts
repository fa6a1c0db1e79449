import { assert } from '@ward/shared/errors';
import { CompactedError, SnapshotOutOfDateError, UnavailableError } from './errors';
import { limitSize } from './limit-size';
import type { Storage } from './storage';
import type { ConfState, Entry, HardState, Index, Snapshot, Term } from './types';
import { EMPTY_CONF_STATE, EMPTY_HARD_STATE, ENTRY_HEADER_BYTES, EntryType } from './types';
import { EMPTY_BYTES } from '@ward/shared/bytes';
import { SlabPool } from './slab-pool';

/** Applied entries are packed once at least this much of their data waits. */
export const PACK_MIN_BYTES = 256 * 1024;
/** The most data one run holds (one copy into a slab), unless a single entry is longer. */
export const PACK_RUN_MAX_BYTES = 1024 * 1024;
/** Runs packed by one `pack` call at most: what is left waits for the next (an apply's turn stays short). */
export const PACK_RUNS_PER_CALL = 8;
/** Size of the slabs packed data is copied into. */
export const PACK_SLAB_BYTES = 4 * 1024 * 1024;
/** Released slabs kept for reuse at most (1 GiB), per MemoryStorage. */
export const PACK_FREE_SLABS_MAX = 256;

/** Entries `first`, `first + 1`, ... whose data is in `slab`: entry k's at [start + ends[k], start + ends[k + 1]). */
interface PackedRun {
  readonly first: Index;
  readonly ends: readonly number[];
  readonly slab: Uint8Array;
  readonly start: number;
}

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
  /** Position 0 is the dummy; entries through `packedLast` are stubs whose data is in `runs`. */
  private ents: Entry[];
  /**
   * The packed data of entries (`ents[0].index`, `packedLast`], in order of `first`. A run may
   * start before the first entry kept (compaction keeps a run whole while any entry of it is
   * kept) and, after a conflicting append, reach past `packedLast` (the rest is never read).
   */
  private runs: PackedRun[] = [];
  private packedLast: Index = 0;
  /** Data bytes of the entries in (`packedLast`, `scanned`], counted by `pack`, not packed yet. */
  private scanned: Index = 0;
  private scannedBytes = 0;
  private readonly slabs = new SlabPool(PACK_SLAB_BYTES, PACK_FREE_SLABS_MAX);

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
    if (lo > this.packedLast) return limitSize(this.ents.slice(lo - offset, hi - offset), maxBytes);
    return this.unpacked(lo, hi, maxBytes);
  }

  /** The last entry whose data is packed (`firstIndex() - 1` or less when none is). */
  get lastPacked(): Index {
    return this.packedLast;
  }

  /** Bytes of the slabs packed data is in, or kept for it. */
  get packedSlabBytes(): number {
    return this.slabs.heldBytes;
  }

  /** Length of the data of entry `index`, valid in [firstIndex(), lastIndex()], without unpacking it. */
  dataLength(index: Index): number {
    const offset = this.ents[0]!.index;
    if (index <= offset) throw new CompactedError(index);
    if (index - offset >= this.ents.length) throw new UnavailableError(index);
    if (index > this.packedLast) return this.ents[index - offset]!.data.length;
    const run = this.runs[this.runAt(index)]!;
    const k = index - run.first;
    return run.ends[k + 1]! - run.ends[k]!;
  }

  /**
   * Packs the data of entries through `through` (applied, so read again only for a follower
   * catching up or a replica resuming) into slabs reused as the log is compacted, once at least
   * PACK_MIN_BYTES of it waits: each entry's own buffer is then let go soon after it was made,
   * before a young-generation collection promotes it, and a log of large entries holds a few
   * slabs allocated once instead of a buffer per entry, whose growth outside V8's heap is what
   * starts full collections. Packed entries are returned as copies (`entries`). At most
   * PACK_RUNS_PER_CALL runs a call.
   */
  pack(through: Index): void {
    const offset = this.ents[0]!.index;
    const last = Math.min(through, this.lastIndex());
    for (let i = this.scanned + 1; i <= last; i++) this.scannedBytes += this.ents[i - offset]!.data.length;
    if (last > this.scanned) this.scanned = last;
    let i = this.packedLast + 1;
    for (let runs = 0; runs < PACK_RUNS_PER_CALL && this.scannedBytes >= PACK_MIN_BYTES; runs++) {
      const first = i;
      const room = this.slabs.room();
      // The run fills what is left of the newest slab, or starts a new one.
      const limit = Math.min(PACK_RUN_MAX_BYTES, this.ents[i - offset]!.data.length <= room ? room : PACK_SLAB_BYTES);
      const ends = [0];
      let bytes = 0;
      for (; i <= this.scanned; i++) {
        const length = this.ents[i - offset]!.data.length;
        if (ends.length > 1 && bytes + length > limit) break;
        bytes += length;
        ends.push(bytes);
      }
      const { bytes: slab, start } = this.slabs.place(bytes, i - 1);
      for (let j = first; j < i; j++) {
        const { term, index, type, data } = this.ents[j - offset]!;
        slab.set(data, start + ends[j - first]!);
        this.ents[j - offset] = { term, index, type, data: EMPTY_BYTES };
      }
      this.runs.push({ first, ends, slab, start });
      this.packedLast = i - 1;
      this.scannedBytes -= bytes;
    }
  }

  /** Entries in [lo, hi) (lo in the packed part), size-limited as `entries`, their data unpacked. */
  private unpacked(lo: Index, hi: Index, maxBytes: number): Entry[] {
    const offset = this.ents[0]!.index;
    const out: Entry[] = [];
    let size = 0;
    let r = this.runAt(lo);
    for (let index = lo; index < hi; index++) {
      const stub = this.ents[index - offset]!;
      if (index > this.packedLast) {
        size += ENTRY_HEADER_BYTES + stub.data.length;
        if (out.length > 0 && size > maxBytes) break;
        out.push(stub);
        continue;
      }
      while (r + 1 < this.runs.length && this.runs[r + 1]!.first <= index) r++;
      const run = this.runs[r]!;
      const k = index - run.first;
      const start = run.ends[k]!;
      const end = run.ends[k + 1]!;
      size += ENTRY_HEADER_BYTES + end - start;
      if (out.length > 0 && size > maxBytes) break;
      out.push({ term: stub.term, index, type: stub.type, data: run.slab.slice(run.start + start, run.start + end) });
    }
    return out;
  }

  /** Position in `runs` of the run holding packed entry `index`. */
  private runAt(index: Index): number {
    let lo = 0;
    let hi = this.runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.runs[mid]!.first <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Nothing packed and nothing counted: entries after `index` are all as appended. */
  private unpackedAfter(index: Index): void {
    this.runs = [];
    this.slabs.releaseAll();
    this.packedLast = index;
    this.scanned = index;
    this.scannedBytes = 0;
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
    this.unpackedAfter(index);
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
    if (compactIndex >= this.packedLast) {
      this.unpackedAfter(compactIndex);
      return;
    }
    while (this.runs.length > 1 && this.runs[1]!.first <= compactIndex + 1) this.runs.shift();
    this.slabs.releaseThrough(compactIndex);
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
    if (offset < this.ents.length) {
      this.ents.length = offset;
      this.truncatedAfter(entries[from]!.index - 1);
    }
    for (let i = from; i < entries.length; i++) this.ents.push(entries[i]!);
  }

  /** The log now ends at `last` (a conflicting append replaced what followed). */
  private truncatedAfter(last: Index): void {
    if (last < this.packedLast) {
      this.packedLast = last;
      while (this.runs.length > 0 && this.runs[this.runs.length - 1]!.first > last) this.runs.pop();
    }
    if (last < this.scanned) {
      this.scanned = this.packedLast;
      this.scannedBytes = 0;
    }
  }
}

function dummy(index: Index, term: Term): Entry {
  return { term, index, type: EntryType.Normal, data: EMPTY_BYTES };
}
