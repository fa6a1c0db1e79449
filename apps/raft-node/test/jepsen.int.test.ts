// The Jepsen-style run, short version for CI (about 30 s of faults). The long version is a script:
// WARD_JEPSEN_SECONDS=600 npx tsx apps/raft-node/test/jepsen/long-run.ts (see the README).
import { describe, expect, it } from 'vitest';
import { buildRaftNodeBundle } from '@ward/testing/cluster';
import { describeReport, runJepsen } from './jepsen/run';

describe('Jepsen-style run', () => {
  it('keeps a linearizable history and every acknowledged write through kills, pauses, partitions, delays and cuts', async () => {
    const seed = Number(process.env.WARD_JEPSEN_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const report = await runJepsen({ entry: buildRaftNodeBundle(), seed, faultSeconds: 30, clients: 6, keys: 6, keyGenerationMs: 10_000, maxCheckSteps: 50_000_000, maxCheckMs: 120_000 });
    console.log(describeReport(report));
    console.log(JSON.stringify(report.faults));
    expect(report.faults.length).toBeGreaterThanOrEqual(6);
    expect(Object.keys(report.faultCounts).sort()).toEqual(['cut', 'delay', 'kill', 'partition', 'pause']);
    expect(report.operations.ok).toBeGreaterThan(200);
    expect(report.check.verdict, report.explanation).toBe('ok');
    expect(report.missingFresh).toEqual([]);
    expect(report.corruptedVerdict).toBe('illegal');
  }, 600_000);
});
