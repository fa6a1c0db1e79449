// etcd's admin-only Maintenance RPCs against ward as processes (3 raft-nodes + gateway): the admin
// gate with etcd's errors (spec §3.5, rows 66 and 68), Defragment, HashKV against real etcd 3.4,
// and MoveLeader handing the leadership to each member in turn while writes keep working.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdGrpcClient, ROOT_PASSWORD, runEtcdctl, setupAuth, startEtcdCluster, startWardCluster, type WardCluster } from '../src/index';

const b = (text: string): Buffer => Buffer.from(text);
const DENIED = { ok: false, code: 7, details: 'etcdserver: permission denied' };
const USER_EMPTY = { ok: false, code: 3, details: 'etcdserver: user name is empty' };

describe.sequential('Maintenance: admin gate, Defragment, MoveLeader', () => {
  let ward: WardCluster;
  let client: EtcdGrpcClient;
  let root: string;
  let user: string;
  beforeAll(async () => {
    ward = await startWardCluster({ nodes: 3, bcryptCost: 4 });
    client = new EtcdGrpcClient(ward.clientEndpoint);
    root = (await setupAuth(client, { roles: [{ name: 'app', permissions: [{ permType: 'READWRITE', key: 'app/', rangeEnd: 'app0' }] }], users: [{ name: 'alice', password: 'alice-pw', roles: ['app'] }] }))!;
    user = await client.authenticate('alice', 'alice-pw');
  });
  afterAll(async () => {
    client?.close();
    await ward?.stop();
  });

  it.each([
    ['Defragment', {}],
    ['Hash', {}],
    ['HashKV', { revision: '0' }],
    ['MoveLeader', { targetID: '1' }],
    ['Downgrade', { action: 'VALIDATE', version: '3.5.0' }],
  ] as const)('%s needs an admin: anonymous → user name is empty, a user → permission denied', async (method, request) => {
    expect(await client.call('Maintenance', method, request)).toEqual(USER_EMPTY);
    expect(await client.call('Maintenance', method, request, { token: user })).toEqual(DENIED);
  });

  it('Defragment by root succeeds, answered by the leader', async () => {
    const status = await client.call<{ leader: string }>('Maintenance', 'Status', {}, { token: root });
    const defrag = await client.call<{ header: { member_id: string } }>('Maintenance', 'Defragment', {}, { token: root });
    expect(defrag.ok && status.ok && defrag.response.header.member_id).toBe(status.ok ? status.response.leader : 'no status');
  });

  it('HashKV and `etcdctl endpoint hashkv` give etcd 3.4’s hashes after the same requests, before and after a compaction', async () => {
    const etcd = await startEtcdCluster({ members: 1 });
    try {
      const onWard = (args: string[]) => runEtcdctl({ endpoints: [ward.clientEndpoint], args, user: { name: 'root', password: ROOT_PASSWORD } });
      const onEtcd = (args: string[]) => runEtcdctl({ endpoints: [etcd.clientEndpoint], args });
      const steps: Array<{ args: string[]; stdin?: string }> = [
        { args: ['put', 'hash/a', '1'] },
        { args: ['put', 'hash/b', '2'] },
        { args: ['put', 'hash/a', '3'] },
        { args: ['del', 'hash/b'] },
        { args: ['txn'], stdin: '\nput hash/c x\nput hash/d ""\n\n\n' },
        { args: ['put', 'hash/e', 'v'.repeat(200)] },
      ];
      for (const step of steps) {
        for (const [name, target] of [['ward', ward.clientEndpoint], ['etcd', etcd.clientEndpoint]] as const) {
          const user = name === 'ward' ? { name: 'root', password: ROOT_PASSWORD } : undefined;
          const result = await runEtcdctl({ endpoints: [target], args: step.args, stdin: step.stdin, user });
          expect(result.exitCode, `${name}: ${step.args.join(' ')}: ${result.stderr}`).toBe(0);
        }
      }
      const hashes = async (run: (args: string[]) => Promise<{ exitCode: number | null; stdout: string; stderr: string }>, args: string[]): Promise<string> => {
        const result = await run(['endpoint', 'hashkv', ...args]);
        expect(result.exitCode, result.stderr).toBe(0);
        return result.stdout.trim().split(', ')[1]!;
      };
      const compare = async (args: string[]): Promise<string> => {
        const [fromWard, fromEtcd] = [await hashes(onWard, args), await hashes(onEtcd, args)];
        expect(fromWard, `endpoint hashkv ${args.join(' ')}`).toBe(fromEtcd);
        return fromWard;
      };
      const current = await compare([]);
      const atThree = await compare(['--rev', '3']);
      expect(atThree).not.toBe(current);
      expect(await compare(['--rev', '7'])).toBe(current);
      for (const run of [onWard, onEtcd]) expect((await run(['compaction', '4'])).exitCode).toBe(0);
      const compacted = await compare([]);
      expect(compacted).not.toBe(current);
      await compare(['--rev', '5']);
      // A compacted revision: etcd's error, through etcdctl's transcript.
      const refused = await onWard(['endpoint', 'hashkv', '--rev', '4']);
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toContain('Error: etcdserver: mvcc: required revision has been compacted');
      expect(await client.call('Maintenance', 'HashKV', { revision: '99' }, { token: root })).toEqual({
        ok: false,
        code: 11,
        details: 'etcdserver: mvcc: required revision is a future revision',
      });
      const hash = await client.call<{ hash: number }>('Maintenance', 'Hash', {}, { token: root });
      expect(hash.ok && String(hash.response.hash)).toBe(compacted);
    } finally {
      await etcd.stop();
    }
  }, 120_000);

  it('MoveLeader hands the leadership to every other member in turn; writes go on', async () => {
    const members = await client.call<{ members: Array<{ ID: string }> }>('Cluster', 'MemberList', {}, { token: root });
    expect(members.ok).toBe(true);
    const ids = members.ok ? members.response.members.map((member) => member.ID) : [];
    expect(ids).toHaveLength(3);
    for (let round = 0; round < ids.length; round++) {
      const status = await client.call<{ leader: string }>('Maintenance', 'Status', {}, { token: root });
      const leader = status.ok ? status.response.leader : '';
      const target = ids.find((id) => id !== leader)!;
      const moved = await client.call<{ header: { member_id: string } }>('Maintenance', 'MoveLeader', { targetID: target }, { token: root });
      expect(moved.ok, JSON.stringify(moved)).toBe(true);
      // The old leader answers once the transferee leads.
      expect(moved.ok && moved.response.header.member_id).toBe(leader);
      // Before any write could redirect the gateway: it reports the new leader's own status.
      const after = await client.call<{ leader: string; header: { member_id: string } }>('Maintenance', 'Status', {}, { token: root });
      expect(after.ok && after.response.leader).toBe(target);
      expect(after.ok && after.response.header.member_id).toBe(target);
      const put = await client.call('KV', 'Put', { key: b(`app/round-${round}`), value: b(target) }, { token: user });
      expect(put.ok, JSON.stringify(put)).toBe(true);
    }
    const read = await client.call<{ count: string }>('KV', 'Range', { key: b('app/'), range_end: b('app0') }, { token: user });
    expect(read.ok && read.response.count).toBe(String(ids.length));
  });

  it('etcdctl endpoint status shows the gateway as the leader, and etcdctl move-leader works twice in a row', async () => {
    const ctl = (args: string[]) => runEtcdctl({ endpoints: [ward.clientEndpoint], args, user: { name: 'root', password: ROOT_PASSWORD } });
    for (let round = 0; round < 2; round++) {
      const status = await ctl(['endpoint', 'status', '-w', 'json']);
      expect(status.exitCode, status.stderr).toBe(0);
      const parsed = JSON.parse(status.stdout) as Array<{ Status: { header: { member_id: number }; leader: number } }>;
      const { header, leader } = parsed[0]!.Status;
      expect(header.member_id).toBe(leader);
      const next = [1, 2, 3].find((id) => id !== leader)!;
      const moved = await ctl(['move-leader', next.toString(16)]);
      expect(moved.exitCode, moved.stderr).toBe(0);
      expect(moved.stdout.trim()).toBe(`Leadership transferred from ${leader.toString(16)} to ${next.toString(16)}`);
    }
  });

  it('MoveLeader to the current leader is a no-op success; to an unknown member, a bad leader transferee', async () => {
    const status = await client.call<{ leader: string }>('Maintenance', 'Status', {}, { token: root });
    const leader = status.ok ? status.response.leader : '';
    expect((await client.call('Maintenance', 'MoveLeader', { targetID: leader }, { token: root })).ok).toBe(true);
    expect(await client.call('Maintenance', 'MoveLeader', { targetID: '424242' }, { token: root })).toEqual({ ok: false, code: 9, details: 'etcdserver: bad leader transferee' });
    expect(ward.allAlive()).toBe(true);
  });
});
