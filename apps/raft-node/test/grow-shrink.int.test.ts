// Growing a cluster of real processes from 3 to 5 members and shrinking it back to 3 while
// clients write, with the leader killed (kill -9, restarted) in the middle and the fifth member
// joining while the fourth leads: every acknowledged write is there at the end, on every
// remaining member.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import type { NodeResponse__Output } from '@ward/etcd/proto';
import { LocalCluster, buildRaftNodeBundle, getRequest } from '@ward/testing/cluster';
import { eventually, valueOf } from './helpers';
import { startWriters } from './writer';

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), env: { RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '300', RAFT_NODE_SNAPSHOT_CATCH_UP_ENTRIES_COUNT: '100' } });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

/** A membership change at whichever member leads, retried while refused for health or leadership (30 s). */
async function change(request: Parameters<ReturnType<LocalCluster['client']>['memberChange']>[0], except: bigint[] = []): Promise<NodeResponse__Output> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const leader = await cluster.waitForLeader(20_000, except);
    const answer = await cluster.client(leader).memberChange(request).catch(() => undefined);
    if (answer?.result === 'response') return answer;
    const message = answer?.error?.message ?? 'no answer';
    if (Date.now() > deadline || !/unhealthy cluster|in sync with leader|not enough started|no answer|request timed out/.test(message) && answer?.result !== 'not_leader') {
      throw new Error(`${request.kind} refused: ${message}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function grow(): Promise<bigint> {
  const planned = await cluster.planMember();
  const added = await change({ kind: 'ADD', peer_urls: [`http://127.0.0.1:${planned.peerPort}`], is_learner: true });
  const id = BigInt(decodeEtcdMessage<{ member: { ID: string } }>('etcdserverpb.MemberAddResponse', added.response!).member.ID);
  await cluster.joinMember(id, planned, cluster.members.filter((m) => m.process?.running).map((m) => m.id));
  await change({ kind: 'PROMOTE', id });
  return id;
}

describe('3 -> 5 -> 3 members', () => {
  it('grows and shrinks under writes and a leader kill without losing an acknowledged write', async () => {
    const writers = startWriters(cluster, 3, 'grow');
    const fourth = await grow();
    // the leader dies between the two additions and comes back
    const leader = await cluster.waitForLeader(10_000);
    await cluster.kill(leader);
    await cluster.waitForLeader(20_000, [leader]);
    await cluster.startMember(leader);
    // the second newcomer joins while the first one leads: it must answer a leader that its own
    // member list (still the initial one until it catches up) does not name yet
    const current = await cluster.waitForLeader(20_000);
    const moved = await cluster.client(current).moveLeader(fourth);
    expect(moved.result).toBe('response');
    expect(await cluster.waitForLeader(20_000)).toBe(fourth);
    const fifth = await grow();
    const five = await cluster.client(await cluster.waitForLeader(20_000)).memberList();
    expect(five.members.filter((m) => !m.is_learner)).toHaveLength(5);
    // back to 3: the two newcomers go
    await change({ kind: 'REMOVE', id: fourth });
    await cluster.kill(fourth);
    await change({ kind: 'REMOVE', id: fifth }, [fourth]);
    await cluster.kill(fifth);
    await new Promise((r) => setTimeout(r, 1000));
    await writers.stop();

    const remaining = cluster.members.filter((m) => m.id !== fourth && m.id !== fifth).map((m) => m.id);
    const now = await cluster.waitForLeader(20_000, [fourth, fifth]);
    const three = await cluster.client(now).memberList();
    expect(three.members.map((m) => BigInt(m.id)).sort()).toEqual([...remaining].sort());
    const missing: string[] = [];
    for (const key of writers.acknowledged) {
      const answer = await cluster.client(now).read(getRequest(key), false, 5000);
      if (valueOf(answer) !== key) missing.push(key);
    }
    console.log(`${writers.acknowledged.size} acknowledged writes of ${writers.attempted()} attempted while growing to 5 and shrinking to 3; missing: ${missing.length}`);
    expect(writers.acknowledged.size).toBeGreaterThan(50);
    expect(missing).toEqual([]);
    await eventually(
      'the three members at the same index',
      async () => {
        const statuses = await Promise.all(remaining.map((id) => cluster.client(id).status()));
        return new Set(statuses.map((s) => s.applied_index)).size === 1 ? statuses : undefined;
      },
      20_000,
    );
  }, 240_000);
});
