// The CI chaos run (spec AC-3, AC-4): 5 nodes, 10,000 ticks per seed, 20% drops, duplicates,
// 1-10 tick delays, clogs, symmetric and asymmetric partitions, crashes losing un-fsynced writes,
// slow disks, leader transfers. Seeds run in slices (one test each, so progress is visible) and a
// final test checks the liveness figures over all of them.
import { describe, expect, it } from 'vitest';
import type { SimProfile } from '../profile';
import type { SeedsSummary } from '../seed-runner';
import { runSeeds, seedRange } from '../seed-runner';
import { checkKvHistory } from './linearizability';

/** About 15 s of CPU per chaos slice; generous because CI machines are shared. */
const SLICE_TIMEOUT_MS = 15 * 60_000;

function describeSummary(summary: SeedsSummary, first: number, seconds: string): string {
  const leaderTicks = [...summary.leaderAfterHealTicks].sort((a, b) => a - b);
  return (
    `[raft-sim] ${summary.profile}: seeds ${first}..${first + summary.seeds - 1} x ${summary.ticksPerSeed} ticks in ${seconds}s; ` +
    `ops ${summary.operations.completed} ok / ${summary.operations.unknown} unknown / ${summary.operations.refused} refused; ` +
    `crashes ${summary.faults.crashes}, partitions ${summary.faults.partitions}, clogs ${summary.faults.clogs}, ` +
    `transfers ${summary.faults.leaderTransfers}, snapshots installed ${summary.faults.snapshotsInstalled}; ` +
    `leader after heal: median ${leaderTicks[leaderTicks.length >> 1]} max ${leaderTicks[leaderTicks.length - 1]} ticks` +
    (summary.membership.proposed === 0
      ? ''
      : `; membership changes ${summary.membership.applied} applied / ${summary.membership.proposed} proposed (${summary.membership.raced} racing, ` +
        `${summary.membership.joint} joint, ${summary.membership.demotions} demotions, ${summary.membership.leaderRemovals} removing or demoting the leader), ` +
        `${summary.membership.growShrinkCycles} grow-shrink cycles`)
  );
}

/**
 * `slices` tests of `perSlice` seeds each, then one test over all of them: a stable leader within
 * 3 election timeouts (each up to 2x the configured ticks) after healing in >= 99% of seeds.
 */
export function describeSeedRun(
  profile: SimProfile,
  slices: number,
  perSlice: number,
  least: { opsPerSeed: number; crashesPerSeed: number; confChangesPerSeed?: number },
): void {
  const summaries: SeedsSummary[] = [];
  describe(`${profile.name}: ${slices * perSlice} seeds, ${profile.nodes} nodes x ${profile.ticks} ticks`, () => {
    for (let slice = 0; slice < slices; slice++) {
      const first = 1 + slice * perSlice;
      it(`seeds ${first}..${first + perSlice - 1}: no safety or liveness violation, every history linearizable`, () => {
        const startedMs = performance.now();
        const summary = runSeeds(profile, seedRange(first, perSlice), { checkHistory: checkKvHistory });
        console.log(describeSummary(summary, first, ((performance.now() - startedMs) / 1000).toFixed(1)));
        summaries.push(summary);
        expect(summary.failures).toEqual([]);
        expect(summary.linearizable).toBe(perSlice);
        expect(summary.convergedAfterHealTicks.length).toBe(perSlice);
        // The run must have exercised faults and served clients, or it proves little.
        expect(summary.faults.crashes).toBeGreaterThanOrEqual(perSlice * least.crashesPerSeed);
        expect(summary.operations.completed).toBeGreaterThanOrEqual(perSlice * least.opsPerSeed);
        if (least.confChangesPerSeed !== undefined) {
          // Membership runs must have changed the membership in every way they claim to.
          expect(summary.membership.applied).toBeGreaterThanOrEqual(perSlice * least.confChangesPerSeed);
          expect(summary.membership.joint).toBeGreaterThan(0);
          expect(summary.membership.leaderRemovals).toBeGreaterThan(0);
          expect(summary.membership.demotions).toBeGreaterThan(0);
          expect(summary.membership.raced).toBeGreaterThan(0);
          expect(summary.membership.growShrinkCycles).toBeGreaterThan(0);
        }
      }, SLICE_TIMEOUT_MS);
    }

    it('after healing, a leader within 3 election timeouts in >= 99% of all seeds (AC-4)', () => {
      expect(summaries.length).toBe(slices);
      const all = summaries.flatMap((s) => s.leaderAfterHealTicks);
      const bound = 3 * 2 * profile.raft.electionTimeoutTicks!;
      const within = all.filter((t) => t <= bound).length;
      console.log(`[raft-sim] ${profile.name}: leader within ${bound} ticks of healing in ${within}/${all.length} seeds`);
      expect(all.length).toBe(slices * perSlice);
      expect(within / all.length).toBeGreaterThanOrEqual(0.99);
    });
  });
}
