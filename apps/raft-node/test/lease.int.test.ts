// The lessor on a real 3-member cluster, through the internal API: the leader settles a grant
// (ID 0 → a positive ID, TTL below the minimum → 2 s), only the leader answers Lease (followers
// say who leads), and keep-alive / time-to-live / the list answer etcd's messages.
import type { ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import type { NodeResponse__Output } from '@ward/etcd/proto';
import { LocalCluster, buildRaftNodeBundle, type NodeApiClient } from '@ward/testing/cluster';

let cluster: LocalCluster;
let leader: bigint;

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 3 });
  leader = await cluster.waitForLeader(30_000);
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

function lease(client: NodeApiClient, request: object): Promise<NodeResponse__Output> {
  const raw = client.raw as unknown as { Lease(r: object, cb: (e: ServiceError | null, r: NodeResponse__Output) => void): void };
  return new Promise((resolve, reject) => raw.Lease({ username: '', auth_revision: '0', timeout_ms: 2000, ...request }, (error, response) => (error ? reject(error) : resolve(response))));
}

describe('the lessor through wardnode.Node', () => {
  let id: bigint;

  it('the leader gives a grant asking for ID 0 a positive ID and raises a 1 s TTL to 2 s', async () => {
    const answer = await cluster.client(leader).propose({ header: { id: 0n, username: '', authRevision: 0 }, operation: { type: 'leaseGrant', request: { id: 0n, ttlSeconds: 1 } } }, 5000);
    expect(answer.kind).toBe('ok');
    const response = (answer as { response: { type: string; response: { id: bigint; ttlSeconds: number } } }).response;
    expect(response.type).toBe('leaseGrant');
    expect(response.response.id).toBeGreaterThan(0n);
    expect(response.response.ttlSeconds).toBe(2);
    id = response.response.id;
  });

  it('followers answer not_leader with the leader’s address; the leader renews', async () => {
    const leaderAddress = cluster.member(leader).apiAddress;
    for (const member of cluster.members.filter((m) => m.id !== leader)) {
      const answer = await lease(cluster.client(member.id), { kind: 'KEEP_ALIVE', id: id.toString() });
      expect(answer.result).toBe('not_leader');
      expect(answer.not_leader?.leader_address).toBe(leaderAddress);
    }
    const answer = await lease(cluster.client(leader), { kind: 'KEEP_ALIVE', id: id.toString() });
    expect(answer.result).toBe('response');
    expect(decodeEtcdMessage('etcdserverpb.LeaseKeepAliveResponse', answer.response!)).toMatchObject({ ID: id.toString(), TTL: '2' });
  });

  it('time-to-live and the list come from the leader; the lease expires there and is gone everywhere', async () => {
    const ttl = await lease(cluster.client(leader), { kind: 'TIME_TO_LIVE', id: id.toString() });
    expect(decodeEtcdMessage('etcdserverpb.LeaseTimeToLiveResponse', ttl.response!)).toMatchObject({ ID: id.toString(), grantedTTL: '2' });
    const list = await lease(cluster.client(leader), { kind: 'LEASES' });
    expect(decodeEtcdMessage<{ leases: Array<{ ID: string }> }>('etcdserverpb.LeaseLeasesResponse', list.response!).leases).toEqual([{ ID: id.toString() }]);
    const deadline = Date.now() + 10_000;
    let remaining = '';
    while (Date.now() < deadline) {
      const answer = await lease(cluster.client(leader), { kind: 'TIME_TO_LIVE', id: id.toString() });
      remaining = decodeEtcdMessage<{ TTL: string }>('etcdserverpb.LeaseTimeToLiveResponse', answer.response!).TTL;
      if (remaining === '-1') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(remaining).toBe('-1');
    const empty = await lease(cluster.client(leader), { kind: 'LEASES' });
    expect(decodeEtcdMessage<{ leases: unknown[] }>('etcdserverpb.LeaseLeasesResponse', empty.response!).leases).toEqual([]);
  });
});
