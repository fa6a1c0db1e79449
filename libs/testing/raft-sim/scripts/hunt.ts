import type { RaftMutation } from '@ward/raft/core';
import { RAFT_MUTATIONS } from '@ward/raft/core';
import { CHAOS_PROFILE, runSimulation, withOverrides } from '@ward/testing/raft-sim';
const only = process.argv[2];
const maxSeeds = Number(process.argv[3] ?? 50);
for (const mutation of RAFT_MUTATIONS.filter((m) => only === undefined || only === 'all' || m === only) as RaftMutation[]) {
  const profile = withOverrides(CHAOS_PROFILE, { mutations: [mutation] });
  const c0 = process.cpuUsage();
  let found: string | undefined;
  let seed = 1;
  for (; seed <= maxSeeds; seed++) {
    const r = runSimulation(seed, profile, { stopAtFirstViolation: true });
    if (r.violations.some((v) => !v.kind.startsWith("liveness")) || r.linearizability === "illegal") {
      found = `${r.violations[0]?.kind}: ${r.violations[0]?.detail}`.slice(0, 150);
      break;
    }
  }
  const c = process.cpuUsage(c0);
  console.log(mutation.padEnd(32), found ? `caught at seed ${seed}` : `NOT caught in ${maxSeeds}`, `cpu ${((c.user + c.system) / 1000).toFixed(0)}ms`, found ?? '');
}
