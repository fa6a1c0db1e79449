import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncFile, writeZeros } from './fs-io';
import type { Preallocation } from './wal-options';

/** A prepared, not yet named, segment file. */
export interface PreparedSegment {
  readonly path: string;
  readonly handle: FileHandle;
}

/** Name of the file the pipeline prepares; stale ones are removed when a log is opened. */
export const PREPARED_SEGMENT_SUFFIX = '.wal.tmp';

/**
 * Keeps the next segment file ready in the background (etcd's file pipeline): created, its space
 * reserved and fsynced, so that cutting a segment costs a rename instead of an allocation.
 */
export class SegmentPipeline {
  private pending: Promise<PreparedSegment> | undefined;
  private counter = 0;

  constructor(
    private readonly dir: string,
    private readonly sizeBytes: number,
    private readonly preallocation: Preallocation,
  ) {}

  /** Starts preparing a file unless one is already being prepared. */
  prepare(): void {
    if (this.pending !== undefined) return;
    const promise = this.create(join(this.dir, `next-${this.counter++}${PREPARED_SEGMENT_SUFFIX}`));
    // A failure is reported to whoever takes the file; never an unhandled rejection here.
    promise.catch(() => undefined);
    this.pending = promise;
  }

  /** The prepared file (waiting for it if needed); the next one starts preparing at once. */
  async take(): Promise<PreparedSegment> {
    this.prepare();
    const pending = this.pending!;
    this.pending = undefined;
    const prepared = await pending;
    this.prepare();
    return prepared;
  }

  /** Closes and removes a prepared file, if any. */
  async close(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    if (pending === undefined) return;
    const prepared = await pending.catch(() => undefined);
    if (prepared === undefined) return;
    await prepared.handle.close();
    await unlink(prepared.path).catch(() => undefined);
  }

  private async create(path: string): Promise<PreparedSegment> {
    const handle = await open(path, 'w+');
    try {
      if (this.preallocation === 'zeros') await writeZeros(handle, 0, this.sizeBytes);
      else if (this.preallocation === 'sparse') await handle.truncate(this.sizeBytes);
      await fsyncFile(handle);
      return { path, handle };
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw error;
    }
  }
}
