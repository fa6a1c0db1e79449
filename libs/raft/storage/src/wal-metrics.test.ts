import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '@ward/platform/metrics';
import { entryRecords, makeTempDir, type TempDir } from './testing';
import { Wal } from './wal';
import { walMetricsHooks } from './wal-metrics';

let dir: TempDir;
beforeEach(async () => {
  dir = await makeTempDir('wal-metrics');
});
afterEach(async () => {
  await dir.remove();
});

describe('walMetricsHooks', () => {
  it('counts every real fdatasync and records its duration', async () => {
    const metrics = createMetrics({ prefix: 'ward_', collectProcessMetrics: false });
    const { wal } = await Wal.open({ dir: dir.path, metadata: new Uint8Array(1), segmentSizeBytes: 64 * 1024, hooks: walMetricsHooks(metrics) });
    for (let i = 1; i <= 5; i++) await wal.append(entryRecords(i, i, 1));
    const syncs = wal.stats().fdatasyncs;
    await wal.close();
    const text = await metrics.render();
    expect(syncs).toBe(5);
    expect(text).toContain(`ward_wal_fdatasync_total ${syncs}`);
    expect(text).toContain(`ward_wal_fdatasync_duration_seconds_count ${syncs}`);
  });
});
