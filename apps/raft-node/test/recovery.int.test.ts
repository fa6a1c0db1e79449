// Restarts: from the member's own snapshot + WAL, through a snapshot installed from the leader
// when far behind the compacted log, after a torn WAL tail (repaired), and a flipped byte in the
// middle of the WAL (the member refuses to start, naming file and offset).
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@ward/testing/etcd-harness';
import { LocalCluster, buildRaftNodeBundle, getRequest, putRequest } from '@ward/testing/cluster';
import { localValue, others, valueOf } from './helpers';
import { frames, lastLogLine, walSegments } from './wal-files';

let cluster: LocalCluster;

beforeAll(async () => {
  // Small snapshot interval and catch-up tail so that a short test compacts the log.
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), env: { RAFT_NODE_SNAPSHOT_ENTRIES_COUNT: '50', RAFT_NODE_SNAPSHOT_CATCH_UP_ENTRIES_COUNT: '20' } });
  await cluster.waitForLeader(30_000);
});
afterAll(async () => {
  await cluster?.stop();
});

async function write(prefix: string, count: number): Promise<void> {
  const leader = await cluster.waitForLeader(20_000);
  const client = cluster.client(leader);
  for (let start = 0; start < count; start += 20) {
    const batch = Array.from({ length: Math.min(20, count - start) }, (_, i) => client.propose(putRequest(`${prefix}-${start + i}`, `${prefix}-${start + i}`), 5000));
    for (const answer of await Promise.all(batch)) expect(answer.kind).toBe('ok');
  }
}

/** Waits until `id` applied as far as the leader and holds the last key written. */
async function caughtUp(id: bigint, key: string): Promise<number> {
  const started = performance.now();
  await eventually(`member ${id} catches up`, async () => ((await localValue(cluster.client(id), key)) === key ? true : undefined), 30_000);
  const leader = await cluster.waitForLeader(10_000);
  const [mine, theirs] = await Promise.all([cluster.client(id).status(), cluster.client(leader).status()]);
  expect(mine.revision).toBe(theirs.revision);
  return performance.now() - started;
}

describe('member restarts', () => {
  it('restarts from its own snapshot plus the WAL after kill -9', async () => {
    await write('own', 120);
    const follower = others(cluster, await cluster.waitForLeader(10_000))[0]!;
    await cluster.kill(follower);
    const started = performance.now();
    await cluster.startMember(follower);
    const opened = await lastLogLine(cluster.member(follower).logFile, 'log opened');
    expect(opened?.snapshotIndex).toBeGreaterThan(0);
    const ms = await caughtUp(follower, 'own-119');
    console.log(`restart from snapshot ${String(opened?.snapshotIndex)} + WAL: serving and caught up ${Math.round(performance.now() - started)} ms after spawn (${Math.round(ms)} ms after /healthz)`);
  });

  it('catches up through a snapshot installed from the leader when far behind the compacted log', async () => {
    const follower = others(cluster, await cluster.waitForLeader(10_000))[0]!;
    await cluster.kill(follower);
    await write('far', 300);
    const started = performance.now();
    await cluster.startMember(follower);
    await caughtUp(follower, 'far-299');
    const installed = await lastLogLine(cluster.member(follower).logFile, 'snapshot installed from the leader');
    expect(installed?.index).toBeGreaterThan(300);
    // Received into its file as it came (never joined in memory), then named a snapshot file.
    expect(installed?.bytes).toBeGreaterThan(0);
    const snapFiles = await readdir(join(cluster.member(follower).dataDir, 'snap'));
    const hex = (n: number): string => n.toString(16).padStart(16, '0');
    expect(snapFiles).toContain(`${hex(installed!.term as number)}-${hex(installed!.index as number)}.snap`);
    expect(snapFiles.filter((name) => !name.endsWith('.snap'))).toEqual([]);
    console.log(`far behind: installed snapshot at index ${String(installed?.index)}, caught up ${Math.round(performance.now() - started)} ms after spawn`);
    // and everything written while it was down is there
    for (const i of [0, 150, 299]) expect(await localValue(cluster.client(follower), `far-${i}`)).toBe(`far-${i}`);
  });

  it('repairs a torn WAL tail (a record whose write never completed) and catches up', async () => {
    const follower = others(cluster, await cluster.waitForLeader(10_000))[0]!;
    await write('torn', 30);
    await cluster.kill(follower);
    // A crash in the middle of writing one more record: half of a frame after the last complete
    // one, and nothing after it. (Cutting a record that was already synced would lose data the
    // member had acknowledged: a lying disk, which Raft cannot repair.)
    const segment = (await walSegments(cluster.member(follower).dataDir)).at(-1)!;
    const last = (await frames(segment)).at(-1)!;
    const end = last.offset + last.bytes;
    const file = await open(segment, 'r+');
    const copy = Buffer.alloc(last.bytes);
    await file.read(copy, 0, last.bytes, last.offset);
    await file.write(copy, 0, Math.max(12, Math.floor(last.bytes / 2)), end);
    await file.truncate(end + Math.max(12, Math.floor(last.bytes / 2)));
    await file.close();
    await cluster.startMember(follower);
    const opened = await lastLogLine(cluster.member(follower).logFile, 'log opened');
    expect((opened?.report as { wal: { tornTail?: { offset: number } } }).wal.tornTail?.offset).toBe(end);
    await write('after-torn', 10);
    await caughtUp(follower, 'after-torn-9');
  });

  it('refuses to start after a flipped byte in the middle of the WAL, naming file and offset', async () => {
    const leader = await cluster.waitForLeader(10_000);
    const follower = others(cluster, leader)[0]!;
    await cluster.kill(follower);
    const segment = (await walSegments(cluster.member(follower).dataDir))[0]!;
    const all = await frames(segment);
    const victim = all[Math.floor(all.length / 2)]!;
    const file = await open(segment, 'r+');
    const byte = Buffer.alloc(1);
    await file.read(byte, 0, 1, victim.offset + 16);
    byte[0] = byte[0]! ^ 0x10;
    await file.write(byte, 0, 1, victim.offset + 16);
    await file.close();
    const process = cluster.spawnMember(follower);
    const exit = await process.exited;
    expect(exit.code).toBe(1);
    expect(process.stderr).toMatch(new RegExp(`write-ahead log corrupt in \\S*${segment.split('/').at(-1)!.replace('.', '\\.')} at byte offset ${victim.offset}`));
    // the other two carry on
    expect(valueOf(await cluster.client(leader).read(getRequest('torn-0'), false, 5000))).toBe('torn-0');
  });
});
