// Benchmark (not a test): a member joining a 3-member cluster of real processes that holds
// WARD_BENCH_KEYS keys (default 100,000; 256-byte values, loaded as txns of 128 puts). Measures
// the time from `member add --learner` (wardnode MemberChange ADD) to promotable (a PROMOTE that
// is not refused as 'not in sync with leader'), and the write throughput of 16 clients during the
// catch-up against the same clients before it.
//   npx tsx apps/raft-node/bench/member-join.bench.ts        (or: npx nx run raft-node:bench)
import type { ApplyRequest } from '@ward/etcd/apply';
import { LocalCluster, buildRaftNodeBundle, putRequest } from '@ward/testing/cluster';

const KEYS = Number(process.env.WARD_BENCH_KEYS ?? 100_000);
const BATCH = 128;
const CLIENTS = 16;
const BASELINE_MS = 5000;
const VALUE = new Uint8Array(256).fill(0x62);
const text = (value: string): Uint8Array => new TextEncoder().encode(value);

function batch(from: number): ApplyRequest {
  const success = Array.from({ length: Math.min(BATCH, KEYS - from) }, (_, i) => ({ type: 'put' as const, request: { key: text(`load/${from + i}`), value: VALUE } }));
  return { header: { id: 0n, username: '', authRevision: 0 }, operation: { type: 'txn', request: { compare: [], success, failure: [] } } };
}

const cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), env: { RAFT_NODE_LOG_LEVEL: 'warn' } });
try {
  let leader = await cluster.waitForLeader(30_000);
  const loadStarted = performance.now();
  for (let from = 0; from < KEYS; from += BATCH * 8) {
    await Promise.all(
      Array.from({ length: 8 }, async (_, k) => {
        const start = from + k * BATCH;
        if (start >= KEYS) return;
        const answer = await cluster.client(leader).propose(batch(start), 30_000, 35_000);
        if (answer.kind !== 'ok') throw new Error(`load failed: ${JSON.stringify(answer)}`);
      }),
    );
  }
  console.log(`loaded ${KEYS} keys in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

  let writes = 0;
  let errors = 0;
  let stopped = false;
  const writers = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; !stopped; i++) {
      const answer = await cluster.client(leader).propose(putRequest(`w/${c}/${i}`, 'v'), 5000, 6000).catch(() => undefined);
      if (answer?.kind === 'ok') writes++;
      else errors++;
    }
  });
  await new Promise((r) => setTimeout(r, BASELINE_MS));
  const baseline = writes / (BASELINE_MS / 1000);

  const planned = await cluster.planMember();
  /** The newcomer's id once added (0: not yet). */
  const joining = { id: 0n };
  const added = performance.now();
  // membership changes go to whichever member leads; refused ones are retried (5 min in all)
  const deadline = Date.now() + 300_000;
  const change = async (request: Parameters<ReturnType<typeof cluster.client>['memberChange']>[0], transient: RegExp) => {
    for (;;) {
      if (Date.now() > deadline) throw new Error(`${request.kind} not done in 5 min`);
      // the learner busy installing the snapshot may not answer Status in time: ask the others
      leader = await cluster.waitForLeader(10_000, [joining.id]).catch(() => leader);
      const answer = await cluster.client(leader).memberChange(request).catch(() => undefined);
      if (answer?.result === 'response') return answer;
      const message = answer?.error?.message;
      if (message !== undefined && !transient.test(message)) throw new Error(`${request.kind} failed: ${message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await change({ kind: 'ADD', peer_urls: [planned.peerUrl], is_learner: true }, /unhealthy cluster/);
  const list = await cluster.client(leader).memberList();
  const id = BigInt(list.members.find((m) => m.peer_urls[0] === planned.peerUrl)!.id);
  joining.id = id;
  const writesAtAdd = writes;
  await cluster.joinMember(id, planned, cluster.members.map((m) => m.id));
  await change({ kind: 'PROMOTE', id }, /in sync with leader|unhealthy cluster/);
  const joinMs = performance.now() - added;
  const during = (writes - writesAtAdd) / (joinMs / 1000);
  stopped = true;
  await Promise.all(writers);
  console.log(`member add --learner -> promoted: ${(joinMs / 1000).toFixed(2)} s with ${KEYS} keys`);
  console.log(`writes/s with ${CLIENTS} clients: ${baseline.toFixed(0)} before, ${during.toFixed(0)} during the catch-up (${errors} errors)`);
} finally {
  await cluster.stop();
}
