import type { SimProfile } from './profile';
import type { RunOptions, SimResult } from './simulation';
import { runSimulation } from './simulation';
import type { Violation } from './violations';

/** A seed that failed: a violation, or a history that was not proven linearizable. */
export interface SeedFailure {
  readonly seed: number;
  readonly traceHash: string;
  readonly violations: readonly Violation[];
  readonly linearizability: SimResult['linearizability'];
}

/** What a batch of seeds produced. */
export interface SeedsSummary {
  readonly profile: string;
  readonly seeds: number;
  readonly ticksPerSeed: number;
  readonly failures: readonly SeedFailure[];
  /** Seeds whose history the checker proved linearizable. */
  readonly linearizable: number;
  readonly operations: { readonly completed: number; readonly unknown: number; readonly refused: number };
  readonly faults: { readonly crashes: number; readonly partitions: number; readonly clogs: number; readonly messagesLost: number; readonly leaderTransfers: number; readonly snapshotsInstalled: number };
  /** Membership changes over all seeds (zero without an operator). */
  readonly membership: { readonly proposed: number; readonly applied: number; readonly raced: number; readonly joint: number; readonly leaderRemovals: number; readonly demotions: number; readonly growShrinkCycles: number };
  /** Ticks from healing to a stable leader, per seed that got one. */
  readonly leaderAfterHealTicks: readonly number[];
  readonly convergedAfterHealTicks: readonly number[];
}

/** True when a run is clean: no violation and a linearizable history (when checked). */
export function isCleanRun(result: SimResult): boolean {
  return result.violations.length === 0 && (result.linearizability === 'ok' || result.linearizability === 'not-checked');
}

/** Runs every seed of `seeds` under `profile`, collecting failures and figures. */
export function runSeeds(profile: SimProfile, seeds: readonly number[], options: RunOptions = {}, onResult?: (r: SimResult) => void): SeedsSummary {
  const failures: SeedFailure[] = [];
  let linearizable = 0;
  const ops = { completed: 0, unknown: 0, refused: 0 };
  const faults = { crashes: 0, partitions: 0, clogs: 0, messagesLost: 0, leaderTransfers: 0, snapshotsInstalled: 0 };
  const membership = { proposed: 0, applied: 0, raced: 0, joint: 0, leaderRemovals: 0, demotions: 0, growShrinkCycles: 0 };
  const leaderAfterHealTicks: number[] = [];
  const convergedAfterHealTicks: number[] = [];
  for (const seed of seeds) {
    const r = runSimulation(seed, profile, options);
    onResult?.(r);
    if (r.linearizability === 'ok') linearizable++;
    if (!isCleanRun(r)) failures.push({ seed, traceHash: r.traceHash, violations: r.violations, linearizability: r.linearizability });
    ops.completed += r.stats.opsCompleted;
    ops.unknown += r.stats.opsUnknown;
    ops.refused += r.stats.opsRefused;
    faults.crashes += r.stats.crashes;
    faults.partitions += r.stats.partitions;
    faults.clogs += r.stats.clogs;
    faults.messagesLost += r.stats.messagesLost;
    faults.leaderTransfers += r.stats.leaderTransfers;
    faults.snapshotsInstalled += r.stats.snapshotsInstalled;
    membership.proposed += r.stats.confChangesProposed;
    membership.applied += r.stats.confChangesApplied;
    membership.raced += r.stats.confChangesRaced;
    membership.joint += r.stats.jointConfChanges;
    membership.leaderRemovals += r.stats.leaderRemovals;
    membership.demotions += r.stats.demotions;
    membership.growShrinkCycles += r.stats.growShrinkCycles;
    if (r.stats.leaderAfterHealTicks !== undefined) leaderAfterHealTicks.push(r.stats.leaderAfterHealTicks);
    if (r.stats.convergedAfterHealTicks !== undefined) convergedAfterHealTicks.push(r.stats.convergedAfterHealTicks);
  }
  return { profile: profile.name, seeds: seeds.length, ticksPerSeed: profile.ticks, failures, linearizable, operations: ops, faults, membership, leaderAfterHealTicks, convergedAfterHealTicks };
}

/** Seeds first..first+count-1. */
export function seedRange(first: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => first + i);
}
