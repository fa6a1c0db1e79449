// Leases survive a restart of the whole cluster from snapshots (a snapshot every 10 entries, so the
// lease table is read back from one): the lease and its key are there afterwards with a renewed
// TTL, and the lease still expires, taking the key.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import type { EtcdTestClient } from '../src/testing/etcd-client';
import { bytes, must, startWardCluster, type WardCluster } from './support/ward-cluster';

let ward: WardCluster;
let etcd: EtcdTestClient;

beforeAll(async () => {
  ward = await startWardCluster({ raftEnv: { RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '10' } });
  etcd = ward.client();
}, 120_000);

afterAll(async () => {
  await ward?.stop();
});

async function valueOf(key: string): Promise<string | null | undefined> {
  const range = await etcd.call<{ kvs: Array<{ value: Buffer }> }>('KV', 'Range', { key: bytes(key) });
  if (!range.ok) return undefined;
  return range.value.kvs.length === 0 ? null : range.value.kvs[0]!.value.toString();
}

it('a lease and its key survive kill -9 of every member and a restart from snapshots, then expire', async () => {
  const granted = await must<{ ID: string }>(etcd.call('Lease', 'LeaseGrant', { TTL: '12' }), 'grant');
  await must(etcd.call('KV', 'Put', { key: bytes('restart/k'), value: bytes('v'), lease: granted.ID }), 'put');
  for (let i = 0; i < 30; i++) await must(etcd.call('KV', 'Put', { key: bytes(`filler/${i}`), value: bytes('x') }), 'filler');
  for (const member of ward.cluster.members) expect((await readdir(join(member.dataDir, 'snap'))).length).toBeGreaterThan(0);

  // Let the lease run down a while (4 s of 12), so a full TTL after the restart is visible.
  await new Promise((resolve) => setTimeout(resolve, 4000));
  const before = await must<{ TTL: string }>(etcd.call('Lease', 'LeaseTimeToLive', { ID: granted.ID }), 'ttl before');
  expect(Number(before.TTL)).toBeLessThanOrEqual(8);
  for (const member of ward.cluster.members) await ward.cluster.kill(member.id);
  for (const member of ward.cluster.members) await ward.cluster.startMember(member.id);
  await ward.cluster.waitForLeader(30_000);

  expect(await eventually('the key is readable again', () => valueOf('restart/k'), 20_000)).toBe('v');
  const ttl = await must<{ TTL: string; grantedTTL: string }>(etcd.call('Lease', 'LeaseTimeToLive', { ID: granted.ID }), 'ttl');
  expect(ttl.grantedTTL).toBe('12');
  // A full TTL again (plus the election timeout), not what was left before the restart (which
  // only shrinks): more than before, unless the new leader took over 5 s to answer.
  expect(Number(ttl.TTL)).toBeGreaterThan(Number(before.TTL));
  const list = await must<{ leases: Array<{ ID: string }> }>(etcd.call('Lease', 'LeaseLeases', {}), 'leases');
  expect(list.leases.map((l) => l.ID)).toEqual([granted.ID]);

  await eventually('the lease expires after the restart', async () => ((await valueOf('restart/k')) === null ? true : undefined), 20_000);
  expect((await must<{ TTL: string }>(etcd.call('Lease', 'LeaseTimeToLive', { ID: granted.ID }), 'ttl')).TTL).toBe('-1');
}, 90_000);
