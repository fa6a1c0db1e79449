import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { WalCorruptError } from './errors';
import { entryRecords, frameOffsets, makeTempDir, mutateFile, segmentFiles, type TempDir } from './testing';
import { Wal } from './wal';
import type { WalOptions } from './wal-options';

const METADATA = new TextEncoder().encode('corrupt');

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('wal-corrupt');
});
afterEach(async () => {
  await dir.remove();
});

function options(): WalOptions {
  return { dir: dir.path, metadata: METADATA, segmentSizeBytes: 32 * 1024, maxRecordBytes: 4096, maxBatchBytes: 8 * 1024 };
}

/** A log of several segments, entries of 300 bytes written 5 per append. */
async function writeLog(entryCount: number): Promise<string[]> {
  const { wal } = await Wal.open(options());
  for (let i = 1; i <= entryCount; i += 5) await wal.append(entryRecords(i, Math.min(i + 4, entryCount), 1, 300));
  await wal.close();
  return segmentFiles(dir.path);
}

async function framesOf(file: string): Promise<number[]> {
  return frameOffsets(new Uint8Array(await readFile(join(dir.path, file))));
}

async function openError(): Promise<WalCorruptError> {
  const error = await Wal.open(options()).then(
    async (opened) => {
      await opened.wal.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WalCorruptError);
  const corrupt = error as WalCorruptError;
  expect(corrupt.code).toBe('ERR_STORAGE_WAL_CORRUPT');
  expect(corrupt.message).toContain(corrupt.file);
  expect(corrupt.message).toContain(`byte offset ${corrupt.offset}`);
  return corrupt;
}

describe('corruption refuses to start, naming file and offset', () => {
  it('a flipped byte in the middle of the last segment', async () => {
    const files = await writeLog(400);
    const last = files.at(-1)!;
    const frames = await framesOf(last);
    const victim = frames[Math.floor(frames.length / 2)]!;
    await mutateFile(join(dir.path, last), (bytes) => {
      bytes[victim + 40]! ^= 0x10;
      return bytes;
    });
    const error = await openError();
    expect(error).toMatchObject({ file: last, offset: victim });
    expect(error.reason).toContain('checksum');
  });

  it('a flipped byte in the LAST record of the last segment is corruption, not a torn write', async () => {
    const files = await writeLog(400);
    const last = files.at(-1)!;
    const victim = (await framesOf(last)).at(-1)!;
    await mutateFile(join(dir.path, last), (bytes) => {
      bytes[victim + 20]! ^= 0x01;
      return bytes;
    });
    expect(await openError()).toMatchObject({ file: last, offset: victim });
  });

  it('a flipped byte in a sealed earlier segment', async () => {
    const files = await writeLog(400);
    expect(files.length).toBeGreaterThanOrEqual(3);
    const sealed = files[1]!;
    const victim = (await framesOf(sealed))[5]!;
    await mutateFile(join(dir.path, sealed), (bytes) => {
      bytes[victim + 100]! ^= 0x80;
      return bytes;
    });
    expect(await openError()).toMatchObject({ file: sealed, offset: victim });
  });

  it('a flipped bit in a length word', async () => {
    const files = await writeLog(100);
    const last = files.at(-1)!;
    const victim = (await framesOf(last))[3]!;
    await mutateFile(join(dir.path, last), (bytes) => {
      bytes[victim]! ^= 0x04;
      return bytes;
    });
    const error = await openError();
    expect(error).toMatchObject({ file: last, offset: victim });
    expect(error.reason).toContain('length word');
  });

  it('a zeroed sector in the middle of the last segment, with more data after it than one write', async () => {
    const files = await writeLog(85);
    expect(files).toHaveLength(1);
    const last = files.at(-1)!;
    const frames = await framesOf(last);
    // Pick a record that spans a sector boundary and has > maxBatchBytes of data after it.
    const victimIndex = frames.findIndex((start, i) => i > 2 && frames.at(-1)! - start > 10 * 1024 && Math.floor(start / 512) !== Math.floor((frames[i + 1]! - 1) / 512));
    expect(victimIndex).toBeGreaterThan(0);
    const victim = frames[victimIndex]!;
    const sectorEnd = (Math.floor(victim / 512) + 1) * 512;
    await mutateFile(join(dir.path, last), (bytes) => bytes.fill(0, sectorEnd, frames[victimIndex + 1]!));
    const error = await openError();
    expect(error).toMatchObject({ file: last, offset: victim });
    expect(error.reason).toContain('not a torn tail');
  });

  it('a sealed segment truncated in the middle of a record', async () => {
    const files = await writeLog(400);
    const sealed = files[0]!;
    const frames = await framesOf(sealed);
    await truncate(join(dir.path, sealed), frames.at(-1)! + 12);
    expect(await openError()).toMatchObject({ file: sealed, offset: frames.at(-1)! });
  });

  it('records lost from the end of a sealed segment break the chain into the next one', async () => {
    const files = await writeLog(400);
    const frames = await framesOf(files[0]!);
    await mutateFile(join(dir.path, files[0]!), (bytes) => bytes.fill(0, frames.at(-2)!));
    const error = await openError();
    expect(error).toMatchObject({ file: files[1]!, offset: 0 });
    expect(error.reason).toContain('chain');
  });

  it('a missing segment in the middle', async () => {
    const files = await writeLog(400);
    await unlink(join(dir.path, files[1]!));
    expect(await openError()).toMatchObject({ file: files[2]!, offset: 0 });
  });

  it('a byte flipped inside the zero space after a sealed segment', async () => {
    const files = await writeLog(400);
    const sealed = files[0]!;
    const size = (await readFile(join(dir.path, sealed))).length;
    await mutateFile(join(dir.path, sealed), (bytes) => {
      bytes[size - 3] = 7;
      return bytes;
    });
    expect(await openError()).toMatchObject({ file: sealed, offset: size - 3 });
  });
});
