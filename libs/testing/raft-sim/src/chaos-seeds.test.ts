// CI: 200 seeds x 10,000 ticks of the chaos profile (5 nodes), every history linearizable.
import { CHAOS_PROFILE } from './profile';
import { describeSeedRun } from './test/ci-seeds';
import { describe, expect, it } from 'vitest';

describeSeedRun(CHAOS_PROFILE, 4, 50, { opsPerSeed: 500, crashesPerSeed: 50 });

describe('the CI chaos profile', () => {
  it('is the one the spec asks for (AC-3)', () => {
    expect(CHAOS_PROFILE).toMatchObject({ nodes: 5, ticks: 10_000, network: { dropRate: 0.2, duplicateRate: 0.05, minDelayTicks: 1, maxDelayTicks: 10 } });
    expect(CHAOS_PROFILE.crashes.probability).toBe(0.002);
    expect(CHAOS_PROFILE.network.partitions.startProbability).toBeGreaterThan(0);
    expect(CHAOS_PROFILE.mutations).toEqual([]);
  });
});
