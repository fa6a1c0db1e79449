import { CHAOS_PROFILE, runSimulation } from '@ward/testing/raft-sim';
const from = Number(process.argv[2] ?? 1);
const to = Number(process.argv[3] ?? 20);
let bad = 0;
for (let seed = from; seed <= to; seed++) {
  const r = runSimulation(seed, CHAOS_PROFILE, {});
  if (r.violations.length > 0 || r.linearizability !== 'ok') {
    bad++;
    console.log(seed, r.linearizability, JSON.stringify(r.violations.slice(0, 3)), JSON.stringify(r.stats));
  }
}
console.log(`bad ${bad} of ${to - from + 1}`);
