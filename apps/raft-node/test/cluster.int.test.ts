// A 3-member cluster of real processes: election, replication, apply, reads on followers,
// NotLeader answers, Watch, Status and MemberList through the internal API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import { LocalCluster, buildRaftNodeBundle, casRequest, getRequest, putRequest } from '@ward/testing/cluster';
import { readFileSync } from 'node:fs';
import { localValue, openWatch, others, valueOf } from './helpers';

/** The JSON lines of a member's log. */
const logLines = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

let cluster: LocalCluster;
let leader: bigint;

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle() });
  leader = await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

describe('a 3-member cluster', () => {
  it('elects one leader every member agrees on, in one cluster', async () => {
    const statuses = await cluster.statuses();
    expect(new Set(statuses.map((s) => s!.leader_id))).toEqual(new Set([leader.toString()]));
    expect(new Set(statuses.map((s) => s!.cluster_id)).size).toBe(1);
  });

  it("fast-forwards its election ticks at start once both peers are connected (etcd's initial election tick advance)", async () => {
    const advanced = cluster.members.flatMap((member) => logLines(member.logFile).filter((line) => line.msg === 'peers connected: fast-forwarding election ticks'));
    // The default RAFT_NODE_ELECTION_TICKS (10) less two; a member that learnt of a leader first does not advance.
    expect(advanced.length).toBeGreaterThan(0);
    for (const line of advanced) expect([line.ticks, line.connectedPeers]).toEqual([8, 2]);
  });

  it('replicates and applies a write on every member', async () => {
    const answer = await cluster.client(leader).propose(putRequest('greeting', 'hello'), 5000);
    expect(answer.kind).toBe('ok');
    for (const member of cluster.members) {
      expect(await eventually(`apply on ${member.id}`, async () => ((await localValue(cluster.client(member.id), 'greeting')) === 'hello' ? true : undefined), 10_000)).toBe(true);
    }
    const statuses = await eventually(
      'equal applied state',
      async () => {
        const all = await cluster.statuses();
        return new Set(all.map((s) => `${s!.applied_index}/${s!.revision}`)).size === 1 ? all : undefined;
      },
      10_000,
    );
    expect(statuses[0]!.revision).toBe(answer.kind === 'ok' ? String(answer.revision) : '');
  });

  it("a follower's serializable read catches up; its linearizable read sees the write at once", async () => {
    const follower = others(cluster, leader)[0]!;
    const written = await cluster.client(leader).propose(putRequest('counter', '41'), 5000);
    expect(written.kind).toBe('ok');
    expect(valueOf(await cluster.client(follower).read(getRequest('counter'), false, 5000))).toBe('41');
    await cluster.client(leader).propose(putRequest('counter', '42'), 5000);
    const seen = await eventually('serializable catch-up', async () => ((await localValue(cluster.client(follower), 'counter')) === '42' ? '42' : undefined), 10_000);
    expect(seen).toBe('42');
  });

  it('a follower answers Propose with NotLeader naming the leader and its API address', async () => {
    const follower = others(cluster, leader)[0]!;
    const answer = await cluster.client(follower).propose(putRequest('x', 'y'), 5000);
    expect(answer).toEqual({ kind: 'notLeader', leaderId: leader, leaderAddress: cluster.member(leader).apiAddress });
  });

  it('compare-and-set through a Txn: applies once, fails on a stale expectation', async () => {
    const client = cluster.client(leader);
    expect(valueOf(await client.read(getRequest('cas'), false, 5000))).toBeNull();
    const first = await client.propose(casRequest('cas', null, 'a'), 5000);
    const second = await client.propose(casRequest('cas', null, 'b'), 5000);
    const third = await client.propose(casRequest('cas', 'a', 'c'), 5000);
    const succeeded = [first, second, third].map((a) => (a.kind === 'ok' && a.response.type === 'txn' ? a.response.response.succeeded : undefined));
    expect(succeeded).toEqual([true, false, true]);
    expect(valueOf(await client.read(getRequest('cas'), false, 5000))).toBe('c');
  });

  it('answers etcd errors with their exact code and text', async () => {
    const answer = await cluster.client(leader).read({ header: { id: 0n, username: '', authRevision: 0 }, operation: { type: 'range', request: { key: new TextEncoder().encode('k'), revision: 1_000_000 } } }, false, 5000);
    expect(answer).toEqual({ kind: 'error', code: 11, message: 'etcdserver: mvcc: required revision is a future revision' });
  });

  it('streams watch events from a follower', async () => {
    const follower = others(cluster, leader)[1]!;
    const watch = openWatch(cluster.client(follower));
    watch.send({ type: 'create', request: { key: new TextEncoder().encode('w'), rangeEnd: new Uint8Array([0]), startRevision: 0, progressNotify: false, filters: [], prevKv: true, watchId: 0n, fragment: false } });
    await eventually('created', async () => (watch.responses.some((r) => r.created) ? true : undefined), 10_000);
    await cluster.client(leader).propose(putRequest('w1', 'a'), 5000);
    await cluster.client(leader).propose(putRequest('w1', 'b'), 5000);
    const events = await eventually(
      'two events',
      async () => {
        const all = watch.responses.flatMap((r) => r.events);
        return all.length >= 2 ? all : undefined;
      },
      10_000,
    );
    expect(events.map((e) => [e.type, e.kv!.value.toString(), e.prev_kv?.value.toString() ?? null])).toEqual([
      ['Put', 'a', null],
      ['Put', 'b', 'a'],
    ]);
    watch.close();
  });

  it('lists the members with their addresses', async () => {
    const list = await cluster.client(leader).memberList();
    expect(list.members.map((m) => [m.id, m.name, m.api_address])).toEqual(cluster.members.map((m) => [m.id.toString(), m.name, m.apiAddress]));
  });
});

describe('a 1-member cluster', () => {
  it('fast-forwards electionTicks - 1 at start and elects itself', async () => {
    const alone = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 1, env: { RAFT_NODE_ELECTION_TICKS: '30' } });
    try {
      await alone.waitForLeader(30_000);
      const advanced = logLines(alone.members[0]!.logFile).filter((line) => line.msg === 'alone in the cluster: fast-forwarding election ticks');
      expect(advanced.map((line) => line.ticks)).toEqual([29]);
    } finally {
      await alone.stop();
    }
  });
});
