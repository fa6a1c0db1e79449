import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Inflights } from './inflights';
import { VoteResult, jointVoteResult, majorityCommittedIndex, majorityVoteResult } from './quorum';

/** Brute force: the largest index that at least a majority acknowledged. */
function oracleCommitted(acked: number[]): number {
  if (acked.length === 0) return Number.POSITIVE_INFINITY;
  const quorum = Math.floor(acked.length / 2) + 1;
  let best = 0;
  for (const candidate of acked) if (acked.filter((a) => a >= candidate).length >= quorum) best = Math.max(best, candidate);
  return best;
}

describe('quorum', () => {
  it('majorityCommittedIndex equals a brute-force oracle (10,000 random configurations)', () => {
    const scratch: number[] = [];
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 50 }), { maxLength: 9 }), (acked) => {
        expect(majorityCommittedIndex(acked, scratch)).toBe(oracleCommitted(acked));
      }),
      { numRuns: 10_000, seed: 42 },
    );
  });

  it('majorityVoteResult: won at a majority of yes, lost when a majority is out of reach, else pending', () => {
    expect(majorityVoteResult([])).toBe(VoteResult.Won);
    expect(majorityVoteResult([true, true, undefined])).toBe(VoteResult.Won);
    expect(majorityVoteResult([true, false, undefined])).toBe(VoteResult.Pending);
    expect(majorityVoteResult([false, false, undefined])).toBe(VoteResult.Lost);
    expect(majorityVoteResult([true, true, false, false])).toBe(VoteResult.Lost);
    expect(majorityVoteResult([true, true, true, false])).toBe(VoteResult.Won);
  });

  it('a joint configuration needs both halves', () => {
    expect(jointVoteResult(VoteResult.Won, VoteResult.Won)).toBe(VoteResult.Won);
    expect(jointVoteResult(VoteResult.Won, VoteResult.Pending)).toBe(VoteResult.Pending);
    expect(jointVoteResult(VoteResult.Won, VoteResult.Lost)).toBe(VoteResult.Lost);
  });
});

describe('Inflights', () => {
  it('is a ring: fills to capacity, frees acknowledged messages in order, wraps around', () => {
    const inflights = new Inflights(4, 0);
    for (const index of [10, 20, 30, 40]) inflights.add(index, 1);
    expect(inflights.full()).toBe(true);
    expect(() => inflights.add(50, 1)).toThrow(/full/);
    inflights.freeLE(25);
    expect(inflights.size()).toBe(2);
    inflights.add(50, 1);
    inflights.add(60, 1);
    inflights.freeLE(55);
    expect(inflights.size()).toBe(1);
    inflights.freeLE(5);
    expect(inflights.size()).toBe(1);
    inflights.freeLE(60);
    expect(inflights.size()).toBe(0);
  });

  it('is full once the byte budget is reached', () => {
    const inflights = new Inflights(100, 1000);
    inflights.add(1, 600);
    expect(inflights.full()).toBe(false);
    inflights.add(2, 400);
    expect(inflights.full()).toBe(true);
    inflights.freeLE(1);
    expect([inflights.full(), inflights.sizeBytes()]).toEqual([false, 400]);
  });
});
