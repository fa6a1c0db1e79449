// The long Jepsen-style run, by hand:
//   WARD_JEPSEN_SECONDS=600 WARD_JEPSEN_SEED=42 npx tsx apps/raft-node/test/jepsen/long-run.ts
// Builds the raft-node bundle, runs the nemesis for WARD_JEPSEN_SECONDS (default 300), prints the
// report and exits non-zero when the history is not linearizable or an acknowledged write is missing.
// WARD_JEPSEN_GROW_SHRINK=1 also grows the cluster to 5 members and back to 3 between the first
// faults (as grow-shrink.int.test.ts does), and fails unless every step was done.
import { buildRaftNodeBundle } from '@ward/testing/cluster';
import { describeReport, runJepsen } from './run';

const seconds = Number(process.env.WARD_JEPSEN_SECONDS ?? 300);
const seed = Number(process.env.WARD_JEPSEN_SEED ?? Math.floor(Math.random() * 2 ** 31));
const clients = Number(process.env.WARD_JEPSEN_CLIENTS ?? 8);
const keys = Number(process.env.WARD_JEPSEN_KEYS ?? 8);
const growShrink = process.env.WARD_JEPSEN_GROW_SHRINK === '1';
const report = await runJepsen({ entry: buildRaftNodeBundle(), seed, faultSeconds: seconds, clients, keys, keyGenerationMs: 10_000, maxCheckSteps: 200_000_000, maxCheckMs: 30 * 60_000, growShrink });
console.log(describeReport(report));
for (const fault of report.faults) console.log(`  ${String(fault.atMs).padStart(7)} ms  ${fault.kind.padEnd(9)} member ${fault.member} for ${fault.durationMs} ms`);
if (report.check.verdict !== 'ok') console.log(report.explanation);
const membershipOk = report.membership === undefined || report.membership.stepsDone === report.membership.stepsPlanned;
process.exitCode = report.check.verdict === 'ok' && report.missingFresh.length === 0 && report.corruptedVerdict !== 'ok' && membershipOk ? 0 : 1;
