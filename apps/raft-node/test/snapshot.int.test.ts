// The internal Snapshot stream of real members: followers name the leader, the leader streams a
// backup file in chunks of at most 32 KiB that only advance while the reader reads (backpressure),
// at most two streams at a time per member, and the bytes form a file that decodes and restores
// to the leader's state.
import type { ClientReadableStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import { Applier } from '@ward/etcd/apply';
import type { NodeResponse__Output } from '@ward/etcd/proto';
import { LocalCluster, buildRaftNodeBundle, putRequest } from '@ward/testing/cluster';
import { decodeBackup } from '../src/backup/backup-file';
import { decodeNodeSnapshot } from '../src/membership/codec';

let cluster: LocalCluster;
let leader: bigint;
const VALUE_BYTES = 1_000_000;
const VALUES = 6;

/** Waits for the leader of `members` and writes VALUES values of VALUE_BYTES through it. */
async function fill(members: LocalCluster): Promise<bigint> {
  const elected = await members.waitForLeader(30_000);
  for (let i = 0; i < VALUES; i++) {
    const answer = await members.client(elected).propose(putRequest(`big/${i}`, new Uint8Array(VALUE_BYTES).fill(i + 1)), 10_000);
    expect(answer.kind).toBe('ok');
  }
  return elected;
}

beforeAll(async () => {
  cluster = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 3 });
  leader = await fill(cluster);
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

function open(member: bigint, username = '', on: LocalCluster = cluster): ClientReadableStream<NodeResponse__Output> {
  const raw = on.client(member).raw as unknown as { Snapshot(request: object): ClientReadableStream<NodeResponse__Output> };
  return raw.Snapshot({ username, auth_revision: '0' });
}

/** Every message of a stream, in order; `paused` reads nothing until `resume()`. */
function reader(stream: ClientReadableStream<NodeResponse__Output>, paused = false): { done: Promise<NodeResponse__Output[]>; resume(): void; count(): number } {
  const messages: NodeResponse__Output[] = [];
  const done = new Promise<NodeResponse__Output[]>((resolve, reject) => {
    stream.on('data', (message: NodeResponse__Output) => messages.push(message));
    stream.once('error', reject);
    stream.once('end', () => resolve(messages));
  });
  // A consumer that stops reading: grpc-js stops reading the HTTP/2 stream once its buffer is full.
  if (paused) stream.pause();
  return { done, resume: () => stream.resume(), count: () => messages.length };
}

const collect = (stream: ClientReadableStream<NodeResponse__Output>): Promise<NodeResponse__Output[]> => reader(stream).done;

interface Chunk {
  header: { revision: string; member_id: string };
  remaining_bytes: string;
  blob: Buffer;
}

function file(messages: readonly NodeResponse__Output[]): { chunks: Chunk[]; bytes: Buffer } {
  // The first answer only says the stream was accepted (before the state is sized): no bytes.
  expect(messages[0]!.result).toBe('response');
  expect(messages[0]!.response!.length).toBe(0);
  const chunks = messages.slice(1).map((m) => {
    expect(m.result).toBe('response');
    return decodeEtcdMessage<Chunk>('etcdserverpb.SnapshotResponse', m.response!);
  });
  return { chunks, bytes: Buffer.concat(chunks.map((c) => c.blob)) };
}

describe('wardnode.Node/Snapshot', () => {
  it('a follower answers with one not_leader message naming the leader', async () => {
    const follower = cluster.members.find((m) => m.id !== leader)!.id;
    const messages = await collect(open(follower));
    expect(messages).toHaveLength(1);
    expect(messages[0]!.result).toBe('not_leader');
    expect(messages[0]!.not_leader!.leader_id).toBe(leader.toString());
    expect(messages[0]!.not_leader!.leader_address).toBe(cluster.member(leader).apiAddress);
  }, 30_000);

  it('streams 32 KiB chunks only as they are read, at most two streams at once, and the file restores the state', async () => {
    // Two streams whose readers stop: the leader may not run ahead of them (the file is ~6 MB),
    // so both stay open and take the two slots.
    const first = reader(open(leader), true);
    const second = reader(open(leader), true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(first.count()).toBe(0);
    const third = await collect(open(leader));
    expect(third).toHaveLength(1);
    expect(third[0]!.error).toMatchObject({ code: 8, message: 'etcdserver: too many requests' });

    first.resume();
    second.resume();
    const [a, b] = await Promise.all([first.done, second.done]);
    const one = file(a);
    const two = file(b);
    expect(one.bytes.equals(two.bytes)).toBe(true);
    expect(one.chunks.length).toBeGreaterThan(VALUES * VALUE_BYTES / 32_768);
    expect(one.chunks.every((c) => c.blob.length <= 32 * 1024)).toBe(true);
    let left = one.bytes.length;
    for (const chunk of one.chunks) {
      left -= chunk.blob.length;
      expect(Number(chunk.remaining_bytes)).toBe(left);
      expect(chunk.header.member_id).toBe(leader.toString());
    }
    expect(one.bytes.length % 512).toBe(32);

    const backup = await decodeBackup(one.bytes);
    const content = decodeNodeSnapshot(backup.state);
    const state = Applier.restore(content.applier);
    // the backup carries the member list (ids, names, addresses, learner flags) of the cluster
    const listed = await cluster.client(leader).memberList();
    expect(content.members?.members.map((m) => [m.id.toString(), m.name, `http://${m.peerAddress}`, m.apiAddress, m.isLearner])).toEqual(
      listed.members.map((m) => [m.id, m.name, m.peer_urls[0], m.api_address, m.is_learner]),
    );
    expect(backup.revision).toBe(state.keySpaceView.currentRevision);
    expect(backup.revision).toBe(Number(one.chunks[0]!.header.revision));
    expect(backup.revision).toBe(VALUES + 1);
    const status = await cluster.client(leader).status();
    expect(backup.index).toBeLessThanOrEqual(Number(status.applied_index));
    expect(backup.index).toBeGreaterThanOrEqual(state.appliedIndex);

    // The slots are free again.
    expect(file(await collect(open(leader))).bytes.equals(one.bytes)).toBe(true);
  }, 60_000);
});

describe('wardnode.Node/Snapshot with a reader that stops', () => {
  let small: LocalCluster;
  let one: bigint;

  beforeAll(async () => {
    small = await LocalCluster.start({ entry: buildRaftNodeBundle(), size: 1, env: { RAFT_NODE_SNAPSHOT_STALL_TIMEOUT_MS: '1000' } });
    one = await fill(small);
  }, 120_000);

  afterAll(async () => {
    await small?.stop();
  });

  it('loses its stream after RAFT_NODE_SNAPSHOT_STALL_TIMEOUT_MS without taking anything, which frees its slot', async () => {
    const stalled = [reader(open(one, '', small), true), reader(open(one, '', small), true)];
    const outcomes = Promise.all(stalled.map((s) => s.done.then(() => 'ended', (error: { code?: number }) => error.code)));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(stalled.map((s) => s.count())).toEqual([0, 0]);
    // Both slots are free again: a third stream gets the whole file.
    const third = file(await collect(open(one, '', small)));
    expect((await decodeBackup(third.bytes)).revision).toBe(VALUES + 1);
    // The stalled readers never get a complete file: their streams were reset (CANCELLED).
    for (const s of stalled) s.resume();
    expect(await outcomes).toEqual([1, 1]);
  }, 60_000);

  /** A stream read up to its first message with bytes (the state is sized), then paused (the leader stops at its buffer). */
  const openPaused = async (): Promise<{ done: Promise<NodeResponse__Output[]>; resume(): void }> => {
    const stream = open(one, '', small);
    const messages: NodeResponse__Output[] = [];
    const done = new Promise<NodeResponse__Output[]>((resolve, reject) => {
      stream.once('error', reject);
      stream.once('end', () => resolve(messages));
    });
    await new Promise<void>((resolve) =>
      stream.on('data', (message: NodeResponse__Output) => {
        messages.push(message);
        if ((message.response?.length ?? 0) > 0 && messages.length === 2) {
          stream.pause();
          resolve();
        }
      }),
    );
    return { done, resume: () => stream.resume() };
  };

  it('streams the state of the moment it began while writes go on; a compaction before it is out ends it with etcd\'s timeout', async () => {
    // 12 MB: more than one turn of encoding (SNAPSHOT_TURN_BYTES), so the state is still being
    // read from the store when the reader pauses.
    for (let i = VALUES; i < 2 * VALUES; i++) {
      const answer = await small.client(one).propose(putRequest(`big/${i}`, new Uint8Array(VALUE_BYTES).fill(i + 1)), 10_000);
      expect(answer.kind).toBe('ok');
    }
    const revision = 2 * VALUES + 1;
    const writing = await openPaused();
    expect((await small.client(one).propose(putRequest('big/0', 'overwritten'), 10_000)).kind).toBe('ok');
    writing.resume();
    const whole = file(await writing.done);
    const backup = await decodeBackup(whole.bytes);
    expect(backup.revision).toBe(revision);
    const state = Applier.restore(decodeNodeSnapshot(backup.state).applier);
    const big0 = state.keySpaceView.range({ key: new TextEncoder().encode('big/0') });
    expect(big0.kvs.map((kv) => [kv.value.length, kv.value[0]])).toEqual([[VALUE_BYTES, 1]]);

    const compacted = await openPaused();
    expect((await small.client(one).propose(putRequest('big/1', 'overwritten'), 10_000)).kind).toBe('ok');
    const compaction = await small.client(one).propose({ header: { id: 0n, username: '', authRevision: 0 }, operation: { type: 'compact', request: { revision: revision + 2, physical: false } } }, 10_000);
    expect(compaction.kind).toBe('ok');
    compacted.resume();
    const messages = await compacted.done;
    expect(messages.slice(0, -1).every((m) => m.result === 'response')).toBe(true);
    expect(messages.at(-1)!.error).toMatchObject({ code: 14, message: 'etcdserver: request timed out' });
    // What went out before is not a file etcdctl would keep (it checks the size and the SHA-256).
    await expect(decodeBackup(file(messages.slice(0, -1)).bytes)).rejects.toThrow();
  }, 60_000);
});
