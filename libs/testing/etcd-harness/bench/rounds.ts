// Rounds of a bench run (BENCH_ROUNDS): the same cases measured several times on two systems,
// reduced to one round per case without mixing figures of different rounds.
import type { LoadResult } from '../src/index';

/** One round's results of one system, by case name. */
export type Results = Map<string, LoadResult>;

/** Two systems' results of the same rounds, reduced to one round per case (see medianRounds). */
export interface Paired {
  readonly reference: Results;
  readonly other: Results;
  /** other/reference throughput in each round, by case name, in round order. */
  readonly ratios: ReadonlyMap<string, readonly number[]>;
}

/**
 * Per case, the round whose other/reference throughput ratio is the median (the lower of the two
 * middle ones for an even count), both systems' results taken from that round: figures measured
 * together, never mixed from different rounds.
 */
export function medianRounds(reference: readonly Results[], other: readonly Results[]): Paired {
  const paired = { reference: new Map() as Results, other: new Map() as Results, ratios: new Map<string, number[]>() };
  for (const name of reference[0]?.keys() ?? []) {
    const rounds = reference.map((results, round) => ({ round, ratio: (other[round]?.get(name)?.operationsPerSecond ?? Number.NaN) / results.get(name)!.operationsPerSecond }));
    const middle = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor((rounds.length - 1) / 2)]!.round;
    paired.reference.set(name, reference[middle]!.get(name)!);
    paired.other.set(name, other[middle]!.get(name)!);
    paired.ratios.set(name, rounds.map(({ ratio }) => ratio));
  }
  return paired;
}

