import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasCode } from '@ward/shared/errors';
import { RaftStorage, SNAPSHOT_WRITE_CHUNK_BYTES, type RaftStorageOptions } from './raft-storage';
import { encodeSnapshotHeader } from './snapshot-file';
import { entryRecords, makeTempDir, mutateFile, type TempDir } from './testing';
import { Wal } from './wal';

const METADATA = new TextEncoder().encode('member-1');

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('raft-storage');
});
afterEach(async () => {
  await dir.remove();
});

function options(extra: Partial<RaftStorageOptions> = {}): RaftStorageOptions {
  return { dir: dir.path, metadata: METADATA, wal: { segmentSizeBytes: 16 * 1024, maxRecordBytes: 2048, maxBatchBytes: 32 * 1024 }, catchUpEntries: 100, ...extra };
}

const stateData = (index: number): Uint8Array => new TextEncoder().encode(`state machine at ${index}`);

/** Writes entries 1..count and a hard state committing `commit`. */
async function writeEntries(storage: RaftStorage, from: number, to: number, commit: number): Promise<void> {
  for (let i = from; i <= to; i += 20) await storage.wal.append(entryRecords(i, Math.min(i + 19, to), 1, 64));
  await storage.wal.append([{ kind: 'hardState', hardState: { term: 1, vote: 1n, commit } }]);
}

describe('RaftStorage boot', () => {
  it('a fresh directory boots empty; a reopened one yields hard state and entries', async () => {
    const fresh = await RaftStorage.open(options());
    expect(fresh.state).toMatchObject({ snapshot: undefined, hardState: undefined, entries: [] });
    await writeEntries(fresh.storage, 1, 30, 25);
    await fresh.storage.close();
    const again = await RaftStorage.open(options());
    expect(again.state.hardState).toEqual({ term: 1, vote: 1n, commit: 25 });
    expect(again.state.entries.map((e) => e.index)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    await again.storage.close();
  });

  it('a snapshot saved as chunks reads back as the same bytes, slices larger than a write step included', async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 20, 20);
    const big = new Uint8Array(SNAPSHOT_WRITE_CHUNK_BYTES + 1000).map((_, i) => i % 251);
    const chunks = [Uint8Array.of(1, 2, 3), big, new Uint8Array(0), Uint8Array.of(9)];
    await storage.saveSnapshot({ index: 10, term: 1, data: chunks });
    await storage.close();
    const { storage: reopened, state } = await RaftStorage.open(options());
    expect(state.snapshot).toEqual({ index: 10, term: 1, dataBytes: Buffer.concat(chunks).length });
    expect(Buffer.from((await reopened.snapshots.load(state.snapshot!)).data).equals(Buffer.concat(chunks))).toBe(true);
    await reopened.close();
  });

  it('boot = newest snapshot + the log after it; compaction keeps a catch-up tail', async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 600, 600);
    const segmentsBefore = storage.wal.segmentNames().length;
    const compaction = await storage.saveSnapshot({ index: 500, term: 1, data: stateData(500) });
    expect(compaction.releasedSegments.length).toBeGreaterThan(0);
    expect(storage.wal.segmentNames().length).toBe(segmentsBefore - compaction.releasedSegments.length);
    await writeEntries(storage, 601, 650, 640);
    await storage.close();

    const { storage: reopened, state } = await RaftStorage.open(options());
    expect(state.snapshot).toEqual({ index: 500, term: 1, dataBytes: stateData(500).length });
    expect((await reopened.snapshots.load(state.snapshot!)).data).toEqual(stateData(500));
    expect(state.entries.map((e) => e.index)).toEqual(Array.from({ length: 150 }, (_, i) => 501 + i));
    expect(state.hardState!.commit).toBe(640);
    await reopened.close();
    // The log itself still holds the catch-up tail: entries from 500 - 100 + 1 = 401 on.
    const { wal, state: log } = await Wal.open({ dir: join(dir.path, 'wal'), metadata: METADATA, segmentSizeBytes: 16 * 1024, maxRecordBytes: 2048 });
    expect(log!.entries[0]!.index).toBeLessThanOrEqual(401);
    expect(log!.entries[0]!.index).toBeGreaterThan(1);
    await wal.close();
  });

  it('keeps only retainSnapshots snapshot files', async () => {
    const { storage } = await RaftStorage.open(options({ retainSnapshots: 2 }));
    await writeEntries(storage, 1, 300, 300);
    for (const index of [100, 200, 300]) await storage.saveSnapshot({ index, term: 1, data: stateData(index) });
    expect((await storage.snapshots.list()).map((s) => s.index)).toEqual([300, 200]);
    await storage.close();
  });

  it('keeps an older snapshot file only while the log still continues it', async () => {
    // A catch-up tail of 10 entries: once the log is released past the older snapshot, that file
    // could never be booted from and goes, whatever retainSnapshots allows.
    const { storage } = await RaftStorage.open(options({ retainSnapshots: 2, catchUpEntries: 10 }));
    await writeEntries(storage, 1, 600, 600);
    await storage.saveSnapshot({ index: 200, term: 1, data: stateData(200) });
    const kept = await storage.saveSnapshot({ index: 210, term: 1, data: stateData(210) });
    // The log still reaches back past 200 (released only up to 201): both files stay.
    expect(storage.wal.oldestSegmentFirstIndex()).toBeLessThanOrEqual(201);
    expect(kept.purgedSnapshots).toEqual([]);
    expect((await storage.snapshots.list()).map((s) => s.index)).toEqual([210, 200]);
    const far = await storage.saveSnapshot({ index: 590, term: 1, data: stateData(590) });
    expect(far.releasedSegments.length).toBeGreaterThan(0);
    expect(storage.wal.oldestSegmentFirstIndex()).toBeGreaterThan(211);
    expect((await storage.snapshots.list()).map((s) => s.index)).toEqual([590]);
    expect(far.purgedSnapshots).toHaveLength(2);
    await storage.close();
    // And it boots from the one it kept.
    const { storage: reopened, state } = await RaftStorage.open(options({ catchUpEntries: 10 }));
    expect(state.snapshot!.index).toBe(590);
    expect(state.entries.map((e) => e.index)).toEqual(Array.from({ length: 10 }, (_, i) => 591 + i));
    await reopened.close();
  });

  it('a broken newest snapshot is reported, renamed .broken, and the previous one is used', async () => {
    const { storage } = await RaftStorage.open(options({ catchUpEntries: 1000 }));
    await writeEntries(storage, 1, 300, 300);
    await storage.saveSnapshot({ index: 100, term: 1, data: stateData(100) });
    const newest = await storage.snapshots.save({ index: 200, term: 1 }, stateData(200));
    await storage.wal.append([{ kind: 'snapshot', snapshot: { index: 200, term: 1, restartsLog: false } }]);
    await storage.close();
    await mutateFile(join(dir.path, 'snap', newest.file), (b) => ((b[b.length - 2]! ^= 0xff), b));

    const { storage: reopened, state, report } = await RaftStorage.open(options({ catchUpEntries: 1000 }));
    expect(report.brokenSnapshots).toEqual([{ file: newest.file, reason: 'checksum mismatch' }]);
    expect(state.snapshot!.index).toBe(100);
    expect(state.entries[0]!.index).toBe(101);
    expect(state.entries.at(-1)!.index).toBe(300);
    expect(await readdir(join(dir.path, 'snap'))).toContain(`${newest.file}.broken`);
    await reopened.close();
  });

  it('a snapshot file without its marker in the log (crash before the marker) is skipped', async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 50, 50);
    await storage.snapshots.save({ index: 40, term: 1 }, stateData(40));
    await storage.close();
    const { storage: reopened, state, report } = await RaftStorage.open(options());
    expect(state.snapshot).toBeUndefined();
    expect(state.entries).toHaveLength(50);
    expect(report.skippedSnapshots).toEqual([{ file: '0000000000000001-0000000000000028.snap', reason: 'no marker in the write-ahead log' }]);
    await reopened.close();
  });

  it('a snapshot past the committed index is not trusted', async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 50, 30);
    await storage.saveSnapshot({ index: 45, term: 1, data: stateData(45) });
    await storage.close();
    const { storage: reopened, state, report } = await RaftStorage.open(options());
    expect(state.snapshot).toBeUndefined();
    expect(report.skippedSnapshots[0]!.reason).toContain('past the committed index');
    await reopened.close();
  });

  it('an installed snapshot restarts the log: boot yields it and only the entries after it', async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 20, 10);
    await storage.saveSnapshot({ index: 1000, term: 4, data: stateData(1000) }, { restartsLog: true });
    await storage.wal.append([...entryRecords(1001, 1005, 4), { kind: 'hardState', hardState: { term: 4, vote: 0n, commit: 1003 } }]);
    await storage.close();
    const { storage: reopened, state } = await RaftStorage.open(options());
    expect(state.snapshot!.index).toBe(1000);
    expect(state.entries.map((e) => e.index)).toEqual([1001, 1002, 1003, 1004, 1005]);
    await reopened.close();
  });

  it("an installed snapshot's hard state travels in its marker: nothing written after it is needed", async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 20, 10);
    await storage.saveSnapshot({ index: 800, term: 5, data: stateData(800) }, { restartsLog: true, hardState: { term: 5, vote: 2n, commit: 800 } });
    await storage.close();
    const { storage: reopened, state } = await RaftStorage.open(options());
    expect(state.snapshot!.index).toBe(800);
    expect(state.hardState).toEqual({ term: 5, vote: 2n, commit: 800 });
    expect(state.entries).toEqual([]);
    await reopened.close();
  });

  it('refuses to boot when the only snapshot covering a compacted log is broken', async () => {
    const { storage } = await RaftStorage.open(options({ retainSnapshots: 1 }));
    await writeEntries(storage, 1, 600, 600);
    await storage.saveSnapshot({ index: 550, term: 1, data: stateData(550) });
    await storage.close();
    const [file] = await readdir(join(dir.path, 'snap'));
    // Overwrite with a different but well-formed-looking header: verification fails.
    await writeFile(join(dir.path, 'snap', file!), encodeSnapshotHeader({ index: 550, term: 1 }, 10, 0));
    const error = await RaftStorage.open(options()).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_STORAGE_STATE_UNRECOVERABLE')).toBe(true);
  });

  it('refuses to boot on a corrupt log, naming file and offset', async () => {
    const { storage } = await RaftStorage.open(options());
    await writeEntries(storage, 1, 300, 300);
    const [first] = storage.wal.segmentNames();
    await storage.close();
    await mutateFile(join(dir.path, 'wal', first!), (b) => ((b[300]! ^= 1), b));
    const error = await RaftStorage.open(options()).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_STORAGE_WAL_CORRUPT')).toBe(true);
    expect(error).toMatchObject({ file: first });
  });
});
