import { describe, expect, it } from 'vitest';
import { CHAOS_PROFILE, MEMBERSHIP_PROFILE, withOverrides } from './profile';
import { runSimulation } from './simulation';

const SHORT = withOverrides(CHAOS_PROFILE, { ticks: 2_000 });

describe('determinism', () => {
  it('the same seed gives the same trace hash, history and statistics', () => {
    for (const seed of [1, 7, 123456789]) {
      const a = runSimulation(seed, SHORT);
      const b = runSimulation(seed, SHORT);
      expect(b.traceHash).toBe(a.traceHash);
      expect(b.stats).toEqual(a.stats);
      expect(b.history).toEqual(a.history);
    }
  });

  it('membership runs too: the same seed gives the same changes, trace hash and history', () => {
    const short = withOverrides(MEMBERSHIP_PROFILE, { ticks: 2_000 });
    for (const seed of [3, 11]) {
      const a = runSimulation(seed, short);
      const b = runSimulation(seed, short);
      expect(a.stats.confChangesApplied).toBeGreaterThan(0);
      expect(b.traceHash).toBe(a.traceHash);
      expect(b.stats).toEqual(a.stats);
      expect(b.history).toEqual(a.history);
    }
  });

  it('different seeds give different runs', () => {
    const hashes = new Set([1, 2, 3, 4, 5].map((seed) => runSimulation(seed, SHORT).traceHash));
    expect(hashes.size).toBe(5);
  });

  it('the trace hash covers behaviour: another profile with the same seed diverges', () => {
    const base = runSimulation(9, SHORT);
    const lossier = runSimulation(9, withOverrides(SHORT, { network: { ...SHORT.network, dropRate: 0.21 } }), {});
    expect(lossier.traceHash).not.toBe(base.traceHash);
  });
});
