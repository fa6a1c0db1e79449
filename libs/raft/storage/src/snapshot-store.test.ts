import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasCode } from '@ward/shared/errors';
import { SnapshotCorruptError } from './errors';
import { SNAPSHOT_HEADER_BYTES } from './snapshot-file';
import { SnapshotStore } from './snapshot-store';
import { makeTempDir, mutateFile, type TempDir } from './testing';

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('snap');
});
afterEach(async () => {
  await dir.remove();
});

const bytes = (length: number, seed: number): Uint8Array => Uint8Array.from({ length }, (_, i) => (i * seed + 3) & 0xff);

async function* chunked(data: Uint8Array, chunkBytes: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < data.length; i += chunkBytes) yield data.subarray(i, i + chunkBytes);
}

describe('SnapshotStore', () => {
  it('saves atomically under <term>-<index>.snap and loads the same bytes back', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path });
    const data = bytes(100_000, 7);
    const info = await store.save({ index: 0x1234, term: 5 }, data);
    expect(info.file).toBe('0000000000000005-0000000000001234.snap');
    expect(await readdir(dir.path)).toEqual([info.file]);
    const loaded = await store.load(info);
    expect(loaded).toEqual({ index: 0x1234, term: 5, data });
  });

  it('accepts the data as a stream of chunks', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path });
    const data = bytes(300_001, 11);
    const info = await store.save({ index: 9, term: 2 }, chunked(data, 65_536));
    expect((await store.load(info)).data).toEqual(data);
  });

  it('streams the data after a skipped head in bounded pieces, checking the checksum once it has read it all', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path });
    const data = bytes(10_000, 11);
    const info = await store.save({ index: 9, term: 2 }, data);
    const read = async (skip: number, piece: number): Promise<{ total: number; pieces: Uint8Array[] }> => {
      const { totalBytes, pieces } = await store.readData({ index: 9, term: 2 }, skip, piece);
      const got: Uint8Array[] = [];
      for await (const p of pieces) got.push(p);
      return { total: totalBytes, pieces: got };
    };
    for (const [skip, piece] of [[0, 4096], [100, 4096], [5000, 777], [10_000, 1024]] as const) {
      const { total, pieces } = await read(skip, piece);
      expect(total).toBe(10_000 - skip);
      expect(pieces.every((p) => p.length > 0 && p.length <= piece)).toBe(true);
      expect(Buffer.concat(pieces).equals(Buffer.from(data.subarray(skip)))).toBe(true);
    }
    // A flipped byte anywhere in the data fails the stream at its end, before the last piece.
    await mutateFile(join(dir.path, info.file), (file) => {
      file[SNAPSHOT_HEADER_BYTES + 50]! ^= 1;
      return file;
    });
    const received: Uint8Array[] = [];
    const failed = (async () => {
      const { pieces } = await store.readData({ index: 9, term: 2 }, 0, 4096);
      for await (const p of pieces) received.push(p);
    })();
    await expect(failed).rejects.toThrow(/checksum mismatch/);
    expect(received.reduce((sum, p) => sum + p.length, 0)).toBeLessThan(10_000);
    // No such file, or a skip past the data: refused at once.
    await expect(store.readData({ index: 10, term: 2 }, 0)).rejects.toThrow();
    await expect(store.readData({ index: 9, term: 2 }, 10_001)).rejects.toThrow(SnapshotCorruptError);
  });

  it('lists newest first by index, then term', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path });
    await store.save({ index: 10, term: 1 }, bytes(10, 1));
    await store.save({ index: 30, term: 2 }, bytes(10, 2));
    await store.save({ index: 20, term: 3 }, bytes(10, 3));
    expect((await store.list()).map((s) => s.index)).toEqual([30, 20, 10]);
    expect(await store.purge(2)).toEqual(['0000000000000001-000000000000000a.snap']);
    expect((await store.list()).map((s) => s.index)).toEqual([30, 20]);
    // An older file below `olderFrom` goes even within `keep`; the newest never does.
    expect(await store.purge(2, 41)).toEqual(['0000000000000003-0000000000000014.snap']);
    expect((await store.list()).map((s) => s.index)).toEqual([30]);
  });

  it('a crash mid-save leaves only a temp file: the old snapshot stays, the temp file is removed at open', async () => {
    const first = await SnapshotStore.open({ dir: dir.path });
    const old = await first.store.save({ index: 10, term: 1 }, bytes(5000, 3));
    // The process died while writing the next snapshot: a partial temp file remains.
    await writeFile(join(dir.path, '0000000000000002-0000000000000014.snap.tmp'), bytes(777, 9));
    const reopened = await SnapshotStore.open({ dir: dir.path });
    expect(reopened.removedTempFiles).toEqual(['0000000000000002-0000000000000014.snap.tmp']);
    expect(await reopened.store.list()).toEqual([old]);
    expect((await reopened.store.load(old)).data).toEqual(bytes(5000, 3));
  });

  it('detects a flipped byte, a truncation, a wrong name and a foreign file', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path });
    const damaged = [
      { mutate: (b: Uint8Array) => ((b[SNAPSHOT_HEADER_BYTES + 500]! ^= 1), b), reason: 'checksum mismatch' },
      { mutate: (b: Uint8Array) => b.subarray(0, b.length - 1), reason: 'data bytes' },
      { mutate: (b: Uint8Array) => ((b[17]! ^= 4), b), reason: 'header unlike the file name' }, // a bit of the index
      { mutate: (b: Uint8Array) => Uint8Array.of(...b, 0), reason: 'file holds 2001' },
      { mutate: (b: Uint8Array) => ((b[0] = 0x58), b), reason: 'magic' },
    ];
    for (let i = 0; i < damaged.length; i++) {
      const info = await store.save({ index: 100 + i, term: 1 }, bytes(2000, 5));
      await mutateFile(join(dir.path, info.file), damaged[i]!.mutate);
      const error = await store.load(info).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnapshotCorruptError);
      expect((error as SnapshotCorruptError).file).toBe(info.file);
      expect((error as SnapshotCorruptError).reason).toContain(damaged[i]!.reason);
    }
    // A valid file under the wrong name is refused too.
    const info = await store.save({ index: 7, term: 1 }, bytes(10, 1));
    const error = await store.load({ ...info, index: 8 }).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_STORAGE_SNAPSHOT_CORRUPT')).toBe(true);
  });

  it('refuses data over maxSnapshotBytes and leaves nothing behind', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path, maxSnapshotBytes: 1000 });
    const error = await store.save({ index: 1, term: 1 }, chunked(bytes(1500, 1), 400)).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_STORAGE_SNAPSHOT_TOO_LARGE')).toBe(true);
    expect(await readdir(dir.path)).toEqual([]);
  });

  it('receives a snapshot as it arrives into a file that is no snapshot until adopted', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path, maxSnapshotBytes: 10_000 });
    const data = bytes(5000, 3);
    const receipt = await store.receive({ index: 40, term: 2 });
    await expect(store.receive({ index: 40, term: 2 })).rejects.toThrow(/already being received/);
    for (let i = 0; i < data.length; i += 1500) await receipt.write(data.subarray(i, i + 1500));
    await receipt.finish();
    expect(await store.list()).toEqual([]);
    // A second one, given up half-way, and a third, finished but never adopted.
    const abandoned = await store.receive({ index: 30, term: 2 });
    await abandoned.write(bytes(100, 1));
    await abandoned.abort();
    const stale = await store.receive({ index: 20, term: 2 });
    await stale.write(bytes(10, 1));
    await stale.finish();
    const later = await store.receive({ index: 45, term: 2 });
    await later.write(bytes(10, 1));
    await later.finish();
    expect((await readdir(dir.path)).sort()).toEqual(['0000000000000002-0000000000000014.snap.recv', '0000000000000002-0000000000000028.snap.recv', '0000000000000002-000000000000002d.snap.recv']);
    // Adopted: a snapshot like a saved one; the stale receipt goes, the later one stays.
    const info = await store.adopt({ index: 40, term: 2 });
    expect((await readdir(dir.path)).sort()).toEqual([info.file, '0000000000000002-000000000000002d.snap.recv']);
    expect((await store.load(info)).data).toEqual(data);
    await store.adopt({ index: 45, term: 2 });
    await store.purge(1);
    expect(await readdir(dir.path)).toEqual(['0000000000000002-000000000000002d.snap']);
    await expect(store.adopt({ index: 20, term: 2 })).rejects.toThrow(/ENOENT/);
    // Over the bound: refused, its file removed; a boot removes a receipt's leftovers.
    const large = await store.receive({ index: 50, term: 2 });
    await large.write(bytes(9000, 1));
    await expect(large.write(bytes(2000, 1))).rejects.toMatchObject({ code: 'ERR_STORAGE_SNAPSHOT_TOO_LARGE' });
    expect(await readdir(dir.path)).toEqual(['0000000000000002-000000000000002d.snap']);
    const left = await store.receive({ index: 60, term: 2 });
    await left.write(bytes(10, 1));
    const { removedTempFiles } = await SnapshotStore.open({ dir: dir.path });
    expect(removedTempFiles).toEqual(['0000000000000002-000000000000003c.snap.recv']);
    expect(await readdir(dir.path)).toEqual(['0000000000000002-000000000000002d.snap']);
    await left.abort();
  });

  it('markBroken renames a file out of the way', async () => {
    const { store } = await SnapshotStore.open({ dir: dir.path });
    const info = await store.save({ index: 1, term: 1 }, bytes(10, 1));
    expect(await store.markBroken(info)).toBe(`${info.file}.broken`);
    expect(await store.list()).toEqual([]);
  });
});
