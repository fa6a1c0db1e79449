import { join } from 'node:path';
import { SnapshotCorruptError, StateUnrecoverableError } from './errors';
import type { WalEntry, WalHardState } from './record';
import type { SnapshotPosition } from './snapshot-file';
import { SnapshotStore, type SnapshotFileInfo, type VerifiedSnapshot } from './snapshot-store';
import { Wal } from './wal';
import type { WalOptions } from './wal-options';
import type { WalRepairReport } from './wal-open';
import type { WalReplayState } from './wal-replay';

export interface RaftStorageOptions {
  /** Data directory: the log goes to `<dir>/wal`, snapshots to `<dir>/snap`. */
  readonly dir: string;
  /** Identity of this member's log; see WalOptions.metadata. */
  readonly metadata: Uint8Array;
  /** Log tuning (segment size, preallocation, limits, hooks). */
  readonly wal?: Omit<WalOptions, 'dir' | 'metadata'>;
  /** Largest snapshot written or loaded. Default MAX_SNAPSHOT_BYTES (@ward/raft/core). */
  readonly maxSnapshotBytes?: number;
  /**
   * Snapshot files kept after a new one is saved, at most. Default 2. An older one is kept only
   * while the log still continues it (see compact).
   */
  readonly retainSnapshots?: number;
  /**
   * Entries kept in the log behind a new snapshot, so a slightly lagging follower (or a fallback
   * to the previous snapshot) needs no snapshot transfer. Default 5,000 (etcd's catch-up tail).
   */
  readonly catchUpEntries?: number;
  /**
   * Bytes of entry data kept in the log behind a new snapshot at most (the catch-up tail ends at
   * whichever of this and `catchUpEntries` keeps less), so large entries do not make every boot
   * read a long tail. Default 64 MiB.
   */
  readonly catchUpBytes?: number;
}

/** The durable state rebuilt at boot. */
export interface RecoveredState {
  readonly metadata: Uint8Array;
  /** The newest usable snapshot, if any: verified on disk, its data read from the store in pieces. */
  readonly snapshot: VerifiedSnapshot | undefined;
  readonly hardState: WalHardState | undefined;
  /** The log after the snapshot: contiguous, starting at snapshot index + 1. */
  readonly entries: readonly WalEntry[];
}

/** What boot found and did. */
export interface BootReport {
  readonly wal: WalRepairReport;
  /** Snapshot files that failed verification, renamed to `<file>.broken`. */
  readonly brokenSnapshots: readonly { readonly file: string; readonly reason: string }[];
  /** Intact snapshot files not used: no marker in the log, or past the committed index. */
  readonly skippedSnapshots: readonly { readonly file: string; readonly reason: string }[];
  /** Temporary files of interrupted snapshot saves, removed. */
  readonly removedSnapshotTemps: readonly string[];
}

export const RAFT_STORAGE_DEFAULTS = Object.freeze({ retainSnapshots: 2, catchUpEntries: 5000, catchUpBytes: 64 * 1024 * 1024 });

/**
 * A member's durable storage: the write-ahead log plus snapshot files, and the boot routine that
 * rebuilds state from the newest usable snapshot and the log after it.
 */
export class RaftStorage {
  private constructor(
    readonly wal: Wal,
    readonly snapshots: SnapshotStore,
    private readonly retainSnapshots: number,
    private readonly catchUpEntries: number,
  ) {}

  /**
   * Opens (or creates) the storage. Throws WalCorruptError when the log is damaged anywhere but
   * its torn tail, and StateUnrecoverableError when snapshots and log cannot rebuild the state.
   */
  static async open(options: RaftStorageOptions): Promise<{ storage: RaftStorage; state: RecoveredState; report: BootReport }> {
    const retainSnapshots = options.retainSnapshots ?? RAFT_STORAGE_DEFAULTS.retainSnapshots;
    const catchUpEntries = options.catchUpEntries ?? RAFT_STORAGE_DEFAULTS.catchUpEntries;
    if (!Number.isSafeInteger(retainSnapshots) || retainSnapshots < 1) throw new TypeError(`retainSnapshots must be a positive integer, got ${retainSnapshots}`);
    if (!Number.isSafeInteger(catchUpEntries) || catchUpEntries < 0) throw new TypeError(`catchUpEntries must be a non-negative integer, got ${catchUpEntries}`);
    const { store, removedTempFiles } = await SnapshotStore.open({ dir: join(options.dir, 'snap'), ...(options.maxSnapshotBytes === undefined ? {} : { maxSnapshotBytes: options.maxSnapshotBytes }) });
    // The newest snapshot file is verified (read in pieces, checksummed) while the log is replayed:
    // at millions of keys both are hundreds of MB. It is used if the log vouches for it.
    const snapshots = await store.list();
    const newest = snapshots[0];
    const prefetch = newest === undefined ? undefined : { file: newest.file, verified: store.verify(newest) };
    prefetch?.verified.catch(() => undefined); // its error is met when (and if) it is used
    const opened = await Wal.open({ ...options.wal, dir: join(options.dir, 'wal'), metadata: options.metadata });
    try {
      const choice = await chooseSnapshot(store, snapshots, opened.state, prefetch);
      const entries = entriesAfter(opened.state, choice.snapshot);
      const state: RecoveredState = { metadata: options.metadata, snapshot: choice.snapshot, hardState: opened.state?.hardState, entries };
      const report: BootReport = { wal: opened.repairs, brokenSnapshots: choice.broken, skippedSnapshots: choice.skipped, removedSnapshotTemps: removedTempFiles };
      return { storage: new RaftStorage(opened.wal, store, retainSnapshots, catchUpEntries), state, report };
    } catch (error) {
      await opened.wal.close();
      throw error;
    }
  }

  /**
   * Persists a snapshot of the state machine taken at `index`: the file (atomically), then its
   * marker in the log (synced), then compaction behind it (compact: log segments wholly before
   * `index - catchUpEntries + 1`, then the snapshot files it no longer needs).
   * `restartsLog` is for a snapshot installed from the leader, which replaces the whole log; its
   * `hardState` (commit at least the snapshot's index) is then written in the same record.
   */
  async saveSnapshot(
    snapshot: SnapshotToSave,
    options: { restartsLog?: boolean; hardState?: WalHardState; keepFrom?: number } = {},
  ): Promise<{ releasedSegments: string[]; purgedSnapshots: string[] }> {
    await this.snapshots.save(snapshot, chunksOf(snapshot.data));
    return this.recordSnapshot(snapshot, options);
  }

  /** The part of saveSnapshot after the file: its marker in the log, then compaction behind it. */
  async recordSnapshot(
    position: SnapshotPosition,
    options: { restartsLog?: boolean; hardState?: WalHardState; keepFrom?: number } = {},
  ): Promise<{ releasedSegments: string[]; purgedSnapshots: string[] }> {
    const marker = { index: position.index, term: position.term, restartsLog: options.restartsLog ?? false };
    await this.wal.append([{ kind: 'snapshot', snapshot: options.hardState === undefined ? marker : { ...marker, hardState: options.hardState } }]);
    return this.compact(position, options.keepFrom);
  }

  /**
   * Releases log segments and old snapshot files behind a durable snapshot at `position`: the
   * segments wholly before `keepFrom` or before `index - catchUpEntries + 1`, whichever is later
   * (`keepFrom` shortens the catch-up tail, e.g. to bound its bytes; it never lengthens it), then
   * all but the newest `retainSnapshots` files and any older one the log no longer continues.
   */
  async compact(position: SnapshotPosition, keepFrom?: number): Promise<{ releasedSegments: string[]; purgedSnapshots: string[] }> {
    const byCount = position.index - this.catchUpEntries + 1;
    if (keepFrom !== undefined && (!Number.isSafeInteger(keepFrom) || keepFrom > position.index + 1)) throw new TypeError(`compact: keepFrom must be an integer at most ${position.index + 1}, got ${keepFrom}`);
    const releasedSegments = await this.wal.releaseTo(Math.max(0, byCount, keepFrom ?? 0));
    // An older file is a fallback for a damaged newest one only while the log still holds every
    // entry after it; once the log no longer reaches back to it (its catch-up tail is shorter than
    // the distance between snapshots, as at a large state), it is a whole state's copy for nothing.
    const purgedSnapshots = await this.snapshots.purge(this.retainSnapshots, this.wal.oldestSegmentFirstIndex() - 1);
    return { releasedSegments, purgedSnapshots };
  }

  close(): Promise<void> {
    return this.wal.close();
  }
}

/** Snapshot bytes written per step; the event loop runs between steps. */
export const SNAPSHOT_WRITE_CHUNK_BYTES = 4 * 1024 * 1024;

/** A snapshot file's position and its bytes, whole or as chunks in order (written uncopied). */
export interface SnapshotToSave extends SnapshotPosition {
  readonly data: Uint8Array | readonly Uint8Array[];
}

/** `data` in slices (views, no copies), so the file is written and checksummed a slice at a time. */
export async function* chunksOf(data: Uint8Array | readonly Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const chunk of data instanceof Uint8Array ? [data] : data) {
    for (let offset = 0; offset < chunk.length; offset += SNAPSHOT_WRITE_CHUNK_BYTES) {
      yield chunk.subarray(offset, Math.min(chunk.length, offset + SNAPSHOT_WRITE_CHUNK_BYTES));
    }
  }
}

interface SnapshotChoice {
  readonly snapshot: VerifiedSnapshot | undefined;
  readonly broken: { file: string; reason: string }[];
  readonly skipped: { file: string; reason: string }[];
}

/**
 * The newest snapshot that verifies, has a marker in the log, and is not past the committed index
 * (a snapshot the log does not vouch for is not trusted: the crash may have come between the
 * file and its marker). Files that fail verification are renamed `.broken` and reported.
 */
async function chooseSnapshot(
  store: SnapshotStore,
  snapshots: readonly SnapshotFileInfo[],
  log: WalReplayState | undefined,
  prefetch: { file: string; verified: Promise<VerifiedSnapshot> } | undefined,
): Promise<SnapshotChoice> {
  const broken: { file: string; reason: string }[] = [];
  const skipped: { file: string; reason: string }[] = [];
  for (const info of snapshots) {
    const unusable = whyUnusable(info, log);
    if (unusable !== undefined) {
      skipped.push({ file: info.file, reason: unusable });
      continue;
    }
    try {
      return { snapshot: await (info.file === prefetch?.file ? prefetch.verified : store.verify(info)), broken, skipped };
    } catch (error) {
      if (!(error instanceof SnapshotCorruptError)) throw error;
      await store.markBroken(info);
      broken.push({ file: info.file, reason: error.reason });
    }
  }
  return { snapshot: undefined, broken, skipped };
}

function whyUnusable(info: SnapshotFileInfo, log: WalReplayState | undefined): string | undefined {
  if (log === undefined || !log.snapshots.some((m) => m.index === info.index && m.term === info.term)) return 'no marker in the write-ahead log';
  const commit = log.hardState?.commit ?? 0;
  if (info.index > commit) return `index ${info.index} is past the committed index ${commit}`;
  return undefined;
}

/** The log after `snapshot`, checked to continue it without a gap. */
function entriesAfter(log: WalReplayState | undefined, snapshot: VerifiedSnapshot | undefined): WalEntry[] {
  const base = snapshot?.index ?? 0;
  const all = log?.entries ?? [];
  if (all.length === 0) {
    const restart = log?.baseIndex;
    if (restart !== undefined && restart > base) {
      throw new StateUnrecoverableError(`the log restarts after a snapshot at ${restart}, and no usable snapshot file covers it`);
    }
    return [];
  }
  if (all[0]!.index > base + 1) {
    throw new StateUnrecoverableError(`the log starts at entry ${all[0]!.index}, but the newest usable snapshot ends at ${base}`);
  }
  return all.filter((e) => e.index > base);
}
