import { CHAOS_PROFILE, CALM_PROFILE, runSimulation, withOverrides } from '@ward/testing/raft-sim';
let profile = process.argv[2] === 'calm' ? CALM_PROFILE : CHAOS_PROFILE;
if (process.argv[4] === 'noenc') profile = withOverrides(profile, { network: { ...profile.network, encodeEveryNthMessage: 0 } });
const seeds = Number(process.argv[3] ?? 3);
const c0 = process.cpuUsage();
const w0 = performance.now();
for (let seed = 1; seed <= seeds; seed++) {
  const c1 = process.cpuUsage();
  const r = runSimulation(seed, profile, {});
  const c = process.cpuUsage(c1);
  console.log(seed, r.traceHash, r.linearizability, `cpu ${((c.user + c.system) / 1000).toFixed(0)}ms`, JSON.stringify(r.stats), r.violations.slice(0, 3));
}
const c = process.cpuUsage(c0);
console.log(`total cpu ${((c.user + c.system) / 1000).toFixed(0)}ms wall ${(performance.now() - w0).toFixed(0)}ms`);
