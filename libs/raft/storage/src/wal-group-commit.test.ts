import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasCode } from '@ward/shared/errors';
import { entryRecord, entryRecords, makeTempDir, type TempDir } from './testing';
import { Wal } from './wal';
import type { WalHooks, WalOptions } from './wal-options';

const METADATA = new TextEncoder().encode('group-commit');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('wal-gc');
});
afterEach(async () => {
  await dir.remove();
});

function options(hooks: WalHooks, extra: Partial<WalOptions> = {}): WalOptions {
  return { dir: dir.path, metadata: METADATA, segmentSizeBytes: 4 * 1024 * 1024, preallocation: 'sparse', hooks, ...extra };
}

/** Counts real fdatasyncs through the hooks; `delayMs` models a slow disk before each one. */
function syncCounter(delayMs: number): { hooks: WalHooks; count: () => number } {
  let synced = 0;
  return {
    hooks: {
      beforeSync: delayMs > 0 ? () => sleep(delayMs) : undefined,
      afterSync: () => {
        synced++;
      },
    },
    count: () => synced,
  };
}

describe('Wal group commit', () => {
  it('1,000 concurrent appends during a 5 ms sync take at most 3 fdatasyncs, in call order', async () => {
    const counter = syncCounter(5);
    const { wal } = await Wal.open(options(counter.hooks));
    const startedMs = performance.now();
    await Promise.all(Array.from({ length: 1000 }, (_, i) => wal.append([entryRecord(i + 1, 1, 64)])));
    const burstMs = performance.now() - startedMs;
    const stats = wal.stats();
    expect(stats.fdatasyncs).toBe(counter.count());
    expect(stats.fdatasyncs).toBeLessThanOrEqual(3);
    expect(stats.fdatasyncs).toBeLessThanOrEqual(2 * Math.max(1, Math.ceil(burstMs / 5)));
    expect(stats.recordsWritten).toBe(1000);
    expect(stats.appends).toBe(1000);
    await wal.close();
    const reopened = await Wal.open(options({}));
    expect(reopened.state!.entries.map((e) => e.index)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    await reopened.wal.close();
  });

  it('everything appended while a sync is in flight goes into the next write and ONE fdatasync', async () => {
    let inFlight: Promise<void>[] = [];
    const opened: { wal?: Wal } = {};
    let first = true;
    const counter = syncCounter(0);
    const hooks: WalHooks = {
      beforeSync: async () => {
        if (!first) return;
        first = false;
        // 50 proposals arrive while the first batch's sync is running.
        inFlight = Array.from({ length: 50 }, (_, i) => opened.wal!.append(entryRecords(i * 2 + 2, i * 2 + 3, 1)));
        await sleep(5);
      },
      afterSync: counter.hooks.afterSync,
    };
    const { wal } = await Wal.open(options(hooks));
    opened.wal = wal;
    await wal.append([entryRecord(1, 1)]);
    await Promise.all(inFlight);
    expect(wal.stats().batches).toBe(2);
    expect(counter.count()).toBe(2);
    expect(wal.stats().recordsWritten).toBe(101);
    await wal.close();
  });

  it('concurrent appenders on a real disk share fdatasyncs (far fewer syncs than appends)', async () => {
    const counter = syncCounter(0);
    const { wal } = await Wal.open(options(counter.hooks));
    const appenders = 16;
    const perAppender = 40;
    let next = 1;
    // Each appender appends one record and waits for it, like a client waiting for its commit.
    // Indexes are taken at call time, so call order is index order.
    await Promise.all(
      Array.from({ length: appenders }, async () => {
        for (let i = 0; i < perAppender; i++) await wal.append([entryRecord(next++, 1, 128)]);
      }),
    );
    const appends = appenders * perAppender;
    expect(wal.stats().appends).toBe(appends);
    expect(counter.count()).toBe(wal.stats().fdatasyncs);
    expect(wal.stats().fdatasyncs).toBeLessThan(appends / 4);
    await wal.close();
  });

  it('bounds a batch by maxBatchBytes: a large burst is split into several writes', async () => {
    const counter = syncCounter(0);
    const { wal } = await Wal.open(options(counter.hooks, { maxRecordBytes: 8 * 1024, maxBatchBytes: 64 * 1024 }));
    await Promise.all(Array.from({ length: 64 }, (_, i) => wal.append([entryRecord(i + 1, 1, 4000)])));
    // 64 frames of ~4 KiB: at most ~15 fit in 64 KiB, so at least 5 batches.
    expect(wal.stats().batches).toBeGreaterThanOrEqual(5);
    expect(wal.stats().fdatasyncs).toBe(wal.stats().batches);
    await wal.close();
  });

  it('a failed sync rejects the batch and every later append; what was synced before survives', async () => {
    let failNext = false;
    const { wal } = await Wal.open(
      options({
        beforeSync: () => {
          if (failNext) throw new Error('injected EIO');
        },
      }),
    );
    await wal.append(entryRecords(1, 5, 1));
    failNext = true;
    const failed = await wal.append(entryRecords(6, 6, 1)).catch((e: unknown) => e);
    expect(hasCode(failed, 'ERR_STORAGE_WAL_FAILED')).toBe(true);
    expect(hasCode(await wal.append(entryRecords(7, 7, 1)).catch((e: unknown) => e), 'ERR_STORAGE_WAL_FAILED')).toBe(true);
    await wal.close();
    const reopened = await Wal.open(options({}));
    expect(reopened.state!.entries.slice(0, 5).map((e) => e.index)).toEqual([1, 2, 3, 4, 5]);
    await reopened.wal.close();
  });
});
