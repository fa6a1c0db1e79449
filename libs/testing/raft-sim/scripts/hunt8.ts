import { CHAOS_PROFILE, runSimulation, withOverrides } from '@ward/testing/raft-sim';
const maxSeeds = Number(process.argv[2] ?? 50);
const mutated = process.argv[3] !== 'baseline';
const profile = withOverrides(CHAOS_PROFILE, {
  ticks: 5000,
  nodes: Number(process.env.NODES ?? 3),
  network: { ...CHAOS_PROFILE.network, dropRate: Number(process.env.DROP ?? 0.3) },
  mutations: mutated ? ['commit-prior-term-by-counting'] : [],
  raft: { ...CHAOS_PROFILE.raft, maxMessageBytes: 0 },
  crashes: { ...CHAOS_PROFILE.crashes, leaderProbability: 0.02, minUpTicks: 10, maxDownTicks: 80 },
});
const c0 = process.cpuUsage();
for (let seed = 1; seed <= maxSeeds; seed++) {
  const r = runSimulation(seed, profile, { stopAtFirstViolation: true });
  if (r.violations.length > 0 || r.linearizability === 'illegal') {
    console.log('seed', seed, r.violations[0]?.kind, r.violations[0]?.detail);
    if (mutated) break;
  }
}
const c = process.cpuUsage(c0);
console.log('cpu', ((c.user + c.system) / 1000).toFixed(0));
