// The CI chaos run (spec AC-3, AC-4), split over several test files so that vitest runs the
// slices in parallel: 5 nodes, 10,000 ticks per seed, 20% drops, duplicates, delays, clogs,
// symmetric and asymmetric partitions, crashes losing un-fsynced writes, slow disks.
import { describe, expect, it } from 'vitest';
import { CHAOS_PROFILE } from '../profile';
import { runSeeds, seedRange } from '../seed-runner';
import { checkKvHistory } from './linearizability';

/** Total CI seeds, over all slices. */
export const CI_SEEDS = 200;
export const CI_SLICES = 4;
/** About 20 s of CPU per slice; generous because CI machines are shared. */
const CI_SLICE_TIMEOUT_MS = 15 * 60_000;

export function describeChaosSlice(slice: number): void {
  const count = CI_SEEDS / CI_SLICES;
  const first = 1 + slice * count;
  describe(`chaos seeds ${first}..${first + count - 1} (${CHAOS_PROFILE.nodes} nodes x ${CHAOS_PROFILE.ticks} ticks)`, () => {
    it('has no safety or liveness violation and every client history is linearizable', () => {
      const startedMs = performance.now();
      const summary = runSeeds(CHAOS_PROFILE, seedRange(first, count), { checkHistory: checkKvHistory });
      const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
      const leaderTicks = [...summary.leaderAfterHealTicks].sort((a, b) => a - b);
      console.log(
        `[raft-sim] ${summary.profile}: seeds ${first}..${first + count - 1} x ${summary.ticksPerSeed} ticks in ${seconds}s; ` +
          `ops ${summary.operations.completed} ok / ${summary.operations.unknown} unknown / ${summary.operations.refused} refused; ` +
          `crashes ${summary.faults.crashes}, partitions ${summary.faults.partitions}, clogs ${summary.faults.clogs}; ` +
          `leader after heal: median ${leaderTicks[leaderTicks.length >> 1]} max ${leaderTicks[leaderTicks.length - 1]} ticks`,
      );
      expect(summary.failures).toEqual([]);
      expect(summary.linearizable).toBe(count);
      expect(summary.leaderAfterHealTicks.length).toBe(count);
      expect(summary.convergedAfterHealTicks.length).toBe(count);
      // AC-4: a leader within 3 election timeouts (2x randomized) in >= 99% of seeds.
      const within3 = summary.leaderAfterHealTicks.filter((t) => t <= 3 * 2 * CHAOS_PROFILE.raft.electionTimeoutTicks!).length;
      expect(within3 / count).toBeGreaterThanOrEqual(0.99);
      // The run must have exercised faults and served clients, or it proves little.
      expect(summary.faults.crashes).toBeGreaterThan(count * 20);
      expect(summary.faults.partitions).toBeGreaterThan(count * 10);
      expect(summary.operations.completed).toBeGreaterThan(count * 300);
    }, CI_SLICE_TIMEOUT_MS);
  });
}
