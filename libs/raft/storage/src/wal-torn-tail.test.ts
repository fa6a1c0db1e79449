import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile, readdir, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { entryRecords, frameOffsets, makeTempDir, mutateFile, segmentFiles, type TempDir } from './testing';
import { Wal } from './wal';
import type { WalOptions } from './wal-options';

const METADATA = new TextEncoder().encode('torn');

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('wal-torn');
});
afterEach(async () => {
  await dir.remove();
});

function options(extra: Partial<WalOptions> = {}): WalOptions {
  return { dir: dir.path, metadata: METADATA, segmentSizeBytes: 64 * 1024, maxRecordBytes: 4096, maxBatchBytes: 16 * 1024, ...extra };
}

/** Writes entries 1..count (1,000-byte payloads, so the last frame spans two sectors) and closes. */
async function writeLog(count: number, extra: Partial<WalOptions> = {}): Promise<{ file: string; lastFrame: number; lastFrameEnd: number }> {
  const { wal } = await Wal.open(options(extra));
  for (let i = 1; i <= count; i++) await wal.append(entryRecords(i, i, 1, 1000));
  await wal.close();
  const files = await segmentFiles(dir.path);
  const file = files.at(-1)!;
  const bytes = new Uint8Array(await readFile(join(dir.path, file)));
  const offsets = frameOffsets(bytes);
  const lastFrame = offsets.at(-1)!;
  return { file, lastFrame, lastFrameEnd: lastFrame + ((8 + new DataView(bytes.buffer).getUint32(lastFrame, true) + 7) & ~7) };
}

/** Opens the damaged log, checks the repair, appends, and checks a second reopen sees everything. */
async function expectRepaired(expected: { file: string; offset: number; survivors: number; extra?: Partial<WalOptions> }): Promise<void> {
  const opened = await Wal.open(options(expected.extra));
  expect(opened.repairs.tornTail).toMatchObject({ file: expected.file, offset: expected.offset });
  expect(opened.state!.entries.map((e) => e.index)).toEqual(Array.from({ length: expected.survivors }, (_, i) => i + 1));
  const next = expected.survivors + 1;
  await opened.wal.append(entryRecords(next, next + 2, 2, 1000));
  await opened.wal.close();
  const again = await Wal.open(options(expected.extra));
  expect(again.repairs.tornTail).toBeUndefined();
  expect(again.state!.entries.map((e) => e.index)).toEqual(Array.from({ length: next + 2 }, (_, i) => i + 1));
  expect(again.state!.entries.at(-1)!.term).toBe(2);
  await again.wal.close();
}

describe('torn tail repair', () => {
  it('half a frame at the end of the file (truncated mid-record)', async () => {
    const { file, lastFrame, lastFrameEnd } = await writeLog(10);
    await truncate(join(dir.path, file), lastFrame + Math.floor((lastFrameEnd - lastFrame) / 2));
    await expectRepaired({ file, offset: lastFrame, survivors: 9 });
  });

  it('a partial length word at the end of the file', async () => {
    const { file, lastFrame } = await writeLog(10);
    await truncate(join(dir.path, file), lastFrame + 3);
    await expectRepaired({ file, offset: lastFrame, survivors: 9 });
  });

  it('a zero-filled tail: the second sector of the last record never reached the disk', async () => {
    const { file, lastFrame, lastFrameEnd } = await writeLog(10);
    const sectorEnd = (Math.floor(lastFrame / 512) + 1) * 512;
    expect(sectorEnd).toBeLessThan(lastFrameEnd);
    await mutateFile(join(dir.path, file), (bytes) => bytes.fill(0, sectorEnd, lastFrameEnd));
    await expectRepaired({ file, offset: lastFrame, survivors: 9 });
    const saved = (await readdir(dir.path)).filter((name) => name.startsWith(`${file}.torn-`));
    expect(saved).toEqual([`${file}.torn-${lastFrame}`]);
  });

  it('a lost first sector: a zero length word followed by the rest of the batch', async () => {
    const { file, lastFrame, lastFrameEnd } = await writeLog(10);
    const sectorEnd = (Math.floor(lastFrame / 512) + 1) * 512;
    await mutateFile(join(dir.path, file), (bytes) => bytes.fill(0, lastFrame, Math.min(sectorEnd, lastFrameEnd)));
    await expectRepaired({ file, offset: lastFrame, survivors: 9 });
  });

  it('a wholly zeroed last record is simply not there (no repair needed)', async () => {
    const { file, lastFrame, lastFrameEnd } = await writeLog(10);
    await mutateFile(join(dir.path, file), (bytes) => bytes.fill(0, lastFrame, lastFrameEnd));
    const opened = await Wal.open(options());
    expect(opened.repairs.tornTail).toBeUndefined();
    expect(opened.state!.entries).toHaveLength(9);
    await opened.wal.close();
  });

  it('a torn write without preallocation (file grows by appending)', async () => {
    const { file, lastFrame, lastFrameEnd } = await writeLog(10, { preallocation: 'none' });
    await truncate(join(dir.path, file), lastFrameEnd - 5);
    await expectRepaired({ file, offset: lastFrame, survivors: 9, extra: { preallocation: 'none' } });
  });

  it('a freshly cut segment whose header never reached the disk gets its header rewritten', async () => {
    const { wal } = await Wal.open(options());
    let index = 1;
    while (wal.segmentNames().length < 2) await wal.append(entryRecords(index, index++, 1, 1000));
    await wal.close();
    const files = await segmentFiles(dir.path);
    const newest = files.at(-1)!;
    // Everything in the new segment is lost: its header and the entry that triggered the cut.
    await mutateFile(join(dir.path, newest), (bytes) => bytes.fill(0));
    const opened = await Wal.open(options());
    expect(opened.repairs.tornTail).toBeUndefined();
    expect(opened.state!.entries).toHaveLength(index - 2);
    await opened.wal.append(entryRecords(index - 1, index + 1, 1, 1000));
    await opened.wal.close();
    const again = await Wal.open(options());
    expect(again.state!.entries.map((e) => e.index)).toEqual(Array.from({ length: index + 1 }, (_, i) => i + 1));
    await again.wal.close();
  });

  it('a new segment with only its checksum record (metadata torn) is repaired', async () => {
    const { wal } = await Wal.open(options());
    let index = 1;
    while (wal.segmentNames().length < 2) await wal.append(entryRecords(index, index++, 1, 1000));
    await wal.close();
    const newest = (await segmentFiles(dir.path)).at(-1)!;
    let metadataOffset = 0;
    await mutateFile(join(dir.path, newest), (bytes) => {
      const offsets = frameOffsets(bytes);
      metadataOffset = offsets[1]!;
      // The metadata record's sector is lost; what followed it in the same write survived.
      return bytes.fill(0, metadataOffset, offsets[2]!);
    });
    const opened = await Wal.open(options());
    expect(opened.repairs.tornTail).toMatchObject({ file: newest, offset: metadataOffset });
    expect(opened.state!.entries).toHaveLength(index - 2);
    await opened.wal.append(entryRecords(index - 1, index - 1, 1));
    await opened.wal.close();
    const again = await Wal.open(options());
    expect(again.state!.entries).toHaveLength(index - 1);
    await again.wal.close();
  });
});
