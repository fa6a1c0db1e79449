import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import type { Metrics } from './registry';

/** Resolution of the event-loop stall probe. */
export const EVENT_LOOP_PROBE_RESOLUTION_MS = 10;

export interface EventLoopStalls {
  /** Forgets what was seen so far (e.g. the boot, which is not counted). */
  reset(): void;
  disable(): void;
}

/**
 * The longest the event loop was blocked since the last `reset`, from perf_hooks' delay histogram
 * (not reset by scrapes, unlike prom-client's lag gauges): the `event_loop_longest_stall_seconds`
 * gauge, and `event_loop_longest_stall_recent_seconds` since the previous scrape; and the longest
 * garbage-collection pause meanwhile, `gc_longest_pause_seconds` (`gc_longest_pause_recent_seconds`
 * since the previous scrape of that gauge).
 */
export function watchEventLoopStalls(metrics: Metrics): EventLoopStalls {
  const histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_PROBE_RESOLUTION_MS });
  histogram.enable();
  metrics.gauge({
    name: 'event_loop_longest_stall_seconds',
    help: `Longest event-loop delay since the process started serving (probe resolution ${EVENT_LOOP_PROBE_RESOLUTION_MS} ms).`,
    collect: (gauge) => gauge.set(histogram.max / 1e9),
  });
  // The same since the previous scrape (each scrape resets it): a scraper sees each interval's
  // longest stall, and a benchmark reads the longest stall of one phase by scraping at its start
  // and at its end.
  const recent = monitorEventLoopDelay({ resolution: EVENT_LOOP_PROBE_RESOLUTION_MS });
  recent.enable();
  metrics.gauge({
    name: 'event_loop_longest_stall_recent_seconds',
    help: `Longest event-loop delay since the previous scrape of this gauge (probe resolution ${EVENT_LOOP_PROBE_RESOLUTION_MS} ms).`,
    collect: (gauge) => {
      gauge.set(recent.max / 1e9);
      recent.reset();
    },
  });
  // Garbage collection is one cause of a stall: its longest pause, to tell it from the others.
  let longestGcMs = 0;
  let recentGcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      longestGcMs = Math.max(longestGcMs, entry.duration);
      recentGcMs = Math.max(recentGcMs, entry.duration);
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  metrics.gauge({
    name: 'gc_longest_pause_seconds',
    help: 'Longest garbage-collection pause since the process started serving.',
    collect: (gauge) => gauge.set(longestGcMs / 1000),
  });
  // Beside the recent stall: a phase's longest stall against its longest pause says whether the
  // collector made it.
  metrics.gauge({
    name: 'gc_longest_pause_recent_seconds',
    help: 'Longest garbage-collection pause since the previous scrape of this gauge.',
    collect: (gauge) => {
      gauge.set(recentGcMs / 1000);
      recentGcMs = 0;
    },
  });
  return {
    reset: () => {
      histogram.reset();
      recent.reset();
      longestGcMs = 0;
      recentGcMs = 0;
    },
    disable: () => {
      histogram.disable();
      recent.disable();
      gc.disconnect();
    },
  };
}
