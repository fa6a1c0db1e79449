import { describe, expect, it } from 'vitest';
import { GcPauses } from './event-loop-stalls';
import { LATENCY_BUCKETS_SECONDS, createMetrics, watchEventLoopStalls } from './index';

describe('Metrics', () => {
  it('renders prefixed counters, gauges and histograms with labels', async () => {
    const metrics = createMetrics({ prefix: 'ward_test_', defaultLabels: { member: '1' }, collectProcessMetrics: false });
    const requests = metrics.counter({ name: 'requests_total', help: 'requests', labelNames: ['method', 'code'] });
    const leader = metrics.gauge({ name: 'is_leader', help: 'leader' });
    const latency = metrics.histogram({ name: 'request_seconds', help: 'latency', buckets: LATENCY_BUCKETS_SECONDS });
    requests.inc({ method: 'Put', code: 'OK' });
    requests.inc({ method: 'Put', code: 'OK' }, 2);
    leader.set(1);
    latency.observe(0.003);
    const text = await metrics.render();
    expect(text).toContain('ward_test_requests_total{method="Put",code="OK",member="1"} 3');
    expect(text).toContain('ward_test_is_leader{member="1"} 1');
    expect(text).toContain('ward_test_request_seconds_bucket{le="0.005",member="1"} 1');
    expect(text).toContain('ward_test_request_seconds_bucket{le="0.0025",member="1"} 0');
    expect(metrics.contentType).toContain('text/plain');
  });

  it('keeps registries separate per instance and collects process metrics on request', async () => {
    const a = createMetrics({ prefix: 'a_', collectProcessMetrics: true });
    const b = createMetrics({ prefix: 'b_', collectProcessMetrics: false });
    a.counter({ name: 'x_total', help: 'x' }).inc();
    expect(await a.render()).toContain('a_process_cpu_user_seconds_total');
    expect(await b.render()).not.toContain('x_total');
  });

  it('rejects an invalid prefix', () => {
    expect(() => createMetrics({ prefix: 'bad-prefix', collectProcessMetrics: false })).toThrow(TypeError);
  });

  it('reports the longest event-loop stall until reset', async () => {
    const metrics = createMetrics({ prefix: 'ward_test_', collectProcessMetrics: false });
    const stalls = watchEventLoopStalls(metrics);
    const longest = async (): Promise<number> => Number(/^ward_test_event_loop_longest_stall_seconds (\S+)$/m.exec(await metrics.render())?.[1]);
    try {
      await new Promise((resolve) => setTimeout(resolve, 30));
      const blockedUntil = performance.now() + 150;
      while (performance.now() < blockedUntil) {
        // the event loop is blocked for 150 ms
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
      // The recent gauge saw it too, and each scrape starts it again: the next one is short.
      const recent = (text: string): number => Number(/^ward_test_event_loop_longest_stall_recent_seconds (\S+)$/m.exec(text)?.[1]);
      expect(recent(await metrics.render())).toBeGreaterThanOrEqual(0.12);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(recent(await metrics.render())).toBeLessThan(0.12);
      expect(await longest()).toBeGreaterThanOrEqual(0.12);
      stalls.reset();
      expect(await longest()).toBeLessThan(0.12);
      // Garbage made in plenty is collected: some pause is seen, and forgotten on reset.
      const gcPause = async (): Promise<number> => Number(/^ward_test_gc_longest_pause_seconds (\S+)$/m.exec(await metrics.render())?.[1]);
      let kept: unknown[] = [];
      for (let round = 0; round < 20; round++) kept = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `v${i}` }));
      expect(kept).toHaveLength(200_000);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const recentGc = (text: string): number => Number(/^ward_test_gc_longest_pause_recent_seconds (\S+)$/m.exec(text)?.[1]);
      const text = await metrics.render();
      expect(Number(/^ward_test_gc_longest_pause_seconds (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
      // The recent pause is the same pause, and each scrape starts it again.
      expect(recentGc(text)).toBe(Number(/^ward_test_gc_longest_pause_seconds (\S+)$/m.exec(text)?.[1]));
      // (A collection of the little garbage made since may be seen; not one as long as before.)
      expect(recentGc(await metrics.render())).toBeLessThan(recentGc(text));
      expect(await gcPause()).toBeGreaterThan(0);
      stalls.reset();
      expect(await gcPause()).toBe(0);
    } finally {
      stalls.disable();
    }
  });

  it('counts a garbage-collection pause by when it began, not by when Node delivers it', () => {
    const pauses = new GcPauses(1000);
    pauses.add(990, 50); // began before the window: a boot's pause delivered late
    expect(pauses.longestMs).toBe(0);
    pauses.add(1010, 20);
    expect(pauses.longestMs).toBe(20);
    // A scrape at 1100 takes the recent one; a pause that began before it, delivered after it,
    // counts for the longest and not again for the next interval.
    expect(pauses.takeRecentMs(1100)).toBe(20);
    pauses.add(1090, 40);
    pauses.add(1150, 5);
    expect(pauses.longestMs).toBe(40);
    expect(pauses.takeRecentMs(1200)).toBe(5);
    // A reset at 1300 forgets all of it, and a pause from before it delivered afterwards.
    pauses.reset(1300);
    pauses.add(1250, 70);
    expect(pauses.longestMs).toBe(0);
    expect(pauses.takeRecentMs(1400)).toBe(0);
    pauses.add(1350, 3);
    expect(pauses.longestMs).toBe(3);
  });
});
