// Snapshots by bytes: with the entry-count trigger out of reach, members snapshot because of the
// bytes applied, and a member restarted (kill -9), then the whole cluster restarted, boots from
// its newest snapshot plus the log after it and answers exactly as before.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApplyRequest } from '@ward/etcd/apply';
import { LocalCluster, buildRaftNodeBundle, deleteRequest, putRequest } from '@ward/testing/cluster';
import { eventually } from '@ward/testing/etcd-harness';
import { bigints, localValue, others } from './helpers';
import { lastLogLine } from './wal-files';

const KEYS = 3000;
const VALUE_BYTES = 200;
let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    entry: buildRaftNodeBundle(),
    env: {
      RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '1000000',
      RAFT_NODE_SNAPSHOT_BYTES: String(64 * 1024),
      RAFT_NODE_SNAPSHOT_CATCH_UP_BYTES: String(16 * 1024),
    },
  });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const key = (i: number): string => `big/${String(i).padStart(5, '0')}`;
const value = (i: number, round: number): string => `${round}:${i}:`.padEnd(VALUE_BYTES, String.fromCharCode(97 + ((i + round) % 26)));

async function propose(requests: readonly ApplyRequest[]): Promise<void> {
  const leader = await cluster.waitForLeader(20_000);
  const client = cluster.client(leader);
  for (let start = 0; start < requests.length; start += 50) {
    const answers = await Promise.all(requests.slice(start, start + 50).map((request) => client.propose(request, 10_000)));
    for (const answer of answers) expect(answer.kind).toBe('ok');
  }
}

/** Every key of the test's prefix, with revisions and versions, read on member `id` alone. */
async function picture(id: bigint): Promise<string> {
  const request: ApplyRequest = { header: { id: 0n, username: '', authRevision: 0 }, operation: { type: 'range', request: { key: text('big/'), rangeEnd: text('big0') } } };
  const answer = await cluster.client(id).read(request, true, 10_000);
  if (answer.kind !== 'ok') throw new Error(`range on ${id}: ${JSON.stringify(answer, bigints)}`);
  const status = await cluster.client(id).status();
  const response = answer.response as { response: { count: number } };
  const digest = createHash('sha256').update(JSON.stringify(answer.response, bigints)).digest('hex');
  return `revision ${status.revision} compacted ${status.compact_revision} keys ${response.response.count} sha256 ${digest}`;
}

async function appliedEverywhere(): Promise<void> {
  const leader = await cluster.waitForLeader(20_000);
  const target = (await cluster.client(leader).status()).applied_index;
  await eventually(
    'every member applied as far as the leader',
    async () => ((await cluster.statuses(2000)).every((s) => s !== undefined && Number(s.applied_index) >= Number(target)) ? true : undefined),
    30_000,
  );
}

describe('snapshots triggered by bytes', () => {
  it('members snapshot on bytes alone; a restarted member loads its snapshot, replays the tail, and answers exactly as before', async () => {
    await propose(Array.from({ length: KEYS }, (_, i) => putRequest(key(i), value(i, 1))));
    await propose(Array.from({ length: KEYS / 3 }, (_, i) => putRequest(key(i * 3), value(i * 3, 2))));
    await propose(Array.from({ length: KEYS / 10 }, (_, i) => deleteRequest(key(i * 10 + 1))));
    await appliedEverywhere();
    const leader = await cluster.waitForLeader(10_000);
    const follower = others(cluster, leader)[0]!;
    const before = await picture(follower);
    expect(before).toContain(`keys ${KEYS - KEYS / 10}`);
    const raftIndex = Number((await cluster.client(follower).status()).applied_index);
    // about 1 MB of entries, far fewer than a million: only the byte trigger can have fired
    const written = await lastLogLine(cluster.member(follower).logFile, 'snapshot written');
    expect(written?.index).toBeGreaterThan(0);

    await cluster.kill(follower);
    await cluster.startMember(follower);
    const opened = await lastLogLine(cluster.member(follower).logFile, 'log opened');
    const snapshotIndex = opened?.snapshotIndex as number;
    expect(snapshotIndex).toBeGreaterThanOrEqual(written?.index as number);
    // the tail replayed is shorter than the log: the snapshot covered the rest
    expect(raftIndex - snapshotIndex).toBeLessThan(raftIndex / 2);
    await eventually('the restarted member answers as before', async () => ((await picture(follower)) === before ? true : undefined), 30_000);

    // the whole cluster, stopped and started again, answers the same on every member
    for (const member of cluster.members) await cluster.kill(member.id, 'SIGTERM');
    for (const member of cluster.members) await cluster.startMember(member.id);
    await cluster.waitForLeader(30_000);
    for (const member of cluster.members) {
      const reopened = await lastLogLine(cluster.member(member.id).logFile, 'log opened');
      expect(reopened?.snapshotIndex).toBeGreaterThan(0);
      await eventually(`member ${member.id} answers as before`, async () => ((await picture(member.id)) === before ? true : undefined), 30_000);
    }
    // and carries on
    await propose([putRequest(key(0), value(0, 3))]);
    await appliedEverywhere();
    expect(await localValue(cluster.client(follower), key(0))).toBe(value(0, 3));
  });
});
