import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
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
  const pauses = new GcPauses(performance.now());
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.add(entry.startTime, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  metrics.gauge({
    name: 'gc_longest_pause_seconds',
    help: 'Longest garbage-collection pause since the process started serving.',
    collect: (gauge) => gauge.set(pauses.longestMs / 1000),
  });
  // Beside the recent stall: a phase's longest stall against its longest pause says whether the
  // collector made it.
  metrics.gauge({
    name: 'gc_longest_pause_recent_seconds',
    help: 'Longest garbage-collection pause since the previous scrape of this gauge.',
    collect: (gauge) => gauge.set(pauses.takeRecentMs(performance.now()) / 1000),
  });
  return {
    reset: () => {
      histogram.reset();
      recent.reset();
      pauses.reset(performance.now());
    },
    disable: () => {
      histogram.disable();
      recent.disable();
      gc.disconnect();
    },
  };
}

/**
 * The longest garbage-collection pause since a reset, and since the previous take of the recent
 * one. Node hands a pause to an observer a task or more after it happened (after a long
 * synchronous step, after all of it), so a pause counts by when it began: one that began before a
 * reset (the boot's) is not counted, nor, for the recent one, one that began before the previous
 * take. A pause that begins in the last moments before a take and is delivered after it is then in
 * neither interval of the recent one (it counts for the longest).
 */
export class GcPauses {
  private countedFromMs: number;
  private recentFromMs: number;
  private longest = 0;
  private recent = 0;

  constructor(nowMs: number) {
    this.countedFromMs = nowMs;
    this.recentFromMs = nowMs;
  }

  get longestMs(): number {
    return this.longest;
  }

  /** A pause that began at `startMs` (the clock of `performance.now()`) and lasted `durationMs`. */
  add(startMs: number, durationMs: number): void {
    if (startMs < this.countedFromMs) return;
    this.longest = Math.max(this.longest, durationMs);
    if (startMs >= this.recentFromMs) this.recent = Math.max(this.recent, durationMs);
  }

  /** The longest pause since the previous take; the next interval starts at `nowMs`. */
  takeRecentMs(nowMs: number): number {
    const recent = this.recent;
    this.recent = 0;
    this.recentFromMs = nowMs;
    return recent;
  }

  /** Forgets every pause so far and any that began before `nowMs`. */
  reset(nowMs: number): void {
    this.longest = 0;
    this.recent = 0;
    this.countedFromMs = nowMs;
    this.recentFromMs = nowMs;
  }
}
