// CI: 200 seeds x 6,000 ticks of the membership profile (spec AC-11): an operator adds learners,
// promotes them, removes voters (the leader too), replaces members and grows 3 -> 5 -> 3, one
// step at a time or through joint configurations, sometimes racing a second change, under the
// chaos profile's faults. Every history linearizable, no safety or liveness violation.
import { describe, expect, it } from 'vitest';
import { MEMBERSHIP_PROFILE } from './profile';
import { describeSeedRun } from './test/ci-seeds';

describeSeedRun(MEMBERSHIP_PROFILE, 4, 50, { opsPerSeed: 200, crashesPerSeed: 40, confChangesPerSeed: 5 });

describe('the CI membership profile', () => {
  it('keeps the chaos faults and changes membership between 3 and 5 voters', () => {
    expect(MEMBERSHIP_PROFILE).toMatchObject({ nodes: 9, network: { dropRate: 0.2, duplicateRate: 0.05, minDelayTicks: 1, maxDelayTicks: 10 } });
    expect(MEMBERSHIP_PROFILE.crashes.probability).toBe(0.002);
    expect(MEMBERSHIP_PROFILE.membership).toMatchObject({ initialVoters: 3, minVoters: 3, maxVoters: 5 });
    expect(MEMBERSHIP_PROFILE.mutations).toEqual([]);
  });
});
