// The harness must fail when the algorithm is wrong (spec AC-9): every deliberately injected bug
// of @ward/raft/core is caught by a safety check or the linearizability checker within a bounded
// number of seeds, and the failing seed replays to the same failure.
import { afterAll, describe, expect, it } from 'vitest';
import type { RaftMutation } from '@ward/raft/core';
import { RAFT_MUTATIONS } from '@ward/raft/core';
import type { SimProfile } from './profile';
import { CHAOS_PROFILE, FIGURE8_PROFILE, MEMBERSHIP_CHURN_PROFILE, MEMBERSHIP_PROFILE, withOverrides } from './profile';
import type { SimResult } from './simulation';
import { runSimulation } from './simulation';
import { checkKvHistory } from './test/linearizability';
import { isSafetyViolation } from './violations';

/** Where each mutant is hunted, and the most seeds it may take (spec: at most 500). */
const HUNTS: Record<RaftMutation, { profile: SimProfile; maxSeeds: number }> = {
  'vote-twice-in-term': { profile: CHAOS_PROFILE, maxSeeds: 50 },
  'vote-ignores-log': { profile: CHAOS_PROFILE, maxSeeds: 50 },
  'self-ack-before-persist': { profile: CHAOS_PROFILE, maxSeeds: 50 },
  'skip-sync-on-vote': { profile: CHAOS_PROFILE, maxSeeds: 50 },
  'skip-prev-log-term-check': { profile: CHAOS_PROFILE, maxSeeds: 100 },
  'read-index-without-heartbeat': { profile: CHAOS_PROFILE, maxSeeds: 100 },
  'accept-stale-term-append': { profile: CHAOS_PROFILE, maxSeeds: 300 },
  // Figure 8 needs leaders dying while they catch followers up one entry at a time.
  'commit-prior-term-by-counting': { profile: FIGURE8_PROFILE, maxSeeds: 300 },
  // Membership bugs need membership changes; two changes in flight need an operator that races.
  'conf-change-counted-before-applied': { profile: MEMBERSHIP_PROFILE, maxSeeds: 100 },
  'two-conf-changes-in-flight': { profile: MEMBERSHIP_CHURN_PROFILE, maxSeeds: 200 },
  'learner-vote-counted': { profile: MEMBERSHIP_PROFILE, maxSeeds: 100 },
};

/** What caught a run: its first safety violation, or a non-linearizable history. */
function caughtBy(r: SimResult): string | undefined {
  const first = r.violations.find(isSafetyViolation);
  if (first !== undefined) return first.kind;
  return r.linearizability === 'illegal' ? 'not-linearizable' : undefined;
}

const table: string[] = [];

describe('injected bugs are caught by the simulator', () => {
  afterAll(() => console.log(`[raft-sim] mutants:\n${table.join('\n')}`));

  for (const mutation of RAFT_MUTATIONS) {
    const { profile, maxSeeds } = HUNTS[mutation];
    it(`${mutation} (${profile.name} profile, within ${maxSeeds} seeds)`, () => {
      const mutated = withOverrides(profile, { mutations: [mutation] });
      let caught: { seed: number; by: string; result: SimResult } | undefined;
      for (let seed = 1; seed <= maxSeeds && caught === undefined; seed++) {
        const result = runSimulation(seed, mutated, { stopAtFirstViolation: true, checkHistory: checkKvHistory });
        const by = caughtBy(result);
        if (by !== undefined) caught = { seed, by, result };
      }
      expect(caught, `${mutation} escaped ${maxSeeds} seeds`).toBeDefined();
      const replay = runSimulation(caught!.seed, mutated, { stopAtFirstViolation: true, checkHistory: checkKvHistory });
      expect(replay.traceHash).toBe(caught!.result.traceHash);
      expect(replay.violations[0]).toEqual(caught!.result.violations[0]);
      table.push(`  ${mutation.padEnd(30)} caught at seed ${String(caught!.seed).padStart(3)} of ${maxSeeds} by ${caught!.by}`);
    }, 15 * 60_000);
  }

  it('the linearizability checker alone catches stale reads (read-index-without-heartbeat)', () => {
    const mutated = withOverrides(CHAOS_PROFILE, { mutations: ['read-index-without-heartbeat'] });
    let seed = 1;
    for (; seed <= 100; seed++) {
      const result = runSimulation(seed, mutated, { linearizabilityOnlyForReads: true, checkHistory: checkKvHistory });
      if (result.linearizability === 'illegal') break;
      expect(result.violations.filter(isSafetyViolation)).toEqual([]);
    }
    expect(seed).toBeLessThanOrEqual(100);
    table.push(`  ${'read-index-without-heartbeat'.padEnd(30)} caught at seed ${String(seed).padStart(3)} of 100 by the linearizability checker alone`);
  }, 15 * 60_000);

  it('a change counted before it is applied loses acknowledged writes: the history is not linearizable', () => {
    // Besides the durability check (which catches it first), the end-to-end effect is visible.
    const mutated = withOverrides(MEMBERSHIP_PROFILE, { mutations: ['conf-change-counted-before-applied'] });
    let seed = 1;
    for (; seed <= 60; seed++) if (runSimulation(seed, mutated, { checkHistory: checkKvHistory }).linearizability === 'illegal') break;
    expect(seed).toBeLessThanOrEqual(60);
    table.push(`  ${'conf-change-counted-before-applied'.padEnd(30)} history not linearizable at seed ${String(seed).padStart(3)} of 60`);
  }, 15 * 60_000);

  it('two changes in flight break safety itself, not only the one-change rule', () => {
    const mutated = withOverrides(MEMBERSHIP_CHURN_PROFILE, { mutations: ['two-conf-changes-in-flight'] });
    // Seeds are trajectories: a change to the core's messages moves where a hunt succeeds (seed 9
    // before followers stopped answering the commit broadcast, 120 since).
    const maxSeeds = 400;
    let found: { seed: number; kind: string } | undefined;
    for (let seed = 1; seed <= maxSeeds && found === undefined; seed++) {
      const r = runSimulation(seed, mutated, { checkHistory: checkKvHistory });
      const v = r.violations.find((x) => isSafetyViolation(x) && x.kind !== 'conf-changes-in-flight');
      if (v !== undefined) found = { seed, kind: v.kind };
      else if (r.linearizability === 'illegal') found = { seed, kind: 'not-linearizable' };
    }
    expect(found, `no safety violation beyond the one-change rule within ${maxSeeds} seeds`).toBeDefined();
    table.push(`  ${'two-conf-changes-in-flight'.padEnd(30)} also ${found!.kind} at seed ${String(found!.seed).padStart(3)} of ${maxSeeds}`);
  }, 15 * 60_000);

  it('the unmutated core passes the same hunts (the catches are the bugs, not the harness)', () => {
    for (const profile of [CHAOS_PROFILE, FIGURE8_PROFILE, MEMBERSHIP_PROFILE, MEMBERSHIP_CHURN_PROFILE]) {
      for (let seed = 1; seed <= 5; seed++) {
        const result = runSimulation(seed, withOverrides(profile, { ticks: 3_000 }), { stopAtFirstViolation: true, checkHistory: checkKvHistory });
        expect(result.linearizability).toBe('ok');
        expect({ profile: profile.name, seed, violations: result.violations }).toEqual({ profile: profile.name, seed, violations: [] });
      }
    }
  }, 15 * 60_000);
});
