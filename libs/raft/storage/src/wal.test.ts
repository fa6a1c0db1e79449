import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { hasCode } from '@ward/shared/errors';
import type { WalRecord } from './record';
import { entry, entryRecords, makeTempDir, segmentFiles, type TempDir } from './testing';
import { Wal } from './wal';
import type { WalOptions } from './wal-options';

const METADATA = new TextEncoder().encode('cluster=7;member=1');

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('wal');
});
afterEach(async () => {
  await dir.remove();
});

function options(extra: Partial<WalOptions> = {}): WalOptions {
  return { dir: dir.path, metadata: METADATA, segmentSizeBytes: 16 * 1024, maxRecordBytes: 2048, maxBatchBytes: 64 * 1024, ...extra };
}

describe('Wal round trip', () => {
  it('creates a log, and a reopened log yields every entry, the last hard state and markers', async () => {
    const created = await Wal.open(options());
    expect(created.state).toBeUndefined();
    const wal = created.wal;
    await wal.append(entryRecords(1, 100, 1, 100));
    await wal.append([{ kind: 'hardState', hardState: { term: 1, vote: 0xfedcba9876543210n, commit: 50 } }]);
    await wal.append([{ kind: 'snapshot', snapshot: { index: 40, term: 1, restartsLog: false } }]);
    await wal.append([...entryRecords(101, 300, 2, 100), { kind: 'hardState', hardState: { term: 2, vote: 3n, commit: 290 } }]);
    expect(wal.stats().segmentCuts).toBeGreaterThanOrEqual(2);
    await wal.close();

    const reopened = await Wal.open(options());
    const state = reopened.state!;
    expect(state.entries.map((e) => e.index)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(state.entries[150]).toEqual(entry(151, 2, 100));
    expect(state.entries[10]).toEqual(entry(11, 1, 100));
    expect(state.hardState).toEqual({ term: 2, vote: 3n, commit: 290 });
    expect(state.snapshots.at(-1)).toEqual({ index: 40, term: 1, restartsLog: false });
    expect(state.metadata).toEqual(METADATA);
    expect(reopened.repairs.tornTail).toBeUndefined();
    // Appending continues the chain: a second reopen still verifies.
    await reopened.wal.append(entryRecords(301, 310, 2));
    await reopened.wal.close();
    const third = await Wal.open(options());
    expect(third.state!.entries.at(-1)!.index).toBe(310);
    await third.wal.close();
  });

  it('replayed entries of sealed segments are views of the segment read; those of the last segment have bytes of their own', async () => {
    const { wal } = await Wal.open(options());
    await wal.append(entryRecords(1, 300, 1, 100));
    expect(wal.stats().segmentCuts).toBeGreaterThanOrEqual(2);
    await wal.close();
    const files = await segmentFiles(dir.path);
    const lastFirstIndex = parseInt(files.at(-1)!.replace('.wal', '').split('-')[1]!, 16);
    const reopened = await Wal.open(options());
    const entries = reopened.state!.entries;
    expect(entries.map((e) => e.index)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    for (const replayed of entries) {
      expect(replayed).toEqual(entry(replayed.index, 1, 100));
      // A view spans the segment's whole buffer; a copy holds just its data.
      const ownBytes = replayed.data.buffer.byteLength === replayed.data.length;
      expect([replayed.index, ownBytes]).toEqual([replayed.index, replayed.index >= lastFirstIndex]);
    }
    await reopened.wal.close();
  });

  it('names segments seq-firstIndex and preallocates them to the segment size', async () => {
    const { wal } = await Wal.open(options());
    await wal.append(entryRecords(1, 200, 1, 100));
    await wal.close();
    const files = await segmentFiles(dir.path);
    expect(files[0]).toBe('0000000000000000-0000000000000000.wal');
    expect(files.length).toBeGreaterThan(1);
    const [seq, first] = files[1]!.replace('.wal', '').split('-');
    expect(Number.parseInt(seq!, 16)).toBe(1);
    expect(Number.parseInt(first!, 16)).toBeGreaterThan(1);
    for (const file of files) expect((await stat(join(dir.path, file))).size).toBe(16 * 1024);
    // No prepared segment is left behind after close.
    expect((await readdir(dir.path)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('replays overwrites: entries rewritten at a lower index replace the suffix', async () => {
    const { wal } = await Wal.open(options());
    await wal.append(entryRecords(1, 10, 1));
    await wal.append(entryRecords(6, 8, 2));
    await wal.close();
    const { state, wal: reopened } = await Wal.open(options());
    expect(state!.entries.map((e) => [e.index, e.term])).toEqual([
      [1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 2], [7, 2], [8, 2],
    ]);
    await reopened.close();
  });

  it('a snapshot marker that restarts the log drops earlier entries', async () => {
    const { wal } = await Wal.open(options());
    await wal.append(entryRecords(1, 10, 1));
    await wal.append([{ kind: 'snapshot', snapshot: { index: 50, term: 3, restartsLog: true } }, ...entryRecords(51, 52, 3)]);
    await wal.close();
    const { state, wal: reopened } = await Wal.open(options());
    expect(state!.entries.map((e) => e.index)).toEqual([51, 52]);
    expect(state!.baseIndex).toBe(50);
    await reopened.close();
  });

  it('refuses a log created with other metadata', async () => {
    const { wal } = await Wal.open(options());
    await wal.close();
    const error = await Wal.open(options({ metadata: new TextEncoder().encode('cluster=8') })).catch((e: unknown) => e);
    expect(hasCode(error, 'ERR_STORAGE_METADATA_MISMATCH')).toBe(true);
  });
});

describe('Wal limits and lifecycle', () => {
  it('rejects a record over maxRecordBytes and an append over maxBatchBytes', async () => {
    const { wal } = await Wal.open(options());
    const big: WalRecord = { kind: 'entry', entry: { index: 1, term: 1, type: 0, data: new Uint8Array(4096) } };
    expect(hasCode(await wal.append([big]).catch((e: unknown) => e), 'ERR_STORAGE_RECORD_TOO_LARGE')).toBe(true);
    const many = entryRecords(1, 1000, 1, 100);
    expect(hasCode(await wal.append(many).catch((e: unknown) => e), 'ERR_STORAGE_RECORD_TOO_LARGE')).toBe(true);
    // Nothing of the rejected appends was written.
    await wal.append(entryRecords(1, 2, 1));
    await wal.close();
    const { state, wal: reopened } = await Wal.open(options());
    expect(state!.entries.map((e) => e.index)).toEqual([1, 2]);
    await reopened.close();
  });

  it('rejects appends beyond maxQueuedBytes without blocking, and accepts again once drained', async () => {
    const { wal } = await Wal.open(options({ maxBatchBytes: 8192, maxQueuedBytes: 8192 }));
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => wal.append(entryRecords(i + 1, i + 1, 1, 1000))));
    const rejected = results.filter((r) => r.status === 'rejected');
    expect(rejected.length).toBeGreaterThan(0);
    for (const r of rejected) expect(hasCode((r as PromiseRejectedResult).reason, 'ERR_STORAGE_WAL_QUEUE_FULL')).toBe(true);
    await expect(wal.append(entryRecords(1, 1, 1))).resolves.toBeUndefined();
    await wal.close();
  });

  it('rejects malformed records with TypeError', async () => {
    const { wal } = await Wal.open(options());
    expect(() => wal.append([{ kind: 'entry', entry: { index: -1, term: 1, type: 0, data: new Uint8Array() } }])).toThrow(TypeError);
    expect(() => wal.append([{ kind: 'hardState', hardState: { term: 1, vote: -1n, commit: 0 } }])).toThrow(TypeError);
    expect(() => wal.append([{ kind: 'bogus' } as unknown as WalRecord])).toThrow(TypeError);
    await wal.close();
  });

  it('close waits for queued appends; appends after close fail with ERR_STORAGE_WAL_CLOSED', async () => {
    const { wal } = await Wal.open(options());
    const pending = wal.append(entryRecords(1, 50, 1));
    const closed = wal.close();
    await expect(pending).resolves.toBeUndefined();
    await closed;
    expect(hasCode(await wal.append(entryRecords(51, 51, 1)).catch((e: unknown) => e), 'ERR_STORAGE_WAL_CLOSED')).toBe(true);
    const { state, wal: reopened } = await Wal.open(options());
    expect(state!.entries).toHaveLength(50);
    await reopened.close();
  });

  it('sync:false appends are written without an fdatasync of their own', async () => {
    const { wal } = await Wal.open(options());
    const before = wal.stats().fdatasyncs;
    await wal.append([{ kind: 'hardState', hardState: { term: 1, vote: 0n, commit: 1 } }], { sync: false });
    expect(wal.stats().fdatasyncs).toBe(before);
    await wal.append(entryRecords(1, 1, 1));
    expect(wal.stats().fdatasyncs).toBe(before + 1);
    await wal.close();
  });
});

describe('Wal.releaseTo', () => {
  it('deletes only segments whose entries all precede the index, keeping the tail readable', async () => {
    const { wal } = await Wal.open(options());
    for (let i = 0; i < 10; i++) await wal.append(entryRecords(i * 40 + 1, i * 40 + 40, 1, 100));
    const before = wal.segmentNames();
    expect(before.length).toBeGreaterThanOrEqual(4);
    await wal.append([{ kind: 'snapshot', snapshot: { index: 300, term: 1, restartsLog: false } }]);
    const released = await wal.releaseTo(250);
    expect(released.length).toBeGreaterThan(0);
    expect(wal.segmentNames()).toEqual(before.slice(released.length));
    await wal.close();
    const { state, wal: reopened } = await Wal.open(options());
    const indexes = state!.entries.map((e) => e.index);
    // Entries from 250 on are still there (and possibly some before, in the first kept segment).
    expect(indexes[0]!).toBeLessThanOrEqual(250);
    expect(indexes.at(-1)).toBe(400);
    expect(state!.snapshots.at(-1)!.index).toBe(300);
    await reopened.close();
  });

  it('never deletes the segment being written', async () => {
    const { wal } = await Wal.open(options());
    await wal.append(entryRecords(1, 10, 1));
    expect(await wal.releaseTo(1_000_000)).toEqual([]);
    expect(wal.segmentNames()).toHaveLength(1);
    await wal.close();
  });
});
