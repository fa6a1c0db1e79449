import { LATENCY_BUCKETS_SECONDS, type Metrics } from '@ward/platform/metrics';
import type { WalHooks } from './wal-options';

/**
 * WAL hooks that record every fdatasync in Prometheus: `wal_fdatasync_total` and
 * `wal_fdatasync_duration_seconds` (etcd watches the p99 of the latter; above ~10 ms the disk is
 * too slow for a member). `next` hooks, if given, run as well.
 */
export function walMetricsHooks(metrics: Metrics, next: WalHooks = {}): WalHooks {
  const syncs = metrics.counter({ name: 'wal_fdatasync_total', help: 'fdatasync calls on WAL segments.' });
  const seconds = metrics.histogram({ name: 'wal_fdatasync_duration_seconds', help: 'Duration of WAL fdatasyncs.', buckets: LATENCY_BUCKETS_SECONDS });
  return {
    ...(next.beforeSync === undefined ? {} : { beforeSync: next.beforeSync }),
    afterSync: (file, durationMs) => {
      syncs.inc();
      seconds.observe(durationMs / 1000);
      next.afterSync?.(file, durationMs);
    },
  };
}
