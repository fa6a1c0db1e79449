import { mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fdatasync, fsyncDirectory, fsyncFile, writeFully, writeZeros } from './fs-io';
import { encodeFrames, segmentHeaderFrames } from './segment-header';
import { formatSegmentName, parseSegmentName, type SegmentName } from './segment-name';
import { PREPARED_SEGMENT_SUFFIX, type SegmentPipeline } from './segment-pipeline';
import type { ResolvedWalOptions } from './wal-options';
import type { WalTail } from './wal-read';
import type { WalReplayState } from './wal-replay';

/** What opening the log changed on disk. */
export interface WalRepairReport {
  /** A torn tail that was cut off: where, why, and where the discarded bytes were saved. */
  readonly tornTail?: { readonly file: string; readonly offset: number; readonly reason: string; readonly discardedBytes: number; readonly savedAs?: string };
  /** Leftover temporary files (unfinished preallocations) that were removed. */
  readonly removedFiles: readonly string[];
}

/** The segment being appended to. */
export interface ActiveSegment {
  readonly segment: SegmentName;
  readonly handle: FileHandle;
  /** Where the next frame goes. */
  offset: number;
  /** Records after the segment header: a segment with none is never cut. */
  dataRecords: number;
}

/** Removes unfinished prepared segments (`*.wal.tmp`). */
export async function removeTempFiles(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const stale = (await readdir(dir)).filter((name) => name.endsWith(PREPARED_SEGMENT_SUFFIX));
  for (const name of stale) await unlink(join(dir, name));
  if (stale.length > 0) await fsyncDirectory(dir);
  return stale;
}

/**
 * Creates the first segment of a new log: header written and synced in a prepared file, then
 * renamed into place and the directory synced, so a crash leaves either no log or a whole header.
 */
export async function createFirstSegment(options: ResolvedWalOptions, pipeline: SegmentPipeline): Promise<{ active: ActiveSegment; crc: number }> {
  const prepared = await pipeline.take();
  const header = encodeFrames(segmentHeaderFrames(0, options.metadata, undefined, undefined), 0);
  await writeFully(prepared.handle, header.bytes, 0);
  await fdatasync(prepared.handle);
  const name = formatSegmentName(0, 0);
  await rename(prepared.path, join(options.dir, name));
  await fsyncDirectory(options.dir);
  return { active: { segment: parseSegmentName(name)!, handle: prepared.handle, offset: header.bytes.length, dataRecords: 0 }, crc: header.crc };
}

/**
 * Opens the last segment for appending, after cutting off a torn tail (the discarded bytes are
 * saved next to it as `<segment>.torn-<offset>` and zeroed in place, keeping the preallocation)
 * and rewriting the header if the crash came before it was complete.
 */
export async function openTail(
  options: ResolvedWalOptions,
  tail: WalTail,
  replay: WalReplayState | undefined,
): Promise<{ active: ActiveSegment; crc: number; tornTail: WalRepairReport['tornTail'] }> {
  const path = join(options.dir, tail.segment.name);
  const handle = await open(path, 'r+');
  try {
    const tornTail = tail.torn === undefined ? undefined : await cutTornTail(options.dir, tail, handle);
    if (tail.recordCount >= 2) {
      return { active: { segment: tail.segment, handle, offset: tail.endOffset, dataRecords: tail.recordCount - 2 }, crc: tail.crc, tornTail };
    }
    // The header itself was torn: the segment holds no data records, so write it afresh.
    const lastSnapshot = replay?.snapshots.at(-1);
    const header = encodeFrames(segmentHeaderFrames(tail.startCrc, options.metadata, lastSnapshot, replay?.hardState), tail.startCrc);
    await writeZeros(handle, 0, tail.endOffset);
    await writeFully(handle, header.bytes, 0);
    await fdatasync(handle);
    return { active: { segment: tail.segment, handle, offset: header.bytes.length, dataRecords: 0 }, crc: header.crc, tornTail };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

async function cutTornTail(dir: string, tail: WalTail, handle: FileHandle): Promise<WalRepairReport['tornTail']> {
  const torn = tail.torn!;
  const discardedBytes = torn.dataEnd - torn.offset;
  let savedAs: string | undefined;
  if (discardedBytes > 0) {
    const saved = new Uint8Array(discardedBytes);
    await handle.read(saved, 0, discardedBytes, torn.offset);
    savedAs = `${tail.segment.name}.torn-${torn.offset}`;
    const copy = await open(join(dir, savedAs), 'w');
    try {
      await writeFully(copy, saved, 0);
      await fsyncFile(copy);
    } finally {
      await copy.close();
    }
    await fsyncDirectory(dir);
  }
  await writeZeros(handle, torn.offset, torn.dataEnd);
  await fdatasync(handle);
  return { file: tail.segment.name, offset: torn.offset, reason: torn.reason, discardedBytes, ...(savedAs === undefined ? {} : { savedAs }) };
}
