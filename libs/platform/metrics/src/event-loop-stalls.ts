import { monitorEventLoopDelay } from 'node:perf_hooks';
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
 * gauge.
 */
export function watchEventLoopStalls(metrics: Metrics): EventLoopStalls {
  const histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_PROBE_RESOLUTION_MS });
  histogram.enable();
  metrics.gauge({
    name: 'event_loop_longest_stall_seconds',
    help: `Longest event-loop delay since the process started serving (probe resolution ${EVENT_LOOP_PROBE_RESOLUTION_MS} ms).`,
    collect: (gauge) => gauge.set(histogram.max / 1e9),
  });
  return { reset: () => histogram.reset(), disable: () => histogram.disable() };
}
