import { assert } from '@ward/shared/errors';
import { CompactedError, UnavailableError } from './errors';
import { limitSize } from './limit-size';
import type { Storage } from './storage';
import type { Entry, Index, Snapshot, Term } from './types';
import { entriesSizeBytes } from './types';
import { Unstable } from './unstable';

/**
 * The log as the core sees it: the persisted part (`storage`), the not-yet-persisted tail
 * (`unstable`), and the commit/apply positions. Invariant: applied <= applying <= committed <=
 * lastIndex().
 */
export class RaftLog {
  readonly storage: Storage;
  readonly unstable: Unstable;
  /** Highest index known to be stored on a quorum. */
  committed: Index;
  /** Highest index handed to the application for applying (in a Ready). */
  applying: Index;
  /** Highest index the application has applied (it called advance()). */
  applied: Index;
  /** Byte budget of committed entries handed out but not yet applied. */
  readonly maxApplyingBytes: number;
  private applyingBytes = 0;

  constructor(storage: Storage, maxApplyingBytes: number) {
    this.storage = storage;
    this.maxApplyingBytes = maxApplyingBytes;
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new Unstable(last + 1);
    this.committed = first - 1;
    this.applying = first - 1;
    this.applied = first - 1;
  }

  /**
   * Appends a leader's entries that follow (prevIndex, prevTerm), if this log has that entry.
   * Returns the index of the last new entry, or undefined when the log does not match.
   * `checkPrevTerm` is false only for a test-only mutation.
   */
  maybeAppend(prevIndex: Index, prevTerm: Term, commit: Index, entries: readonly Entry[], checkPrevTerm = true): Index | undefined {
    if (checkPrevTerm ? !this.matchTerm(prevIndex, prevTerm) : prevIndex > this.lastIndex()) return undefined;
    const lastNew = prevIndex + entries.length;
    const conflict = this.findConflict(entries);
    if (conflict !== 0) {
      assert(conflict > this.committed, `entry ${conflict} conflicts with committed entry [committed(${this.committed})]`);
      const start = conflict - (prevIndex + 1);
      assert(start <= entries.length, `index ${start} is out of range [${entries.length}]`);
      this.append(start === 0 ? entries : entries.slice(start));
    }
    this.commitTo(Math.min(commit, lastNew));
    return lastNew;
  }

  /** Appends entries (truncating any conflicting suffix); returns the new last index. */
  append(entries: readonly Entry[]): Index {
    if (entries.length === 0) return this.lastIndex();
    const after = entries[0]!.index - 1;
    assert(after >= this.committed, `after(${after}) is out of range [committed(${this.committed})]`);
    this.unstable.truncateAndAppend(entries);
    return this.lastIndex();
  }

  /** Index of the first entry whose term differs from this log's (or that it lacks); 0 if none. */
  findConflict(entries: readonly Entry[]): Index {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * The largest index <= `index` whose term is <= `term`, with its term (fast log-rejection
   * hint). A compacted position answers (index, 0).
   */
  findConflictByTerm(index: Index, term: Term): { index: Index; term: Term } {
    for (let i = index; i > 0; i--) {
      const ours = this.termOrUndefined(i);
      if (ours === undefined) return { index: i, term: 0 };
      if (ours <= term) return { index: i, term: ours };
    }
    return { index: 0, term: 0 };
  }

  nextUnstableEntries(): Entry[] {
    return this.unstable.nextEntries();
  }

  hasNextUnstableEntries(): boolean {
    return this.unstable.hasNextEntries();
  }

  hasNextOrInProgressUnstableEntries(): boolean {
    return this.unstable.entries.length > 0;
  }

  nextUnstableSnapshot(): Snapshot | undefined {
    return this.unstable.nextSnapshot();
  }

  hasNextOrInProgressSnapshot(): boolean {
    return this.unstable.snapshot !== undefined;
  }

  /** Committed entries not yet handed out for applying, within the applying byte budget. */
  nextCommittedEntries(): Entry[] {
    if (this.hasNextOrInProgressSnapshot()) return [];
    const lo = this.applying + 1;
    const hi = this.committed + 1;
    if (lo >= hi) return [];
    const budget = this.maxApplyingBytes - this.applyingBytes;
    if (budget <= 0) return [];
    return this.slice(lo, hi, budget);
  }

  hasNextCommittedEntries(): boolean {
    if (this.hasNextOrInProgressSnapshot()) return false;
    return this.applying < this.committed && this.applyingBytes < this.maxApplyingBytes;
  }

  /** The latest snapshot: a received one not yet persisted, else storage's. */
  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  firstIndex(): Index {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): Index {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  lastTerm(): Term {
    const term = this.termOrUndefined(this.lastIndex());
    assert(term !== undefined, 'unexpected error when getting the last term');
    return term;
  }

  /** Term of `index`; throws CompactedError / UnavailableError outside [firstIndex-1, lastIndex]. */
  term(index: Index): Term {
    const t = this.unstable.maybeTerm(index);
    if (t !== undefined) return t;
    if (index + 1 < this.firstIndex()) throw new CompactedError(index);
    if (index > this.lastIndex()) throw new UnavailableError(index);
    return this.storage.term(index);
  }

  /** Term of `index`, or undefined when it is outside the log. */
  termOrUndefined(index: Index): Term | undefined {
    const t = this.unstable.maybeTerm(index);
    if (t !== undefined) return t;
    if (index + 1 < this.firstIndex() || index > this.lastIndex()) return undefined;
    try {
      return this.storage.term(index);
    } catch (error) {
      if (error instanceof CompactedError || error instanceof UnavailableError) return undefined;
      throw error;
    }
  }

  /** Term of `index`, 0 when it is outside the log. */
  zeroTermOnOutOfBounds(index: Index): Term {
    return this.termOrUndefined(index) ?? 0;
  }

  matchTerm(index: Index, term: Term): boolean {
    const ours = this.termOrUndefined(index);
    return ours !== undefined && ours === term;
  }

  /** Raft's up-to-date rule (§5.4.1): compare last terms, then last indexes. */
  isUpToDate(lastIndex: Index, lastTerm: Term): boolean {
    const ourTerm = this.lastTerm();
    return lastTerm > ourTerm || (lastTerm === ourTerm && lastIndex >= this.lastIndex());
  }

  /** Entries from `lo` to the end, at most `maxBytes` (at least one). */
  entries(lo: Index, maxBytes: number): Entry[] {
    const last = this.lastIndex();
    if (lo > last) return [];
    return this.slice(lo, last + 1, maxBytes);
  }

  /** Entries in [lo, hi), at most `maxBytes` (at least one); throws CompactedError below the log. */
  slice(lo: Index, hi: Index, maxBytes: number): Entry[] {
    this.checkOutOfBounds(lo, hi);
    if (lo === hi) return [];
    const unstableOffset = this.unstable.offset;
    if (lo >= unstableOffset) return limitSize(this.unstable.slice(lo, hi), maxBytes);
    const cut = Math.min(hi, unstableOffset);
    const stored = this.storage.entries(lo, cut, maxBytes);
    // Storage stopped early (size limit), or the range ends before the unstable tail.
    if (stored.length < cut - lo || hi <= unstableOffset) return stored;
    const size = entriesSizeBytes(stored);
    if (size >= maxBytes) return stored;
    const tail = limitSize(this.unstable.slice(unstableOffset, hi), maxBytes - size);
    // limitSize keeps one entry even when it alone exceeds the rest of the budget.
    if (tail.length === 1 && size + entriesSizeBytes(tail) > maxBytes) return stored;
    const out = stored.slice();
    for (let i = 0; i < tail.length; i++) out.push(tail[i]!);
    return out;
  }

  private checkOutOfBounds(lo: Index, hi: Index): void {
    assert(lo <= hi, `invalid slice ${lo} > ${hi}`);
    const first = this.firstIndex();
    if (lo < first) throw new CompactedError(lo);
    const last = this.lastIndex();
    assert(hi <= last + 1, `slice[${lo},${hi}) out of bound [${first},${last}]`);
  }

  /** Commits (term, index) if it is in this log and newer than the commit index. */
  maybeCommit(index: Index, term: Term, requireTermMatch = true): boolean {
    if (index > this.committed && (!requireTermMatch || this.zeroTermOnOutOfBounds(index) === term)) {
      this.commitTo(index);
      return true;
    }
    return false;
  }

  /** Raises the commit index (never lowers it). */
  commitTo(index: Index): void {
    if (index <= this.committed) return;
    assert(index <= this.lastIndex(), `tocommit(${index}) is out of range [lastIndex(${this.lastIndex()})]. Was the raft log corrupted, truncated, or lost?`);
    this.committed = index;
  }

  /** Committed entries up to `index` were handed out for applying (`bytes` of them). */
  acceptApplying(index: Index, bytes: number): void {
    assert(index <= this.committed, `applying(${index}) beyond committed(${this.committed})`);
    this.applying = index;
    this.applyingBytes += bytes;
  }

  /** The application applied up to `index` (`bytes` of the applying budget are released). */
  appliedTo(index: Index, bytes: number): void {
    assert(index <= this.committed && index >= this.applied, `applied(${index}) is out of range [prevApplied(${this.applied}), committed(${this.committed})]`);
    this.applied = index;
    if (this.applying < index) this.applying = index;
    this.applyingBytes = bytes > this.applyingBytes ? 0 : this.applyingBytes - bytes;
  }

  stableTo(index: Index, term: Term): void {
    this.unstable.stableTo(index, term);
  }

  stableSnapTo(index: Index): void {
    this.unstable.stableSnapTo(index);
  }

  acceptUnstable(): void {
    this.unstable.acceptInProgress();
  }

  /** Replaces the log with a snapshot received from the leader. */
  restore(snapshot: Snapshot): void {
    this.committed = snapshot.metadata.index;
    this.unstable.restore(snapshot);
  }
}
