import { rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { WalClosedError, WalFailedError, WalQueueFullError, RecordTooLargeError } from './errors';
import { frameSizeBytes } from './frame';
import { fdatasync, fsyncDirectory, writeFully, writeFullySync } from './fs-io';
import type { WalHardState, WalRecord, WalSnapshotMarker } from './record';
import { encodeRecordPayload } from './record';
import { encodeFrames, payloadBytes, segmentHeaderFrames, type PendingFrame } from './segment-header';
import { formatSegmentName, parseSegmentName, type SegmentName } from './segment-name';
import { SegmentPipeline } from './segment-pipeline';
import { resolveWalOptions, type ResolvedWalOptions, type WalOptions } from './wal-options';
import { createFirstSegment, openTail, removeTempFiles, type ActiveSegment, type WalRepairReport } from './wal-open';
import { readWal } from './wal-read';
import type { WalReplayState } from './wal-replay';

/** Counters of the log's work since it was opened. */
export interface WalStats {
  /** Append calls accepted. */
  readonly appends: number;
  readonly recordsWritten: number;
  readonly bytesWritten: number;
  /** Write rounds: each takes everything queued (up to maxBatchBytes) and syncs at most once. */
  readonly batches: number;
  /** fdatasync calls on segment files, cuts included. */
  readonly fdatasyncs: number;
  readonly segmentCuts: number;
  readonly queuedBytes: number;
  readonly segmentCount: number;
}

export interface WalAppendOptions {
  /**
   * Wait for fdatasync before resolving (default true). Raft may skip it when only the commit
   * index changed; such records become durable with the next synced batch.
   */
  readonly sync?: boolean;
}

export interface WalOpenResult {
  readonly wal: Wal;
  /** The log's content at open; undefined for a log created just now. */
  readonly state: WalReplayState | undefined;
  readonly repairs: WalRepairReport;
}

/** Runs up to this size are written synchronously (see writeRun). */
const SYNC_WRITE_MAX_BYTES = 256 * 1024;

interface QueuedAppend {
  readonly frames: readonly PendingFrame[];
  readonly records: readonly WalRecord[];
  readonly bytes: number;
  readonly sync: boolean;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A write-ahead log of framed, chain-checksummed records in preallocated segment files, with
 * group commit: everything appended while a write + fdatasync is in flight goes into the next
 * write and is covered by ONE fdatasync. Records are written in the order `append` was called.
 */
export class Wal {
  private readonly pipeline: SegmentPipeline;
  private readonly segments: SegmentName[];
  private active: ActiveSegment;
  private crc: number;
  private lastEntryIndex: number;
  private lastHardState: WalHardState | undefined;
  private lastSnapshot: WalSnapshotMarker | undefined;
  private queue: QueuedAppend[] = [];
  private queuedBytes = 0;
  private unsyncedBytes = 0;
  private flushing: Promise<void> | undefined;
  private failure: WalFailedError | undefined;
  private closing: Promise<void> | undefined;
  private readonly counters = { appends: 0, recordsWritten: 0, bytesWritten: 0, batches: 0, fdatasyncs: 0, segmentCuts: 0 };

  private constructor(
    private readonly options: ResolvedWalOptions,
    init: { pipeline: SegmentPipeline; segments: SegmentName[]; active: ActiveSegment; crc: number; state: WalReplayState | undefined },
  ) {
    this.pipeline = init.pipeline;
    this.segments = init.segments;
    this.active = init.active;
    this.crc = init.crc;
    this.lastEntryIndex = init.state?.entries.at(-1)?.index ?? init.state?.baseIndex ?? 0;
    this.lastHardState = init.state?.hardState;
    this.lastSnapshot = init.state?.snapshots.at(-1);
  }

  /**
   * Opens the log in `options.dir`, creating it when the directory holds no segment. Verifies
   * every segment; cuts off a torn tail of the last one; throws WalCorruptError (file, offset) on
   * any other damage and MetadataMismatchError when the log belongs to someone else.
   */
  static async open(options: WalOptions): Promise<WalOpenResult> {
    const resolved = resolveWalOptions(options);
    const removedFiles = await removeTempFiles(resolved.dir);
    const read = await readWal({
      dir: resolved.dir,
      maxPayloadBytes: Math.max(resolved.maxRecordBytes, resolved.metadata.length),
      tornWindowBytes: resolved.tornWindowBytes,
      expectedMetadata: resolved.metadata,
    });
    const pipeline = new SegmentPipeline(resolved.dir, resolved.segmentSizeBytes, resolved.preallocation);
    if (read === undefined) {
      const { active, crc } = await createFirstSegment(resolved, pipeline);
      const wal = new Wal(resolved, { pipeline, segments: [active.segment], active, crc, state: undefined });
      return { wal, state: undefined, repairs: { removedFiles } };
    }
    const { active, crc, tornTail } = await openTail(resolved, read.tail, read.replay);
    pipeline.prepare();
    const wal = new Wal(resolved, { pipeline, segments: [...read.segments], active, crc, state: read.replay });
    return { wal, state: read.replay, repairs: { removedFiles, ...(tornTail === undefined ? {} : { tornTail }) } };
  }

  /**
   * Appends `records` in order. Resolves once they are written and, unless `sync` is false,
   * fdatasynced. Rejects with RecordTooLargeError, WalQueueFullError, WalClosedError, or
   * WalFailedError when the disk failed (the log then refuses everything: restart to recover).
   * Throws TypeError at once for malformed records (caller misuse). An entry's data is copied
   * when its batch is written, not before: it must not change until the append settles.
   */
  append(records: readonly WalRecord[], options: WalAppendOptions = {}): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.closing !== undefined) return Promise.reject(new WalClosedError());
    if (!Array.isArray(records)) throw new TypeError('Wal.append: records must be an array');
    if (records.length === 0) return Promise.resolve();
    const frames: PendingFrame[] = [];
    let bytes = 0;
    for (const record of records) {
      const frame = encodeRecordPayload(record);
      const size = payloadBytes(frame);
      if (size > this.options.maxRecordBytes) return Promise.reject(new RecordTooLargeError(size, this.options.maxRecordBytes, 'record payload'));
      frames.push(frame);
      bytes += frameSizeBytes(size);
    }
    if (bytes > this.options.maxBatchBytes) return Promise.reject(new RecordTooLargeError(bytes, this.options.maxBatchBytes, 'append'));
    if (this.queuedBytes + bytes > this.options.maxQueuedBytes) return Promise.reject(new WalQueueFullError(this.queuedBytes, this.options.maxQueuedBytes));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ frames, records, bytes, sync: options.sync ?? true, resolve, reject });
      this.queuedBytes += bytes;
      this.counters.appends++;
      this.flushing ??= this.flushLoop();
    });
  }

  /**
   * Deletes segments whose entries all precede `index` (never the one being written), oldest
   * first, then syncs the directory. Call it only after a snapshot covering `index - 1` and its
   * marker are durable. Returns the deleted file names.
   */
  async releaseTo(index: number): Promise<string[]> {
    if (!Number.isSafeInteger(index) || index < 0) throw new TypeError(`Wal.releaseTo: index must be a safe non-negative integer, got ${index}`);
    if (this.failure !== undefined) throw this.failure;
    if (this.closing !== undefined) throw new WalClosedError();
    let count = 0;
    while (count + 1 < this.segments.length && this.segments[count + 1]!.firstIndex <= index) count++;
    const released = this.segments.splice(0, count);
    for (const segment of released) await unlink(join(this.options.dir, segment.name));
    if (released.length > 0) await fsyncDirectory(this.options.dir);
    return released.map((segment) => segment.name);
  }

  /** Waits for queued appends, then closes the files. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.flushing !== undefined) await this.flushing;
      await this.active.handle.close().catch(() => undefined);
      await this.pipeline.close();
    })();
    return this.closing;
  }

  stats(): WalStats {
    return { ...this.counters, queuedBytes: this.queuedBytes, segmentCount: this.segments.length };
  }

  /**
   * The index the oldest retained segment was cut at: no entry below it is left unless written
   * again later (a conflict's rewrite), so a snapshot below `index - 1` is not continued by the log.
   */
  oldestSegmentFirstIndex(): number {
    return this.segments[0]!.firstIndex;
  }

  /** Names of the retained segment files, oldest first. */
  segmentNames(): string[] {
    return this.segments.map((segment) => segment.name);
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length > 0 && this.failure === undefined) {
        const batch = this.takeBatch();
        try {
          await this.writeBatch(batch);
        } catch (error) {
          this.fail(error, batch);
          return;
        }
        for (const append of batch) append.resolve();
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Everything queued, oldest first, up to maxBatchBytes (at least one append). */
  private takeBatch(): QueuedAppend[] {
    let bytes = 0;
    let count = 0;
    while (count < this.queue.length && (count === 0 || bytes + this.queue[count]!.bytes <= this.options.maxBatchBytes)) {
      bytes += this.queue[count]!.bytes;
      count++;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, count);
  }

  private async writeBatch(batch: readonly QueuedAppend[]): Promise<void> {
    let batchBytes = 0;
    let mustSync = false;
    for (const append of batch) {
      batchBytes += append.bytes;
      mustSync ||= append.sync;
    }
    // Bytes written since the last sync must stay within one batch: boot relies on it.
    mustSync ||= this.unsyncedBytes + batchBytes > this.options.maxBatchBytes;
    let run: PendingFrame[] = [];
    let runBytes = 0;
    let runData = 0;
    for (const append of batch) {
      for (let i = 0; i < append.frames.length; i++) {
        const frame = append.frames[i]!;
        const size = frameSizeBytes(payloadBytes(frame));
        const hasData = this.active.dataRecords > 0 || runData > 0;
        if (hasData && this.active.offset + runBytes + size > this.options.segmentSizeBytes) {
          await this.writeRun(run, runData);
          run = await this.cut();
          runBytes = run.reduce((sum, header) => sum + frameSizeBytes(payloadBytes(header)), 0);
          runData = 0;
        }
        this.noteRecord(append.records[i]!);
        run.push(frame);
        runBytes += size;
        runData++;
      }
    }
    await this.writeRun(run, runData);
    this.counters.batches++;
    if (mustSync) {
      await this.syncActive();
      this.unsyncedBytes = 0;
    } else {
      this.unsyncedBytes += batchBytes;
    }
  }

  /** Keeps what the next segment header repeats, and the index the next segment is named after. */
  private noteRecord(record: WalRecord): void {
    switch (record.kind) {
      case 'entry':
        this.lastEntryIndex = record.entry.index;
        break;
      case 'hardState':
        this.lastHardState = record.hardState;
        break;
      case 'snapshot':
        this.lastSnapshot = record.snapshot;
        if (record.snapshot.hardState !== undefined) this.lastHardState = record.snapshot.hardState;
        if (record.snapshot.restartsLog) this.lastEntryIndex = record.snapshot.index;
        break;
    }
  }

  /** Frames `run` after the current data of the active segment; `dataCount` of them are not header. */
  private async writeRun(run: readonly PendingFrame[], dataCount: number): Promise<void> {
    if (run.length === 0) return;
    const { bytes, crc } = encodeFrames(run, this.crc);
    const { handle, offset } = this.active;
    // Small runs are copied into the page cache on this thread (no thread-pool round trip on
    // every Ready); large ones go through the pool so the event loop is not held up.
    if (bytes.length <= SYNC_WRITE_MAX_BYTES) await this.io('write', async () => writeFullySync(handle, bytes, offset));
    else await this.io('write', () => writeFully(handle, bytes, offset));
    this.crc = crc;
    this.active.offset += bytes.length;
    this.active.dataRecords += dataCount;
    this.counters.recordsWritten += dataCount;
    this.counters.bytesWritten += bytes.length;
  }

  /**
   * Seals the active segment (synced), renames the prepared file into place and syncs the
   * directory. Returns the new segment's header records, to be written first.
   */
  private async cut(): Promise<PendingFrame[]> {
    await this.syncActive();
    const sealed = this.active;
    const prepared = await this.io('prepare segment', () => this.pipeline.take());
    const name = formatSegmentName(sealed.segment.seq + 1, this.lastEntryIndex + 1);
    await this.io('rename', () => rename(prepared.path, join(this.options.dir, name)));
    await this.io('directory sync', () => fsyncDirectory(this.options.dir));
    const segment = parseSegmentName(name)!;
    this.active = { segment, handle: prepared.handle, offset: 0, dataRecords: 0 };
    this.segments.push(segment);
    this.counters.segmentCuts++;
    await sealed.handle.close().catch(() => undefined);
    return segmentHeaderFrames(this.crc, this.options.metadata, this.lastSnapshot, this.lastHardState);
  }

  private async syncActive(): Promise<void> {
    const file = this.active.segment.name;
    const beforeSync = this.options.hooks.beforeSync;
    if (beforeSync !== undefined) await this.io('fdatasync', async () => beforeSync(file));
    const startedMs = performance.now();
    await this.io('fdatasync', () => fdatasync(this.active.handle));
    this.counters.fdatasyncs++;
    this.options.hooks.afterSync?.(file, performance.now() - startedMs);
  }

  private async io<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new WalFailedError(operation, this.active.segment.name, error);
    }
  }

  private fail(error: unknown, batch: readonly QueuedAppend[]): void {
    this.failure = error instanceof WalFailedError ? error : new WalFailedError('append', this.active.segment.name, error);
    const rejected = [...batch, ...this.queue];
    this.queue = [];
    this.queuedBytes = 0;
    for (const append of rejected) append.reject(this.failure);
    void this.active.handle.close().catch(() => undefined);
    void this.pipeline.close().catch(() => undefined);
  }
}
