// Replacing a member of a running cluster with real processes, while clients write: a learner is
// added (wardnode MemberChange ADD), started with RAFT_NODE_INITIAL_CLUSTER_STATE=existing and
// the current member list, catches up from the leader (a snapshot, then the log), publishes its
// name and API address, is promoted, and the old member (the leader) is removed, then a follower.
// No write fails, none acknowledged is lost, and the history of a second, Jepsen-style workload
// (reads, puts and compare-and-sets on hot keys, jepsen/clients.ts) running all along is checked
// linearizable; the removed members log why and exit by themselves (code 0, as etcd does).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import type { NodeResponse__Output } from '@ward/etcd/proto';
import { LocalCluster, buildRaftNodeBundle, getRequest, putRequest } from '@ward/testing/cluster';
import { SeededRng } from '@ward/shared/clock';
import { exitOf, valueOf } from './helpers';
import { startWorkload } from './jepsen/clients';
import { checkWorkload, type WorkloadVerdicts } from './jepsen/run';

let cluster: LocalCluster;

beforeAll(async () => {
  // frequent snapshots, short catch-up tail: the joining member needs a snapshot
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), env: { RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '200', RAFT_NODE_SNAPSHOT_CATCH_UP_ENTRIES_COUNT: '50' } });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

interface EtcdMember {
  ID: string;
  name: string;
  peerURLs: string[];
  isLearner: boolean;
}

function etcdAnswer<T>(typeName: string, response: NodeResponse__Output): T {
  if (response.result !== 'response') throw new Error(`no ${typeName}: ${JSON.stringify(response.error ?? response.not_leader)}`);
  return decodeEtcdMessage<T>(typeName, response.response!);
}

/** Retries a membership change refused with 'unhealthy cluster' (a connection younger than the health interval), for 20 s. */
async function untilHealthy(change: () => Promise<NodeResponse__Output>): Promise<NodeResponse__Output> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answer = await change();
    if (answer.error?.message !== 'etcdserver: unhealthy cluster' || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Clients that write unique keys, each retried (following the leader) until acknowledged or 15 s passed. */
function startWriters(count: number) {
  const acknowledged = new Set<string>();
  const failed: string[] = [];
  let stopped = false;
  let target = cluster.members[0]!.id;
  const writeOnce = async (key: string): Promise<boolean> => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      try {
        const answer = await cluster.client(target).propose(putRequest(key, key), 3000, 4000);
        if (answer.kind === 'ok') return true;
        if (answer.kind === 'notLeader' && answer.leaderId !== 0n && cluster.members.some((m) => m.id === answer.leaderId)) target = answer.leaderId;
        else await new Promise((r) => setTimeout(r, 50));
      } catch {
        const ids = cluster.members.filter((m) => m.process?.running).map((m) => m.id);
        target = ids[(ids.indexOf(target) + 1) % ids.length]!;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return false;
  };
  const loops = Array.from({ length: count }, async (_, client) => {
    for (let i = 0; !stopped; i++) {
      const key = `replace-${client}-${i}`;
      if (await writeOnce(key)) acknowledged.add(key);
      else failed.push(key);
    }
  });
  return {
    acknowledged,
    failed,
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

describe('replacing a member', () => {
  it('adds a learner that joins and catches up, promotes it, removes the old member: 0 failed writes, 0 lost', async () => {
    // enough history that the log the newcomer needs was compacted
    let leader = await cluster.waitForLeader(10_000);
    for (let i = 0; i < 400; i++) expect((await cluster.client(leader).propose(putRequest(`pre-${i}`, `v${i}`), 5000)).kind).toBe('ok');
    const writers = startWriters(3);
    // the checked workload talks to the members in the cluster at the time
    const gone = new Set<bigint>();
    const seed = Number(process.env.WARD_JEPSEN_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const members = (): bigint[] => cluster.members.map((m) => m.id).filter((id) => !gone.has(id));
    const workload = startWorkload(cluster, { clients: 3, keys: 4, keyGenerationMs: 10_000, rng: new SeededRng(seed), now: () => performance.now(), members });
    await new Promise((r) => setTimeout(r, 500));

    // 1. add a learner (a random 64-bit id, not started: no name yet)
    const planned = await cluster.planMember();
    leader = await cluster.waitForLeader(10_000);
    const added = etcdAnswer<{ member: EtcdMember; members: EtcdMember[] }>(
      'etcdserverpb.MemberAddResponse',
      await untilHealthy(() => cluster.client(leader).memberChange({ kind: 'ADD', peer_urls: [planned.peerUrl], is_learner: true })),
    );
    const newId = BigInt(added.member.ID);
    expect(added.member).toMatchObject({ name: '', peerURLs: [planned.peerUrl], isLearner: true });
    expect(added.members).toHaveLength(4);
    expect(newId).not.toBe(4n);
    // a second learner is refused while one is there, as etcd does
    const second = await cluster.client(leader).memberChange({ kind: 'ADD', peer_urls: ['http://127.0.0.1:1'], is_learner: true });
    expect(second.error).toMatchObject({ message: 'etcdserver: too many learner members in cluster' });
    // promoting the learner before it started: not ready
    const early = await cluster.client(leader).memberChange({ kind: 'PROMOTE', id: newId });
    expect(early.error?.message).toMatch(/^etcdserver: can only promote a learner member which is in sync with leader/);

    // 2. the new member joins with the current list and catches up
    const originals = cluster.members.map((m) => m.id);
    await cluster.joinMember(newId, planned, originals);
    const status = await eventually(
      'the learner caught up',
      async () => {
        const [mine, theirs] = await Promise.all([cluster.client(newId).status(), cluster.client(leader).status()]);
        return mine.is_learner && Number(mine.applied_index) >= Number(theirs.commit_index) - 50 && Number(mine.applied_index) > 400 ? mine : undefined;
      },
      30_000,
    );
    expect(status.cluster_id).toBe((await cluster.client(leader).status()).cluster_id);
    const log = await readFile(planned.logFile, 'utf8');
    expect(log).toMatch(/joining the existing cluster/);
    expect(log).toMatch(/snapshot installed from the leader/);
    // it published its name and API address
    await eventually(
      'the new member published itself',
      async () => {
        const list = await cluster.client(leader).memberList();
        const mine = list.members.find((m) => BigInt(m.id) === newId);
        return mine?.name === planned.name && mine.api_address === planned.apiAddress ? list : undefined;
      },
      20_000,
    );

    // 3. promote it (the strict reconfiguration check wants the leader connected to it for etcd's
    // health interval first: 'unhealthy cluster' until then)
    const promoted = etcdAnswer<{ members: EtcdMember[] }>('etcdserverpb.MemberPromoteResponse', await untilHealthy(() => cluster.client(leader).memberChange({ kind: 'PROMOTE', id: newId })));
    expect(promoted.members.find((m) => BigInt(m.ID) === newId)?.isLearner).toBe(false);
    const again = await cluster.client(leader).memberChange({ kind: 'PROMOTE', id: newId });
    expect(again.error).toMatchObject({ message: 'etcdserver: can only promote a learner member' });
    // kill -9 and restart of the joined member: it boots from its own snapshot and log with the
    // cluster identity it kept, a voter now
    await cluster.kill(newId);
    await cluster.startMember(newId);
    await eventually(
      'the restarted member caught up as a voter',
      async () => {
        const [mine, theirs] = await Promise.all([cluster.client(newId).status(), cluster.client(leader).status()]);
        return !mine.is_learner && mine.cluster_id === theirs.cluster_id && mine.leader_id !== '0' && Number(mine.applied_index) >= Number(theirs.applied_index) - 50 ? mine : undefined;
      },
      30_000,
    );

    // 4. remove an old member (the leader itself: the hardest case)
    const old = await cluster.waitForLeader(10_000);
    const removed = etcdAnswer<{ members: EtcdMember[] }>('etcdserverpb.MemberRemoveResponse', await untilHealthy(() => cluster.client(old).memberChange({ kind: 'REMOVE', id: old })));
    expect(removed.members.map((m) => BigInt(m.ID)).sort()).toEqual([...originals.filter((id) => id !== old), newId].sort());
    gone.add(old);
    // it answers its last calls, logs why and exits by itself, with code 0 as etcd 3.4.23 does
    expect(await exitOf(cluster, old, 15_000)).toEqual({ code: 0, signal: null });
    expect(await readFile(cluster.member(old).logFile, 'utf8')).toMatch(/this member was removed from the cluster: the member has been permanently removed from the cluster/);

    // 5. remove a follower too: the leader stops replicating to it once the change applied, so it
    // may never apply its own removal; it finds out by asking the others, and says so as well
    const follower = originals.find((id) => id !== old)!;
    const now1 = await cluster.waitForLeader(10_000, [old]);
    etcdAnswer('etcdserverpb.MemberRemoveResponse', await untilHealthy(() => cluster.client(now1).memberChange({ kind: 'REMOVE', id: follower })));
    gone.add(follower);
    expect(await exitOf(cluster, follower, 30_000)).toEqual({ code: 0, signal: null });
    const followerLog = await readFile(cluster.member(follower).logFile, 'utf8');
    expect(followerLog.split('\n').filter((l) => /removed|no longer lists/.test(l)).join('\n')).toMatch(/this member was removed from the cluster/);
    await new Promise((r) => setTimeout(r, 1500));
    await writers.stop();
    await workload.stop();

    // 6. nothing failed, nothing acknowledged was lost; every remaining member has every write
    console.log(`${writers.acknowledged.size} acknowledged writes during the replacement; failed: ${writers.failed.length}`);
    expect(writers.failed).toEqual([]);
    expect(writers.acknowledged.size).toBeGreaterThan(50);
    const now = await cluster.waitForLeader(20_000, [old, follower]);
    expect((await cluster.client(now).memberChange({ kind: 'REMOVE', id: old })).error?.message).toBe('etcdserver: member not found');
    const missing: string[] = [];
    for (const key of writers.acknowledged) {
      const answer = await cluster.client(now).read(getRequest(key), false, 5000);
      if (valueOf(answer) !== key) missing.push(key);
    }
    expect(missing).toEqual([]);
    const verdicts: WorkloadVerdicts = await checkWorkload(cluster, workload, { clients: 3, keys: 4, maxCheckSteps: 20_000_000, maxCheckMs: 60_000, members });
    console.log(`seed ${seed}: checked workload ${JSON.stringify(verdicts.operations)}, linearizability ${verdicts.check.verdict} in ${Math.round(verdicts.checkMs)} ms, ${verdicts.acknowledgedFresh} acknowledged fresh keys, ${verdicts.missingFresh.length} missing`);
    expect(verdicts.check.verdict, verdicts.explanation).toBe('ok');
    expect(verdicts.operations.ok).toBeGreaterThan(100);
    expect(verdicts.missingFresh).toEqual([]);
    expect(verdicts.corruptedVerdict).toBe('illegal');
    const remaining = cluster.members.filter((m) => m.id !== old && m.id !== follower).map((m) => m.id);
    await eventually(
      'every remaining member applied the same index',
      async () => {
        const statuses = await Promise.all(remaining.map((id) => cluster.client(id).status()));
        return new Set(statuses.map((s) => s.applied_index)).size === 1 && new Set(statuses.map((s) => s.revision)).size === 1 ? statuses : undefined;
      },
      20_000,
    );
    for (const id of remaining) {
      const answer = await cluster.client(id).read(getRequest([...writers.acknowledged].at(-1)!), true, 5000);
      expect(valueOf(answer)).toBe([...writers.acknowledged].at(-1));
    }
  }, 180_000);
});
