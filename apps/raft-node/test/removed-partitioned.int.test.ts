// A member removed while it is partitioned away (it never sees its removal committed) comes back:
// it does not disrupt the cluster (the leader keeps its term, writes go on), and it finds out it
// was removed (by asking the others), says so and exits by itself with code 0, as etcd does.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import { LocalCluster, buildRaftNodeBundle, putRequest } from '@ward/testing/cluster';
import { startNetProxy, type NetProxy } from '@ward/testing/net-proxy';
import { exitOf } from './helpers';

let cluster: LocalCluster<NetProxy>;

beforeAll(async () => {
  cluster = await LocalCluster.start<NetProxy>({ entry: buildRaftNodeBundle(), proxy: (target) => startNetProxy(target) });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

function linksOf(member: bigint): NetProxy[] {
  return cluster.links(member);
}

describe('a member removed while partitioned', () => {
  it('comes back without disrupting the cluster, and exits, saying why', async () => {
    const leader = await cluster.waitForLeader(10_000);
    const victim = cluster.members.find((m) => m.id !== leader)!.id;
    expect((await cluster.client(leader).propose(putRequest('before', '1'), 5000)).kind).toBe('ok');
    for (const link of linksOf(victim)) link.setFault('both', { kind: 'blackhole' });
    // the health interval passed long ago; the victim is down for the leader's quorum check only
    const removed = await eventually(
      'the victim removed',
      async () => {
        const answer = await cluster.client(leader).memberChange({ kind: 'REMOVE', id: victim });
        return answer.result === 'response' ? answer : undefined;
      },
      20_000,
    );
    expect(removed.result).toBe('response');
    const termBefore = (await cluster.client(leader).status()).raft_term;
    // left alone long enough to campaign (pre-vote) over and over, then healed
    await new Promise((r) => setTimeout(r, 3000));
    for (const link of linksOf(victim)) link.heal();
    expect(await exitOf(cluster, victim, 30_000)).toEqual({ code: 0, signal: null });
    const log = await readFile(cluster.member(victim).logFile, 'utf8');
    expect(log).toMatch(/another member no longer lists this one/);
    expect(log).toMatch(/this member was removed from the cluster/);
    expect(log).toMatch(/raft-node: the member has been permanently removed from the cluster/);
    // the cluster kept its leader and term throughout, and still writes
    const after = await cluster.client(leader).status();
    expect(after.leader_id).toBe(leader.toString());
    expect(after.raft_term).toBe(termBefore);
    expect((await cluster.client(leader).propose(putRequest('after', '1'), 5000)).kind).toBe('ok');
    const list = await cluster.client(leader).memberList();
    expect(list.members.map((m) => m.id)).not.toContain(victim.toString());
  }, 90_000);
});
