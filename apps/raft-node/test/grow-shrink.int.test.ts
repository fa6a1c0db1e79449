// Growing a cluster of real processes from 3 to 5 members and shrinking it back to 3 under the
// Jepsen-style nemesis (kills, pauses, partitions, delays and cuts through the link proxies)
// while clients read, write and compare-and-set: the membership changes are nemesis steps taken
// between the faults (jepsen/membership.ts), the faults hit whichever members the cluster has at
// the time (learners catching up included), the history is checked linearizable, no acknowledged
// write is lost, and each removed member exits by itself, as etcd does.
import { describe, expect, it } from 'vitest';
import { buildRaftNodeBundle } from '@ward/testing/cluster';
import { describeReport, runJepsen } from './jepsen/run';

describe('3 -> 5 -> 3 members under the nemesis', () => {
  it('keeps a linearizable history and every acknowledged write while members are added, promoted and removed between faults', async () => {
    const seed = Number(process.env.WARD_JEPSEN_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const report = await runJepsen({ entry: buildRaftNodeBundle(), seed, faultSeconds: 30, clients: 6, keys: 6, keyGenerationMs: 10_000, maxCheckSteps: 50_000_000, maxCheckMs: 120_000, growShrink: true });
    console.log(describeReport(report));
    console.log(JSON.stringify(report.faults));
    const membership = report.membership!;
    expect(membership.stepsDone, 'every membership step done').toBe(membership.stepsPlanned);
    expect(membership.votersAtFive).toBe(5);
    expect(membership.finalMembers).toHaveLength(3);
    expect(membership.finalMembers).toEqual(membership.expectedMembers);
    // every fault kind struck while the cluster changed shape
    expect(Object.keys(report.faultCounts).sort()).toEqual(['cut', 'delay', 'kill', 'membership', 'partition', 'pause']);
    expect(membership.removedExits.map((e) => [e.exitedByItself, e.code])).toEqual([
      [true, 0],
      [true, 0],
    ]);
    expect(report.operations.ok).toBeGreaterThan(200);
    expect(report.check.verdict, report.explanation).toBe('ok');
    expect(report.missingFresh).toEqual([]);
    expect(report.acknowledgedFresh).toBeGreaterThan(20);
    expect(report.corruptedVerdict).toBe('illegal');
  }, 600_000);
});
