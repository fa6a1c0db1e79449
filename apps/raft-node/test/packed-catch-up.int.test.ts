// A follower that was down catches up from the leader's log after the leader packed those entries
// (their data copied into slabs once applied): what it receives is what was written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import { LocalCluster, buildRaftNodeBundle, putRequest } from '@ward/testing/cluster';
import { localValue, others } from './helpers';

const KEYS = 40;
const VALUE_BYTES = 50 * 1024;
let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle() });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

const key = (i: number): string => `packed/${String(i).padStart(3, '0')}`;
const value = (i: number): string => `${i}:`.padEnd(VALUE_BYTES, String.fromCharCode(97 + (i % 26)));

async function packedSlabBytes(id: bigint): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${cluster.member(id).httpPort}/metrics`)).text();
  return Number(/^ward_raft_node_log_packed_slab_bytes\{[^}]*\} (\d+)$/m.exec(text)?.[1] ?? NaN);
}

describe('catch-up from packed entries', () => {
  it('a follower down while 2 MB were written receives them from the leader packed log, unchanged', async () => {
    const leader = await cluster.waitForLeader(10_000);
    const follower = others(cluster, leader)[0]!;
    await cluster.kill(follower);
    const client = cluster.client(leader);
    for (let i = 0; i < KEYS; i++) expect((await client.propose(putRequest(key(i), value(i)), 10_000)).kind).toBe('ok');
    // The leader packed what it applied (2 MB, over the 256 KiB that starts a pack).
    await eventually('the leader packs its applied entries', async () => ((await packedSlabBytes(leader)) > 0 ? true : undefined), 10_000);

    await cluster.startMember(follower);
    await eventually(`member ${follower} catches up`, async () => ((await localValue(cluster.client(follower), key(KEYS - 1))) === value(KEYS - 1) ? true : undefined), 30_000);
    for (let i = 0; i < KEYS; i++) expect(await localValue(cluster.client(follower), key(i))).toBe(value(i));
    const [mine, theirs] = await Promise.all([cluster.client(follower).status(), cluster.client(leader).status()]);
    expect(mine.revision).toBe(theirs.revision);
  });
});
