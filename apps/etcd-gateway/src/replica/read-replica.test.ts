import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { Applier, encodeApplyRequest, type ApplyOperation } from '@ward/etcd/apply';
import type { FollowMessage__Output } from '@ward/etcd/proto';
import { createLogger } from '@ward/platform/logging';
import { ReadReplica, type FollowFrom, type FollowStream, type ReadReplicaOptions } from './read-replica';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const put = (key: string, value: string): ApplyOperation => ({ type: 'put', request: { key: utf8(key), value: utf8(value) } });
const get = (key: string): ApplyOperation => ({ type: 'range', request: { key: utf8(key) } });
const entry = (index: number, operation: ApplyOperation) => ({ index: String(index), data: Buffer.from(encodeApplyRequest({ header: { id: BigInt(index), username: '', authRevision: 0 }, operation })) });

/** A Follow stream whose messages the test sends; paused, it holds them back (as a Readable does) unless told not to. */
class FakeStream extends EventEmitter {
  cancelled = false;
  paused = false;
  private held: FollowMessage__Output[] = [];
  constructor(private readonly ignorePause = false) {
    super();
  }
  cancel(): void {
    this.cancelled = true;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    while (!this.paused && this.held.length > 0) this.emit('data', this.held.shift());
  }
  send(message: Partial<FollowMessage__Output>): void {
    const whole = { cluster_id: '7', member_id: '2', raft_term: '3', applied_index: '0', applied_term: '0', snapshot: null, entries: [], ...message };
    if (this.paused && !this.ignorePause) this.held.push(whole);
    else this.emit('data', whole);
  }
}

function replicaWith(streams: FakeStream[], maxSnapshotBytes = 1 << 20, froms: (FollowFrom | undefined)[] = [], extra: Partial<ReadReplicaOptions> = {}): ReadReplica {
  let next = 0;
  return new ReadReplica({
    open: async (from) => {
      froms.push(from);
      return streams[next++] as unknown as FollowStream;
    },
    maxEntryBytes: 1 << 20,
    maxSnapshotBytes,
    maxWaiting: 10,
    minRetryMs: 1,
    maxRetryMs: 2,
    logger: createLogger({ name: 'test', level: 'silent' }),
    ...extra,
  });
}

/** A clock that moves 1 ms each time it is read: a turn of `applyTurnMs` applies that many entries. */
function steppingClock(): () => number {
  let ms = 0;
  return () => ++ms;
}

function valueOf(replica: ReadReplica, key: string): string | undefined {
  const result = replica.read({ header: { id: 1n, username: '', authRevision: 0 }, operation: get(key) });
  if (!result.ok || result.result.type !== 'range') throw new Error('read failed');
  const kv = result.result.response.kvs[0];
  return kv === undefined ? undefined : new TextDecoder().decode(kv.value);
}

const tick = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('ReadReplica', () => {
  it('restores the chunked snapshot, then applies entries in order and releases waiters at their index', async () => {
    const source = Applier.create();
    source.apply(1, { header: { id: 1n, username: '', authRevision: 0 }, operation: put('a', '1') });
    const bytes = Buffer.from(source.snapshot());
    const stream = new FakeStream();
    const replica = replicaWith([stream]);
    replica.start();
    await tick();
    expect(replica.ready).toBe(false);
    const half = Math.floor(bytes.length / 2);
    stream.send({ applied_index: '4', snapshot: { index: '4', limits: null, chunk: bytes.subarray(0, half), last: false } });
    expect(replica.ready).toBe(false);
    stream.send({ applied_index: '4', snapshot: { index: '4', limits: null, chunk: bytes.subarray(half), last: true } });
    expect(replica.ready).toBe(true);
    expect(replica.appliedIndex).toBe(4);
    expect(valueOf(replica, 'a')).toBe('1');
    expect(replica.context).toEqual({ clusterId: 7n, memberId: 2n, raftTerm: 3 });

    const reached = replica.waitApplied(7, 1000);
    const late = replica.waitApplied(9, 20);
    stream.send({ applied_index: '7', entries: [entry(5, put('a', '2')), entry(6, put('b', '3'))] });
    expect(await reached).toBe('reached');
    expect(valueOf(replica, 'a')).toBe('2');
    expect(valueOf(replica, 'b')).toBe('3');
    expect(replica.appliedIndex).toBe(7);
    // Entries at or below the applied index are not applied twice.
    stream.send({ applied_index: '7', entries: [entry(5, put('a', 'again'))] });
    expect(valueOf(replica, 'a')).toBe('2');
    expect(await late).toBe('timeout');
    replica.stop();
  });

  it('answers as compacted at once when a compaction is applied, and cuts its dropped versions in turns after', async () => {
    const source = Applier.create();
    const stream = new FakeStream();
    const replica = replicaWith([stream]);
    replica.start();
    await tick();
    stream.send({ applied_index: '0', snapshot: { index: '0', limits: null, chunk: Buffer.from(source.snapshot()), last: true } });
    const writes = Array.from({ length: 3000 }, (_, i) => entry(i + 1, put(`k/${i % 1000}`, `v${i}`)));
    stream.send({ applied_index: '3000', entries: writes });
    const compact: ApplyOperation = { type: 'compact', request: { revision: 3001, physical: false } };
    stream.send({ applied_index: '3001', entries: [entry(3001, compact)] });
    // The 3,000 puts may take more than a turn: both messages are applied once the index is reached.
    expect(await replica.waitApplied(3001, 5000)).toBe('reached');
    // Whole for every answer at once: a read below the compaction is refused.
    const old = replica.read({ header: { id: 1n, username: '', authRevision: 0 }, operation: { type: 'range', request: { key: utf8('k/1'), revision: 10 } } });
    expect(old).toMatchObject({ ok: false, error: { message: 'etcdserver: mvcc: required revision has been compacted' } });
    expect(replica.compactionPending).toBe(true);
    for (let turns = 0; turns < 100 && replica.compactionPending; turns++) await tick(1);
    expect(replica.compactionPending).toBe(false);
    expect(valueOf(replica, 'k/1')).toBe('v2001');
    replica.stop();
  });

  it('drops its state when the stream ends and syncs again from the next one', async () => {
    const first = new FakeStream();
    const second = new FakeStream();
    const replica = replicaWith([first, second]);
    replica.start();
    await tick();
    first.send({ applied_index: '1', snapshot: { index: '1', limits: null, chunk: Buffer.from(Applier.create().snapshot()), last: true } });
    expect(replica.ready).toBe(true);
    const waiting = replica.waitApplied(5, 10_000);
    first.emit('error', new Error('member gone'));
    expect(replica.ready).toBe(false);
    expect(await waiting).toBe('refused');
    expect(await replica.waitApplied(1, 10)).toBe('refused');
    await tick(20);
    second.send({ applied_index: '3', snapshot: { index: '3', limits: null, chunk: Buffer.from(Applier.create().snapshot()), last: true } });
    expect(replica.ready).toBe(true);
    expect(replica.resyncCount).toBe(1);
    replica.stop();
    expect(second.cancelled).toBe(true);
  });

  it('keeps its state when the stream ends, and goes on from it when the next stream sends entries', async () => {
    const source = Applier.create();
    source.apply(3, { header: { id: 3n, username: '', authRevision: 0 }, operation: put('a', '1') });
    const streams = [new FakeStream(), new FakeStream(), new FakeStream()];
    const froms: (FollowFrom | undefined)[] = [];
    const replica = replicaWith(streams, 1 << 20, froms);
    replica.start();
    await tick();
    streams[0]!.send({ applied_index: '3', applied_term: '2', snapshot: { index: '3', limits: null, chunk: Buffer.from(source.snapshot()), last: true } });
    streams[0]!.send({ applied_index: '6', applied_term: '3', entries: [entry(5, put('b', '2'))] });
    expect(replica.appliedIndex).toBe(6);
    streams[0]!.emit('end');
    // Not served while no stream feeds it.
    expect(replica.ready).toBe(false);
    expect(await replica.waitApplied(6, 10)).toBe('refused');
    await tick(20);
    expect(froms).toEqual([undefined, { index: 6, term: 3 }]);
    streams[1]!.send({ member_id: '5', applied_index: '9', applied_term: '4', entries: [entry(8, put('a', '3'))] });
    expect(replica.ready).toBe(true);
    expect(replica.resumeCount).toBe(1);
    expect(replica.appliedIndex).toBe(9);
    expect(valueOf(replica, 'a')).toBe('3');
    expect(valueOf(replica, 'b')).toBe('2');
    expect(replica.context).toEqual({ clusterId: 7n, memberId: 5n, raftTerm: 3 });

    // A member that cannot go on from there sends a snapshot: the kept state is replaced.
    streams[1]!.emit('error', new Error('member gone'));
    await tick(20);
    expect(froms.at(-1)).toEqual({ index: 9, term: 4 });
    streams[2]!.send({ applied_index: '12', applied_term: '4', snapshot: { index: '12', limits: null, chunk: Buffer.from(Applier.create().snapshot()), last: true } });
    expect(replica.ready).toBe(true);
    expect(replica.resumeCount).toBe(1);
    expect(replica.appliedIndex).toBe(12);
    expect(valueOf(replica, 'a')).toBeUndefined();
    replica.stop();
  });

  it('does not go on from a state of another cluster, nor from one whose applied term is not known', async () => {
    const streams = [new FakeStream(), new FakeStream(), new FakeStream(), new FakeStream()];
    const froms: (FollowFrom | undefined)[] = [];
    const replica = replicaWith(streams, 1 << 20, froms);
    replica.start();
    await tick();
    streams[0]!.send({ applied_index: '1', applied_term: '2', snapshot: { index: '1', limits: null, chunk: Buffer.from(Applier.create().snapshot()), last: true } });
    streams[0]!.emit('end');
    await tick(20);
    expect(froms.at(-1)).toEqual({ index: 1, term: 2 });
    streams[1]!.send({ cluster_id: '8', applied_index: '2', applied_term: '2', entries: [] });
    expect(replica.ready).toBe(false);
    expect(streams[1]!.cancelled).toBe(true);
    await tick(20);
    // The mismatch dropped the state: the next stream starts from a snapshot.
    expect(froms.at(-1)).toBeUndefined();
    streams[2]!.send({ applied_index: '1', applied_term: '0', snapshot: { index: '1', limits: null, chunk: Buffer.from(Applier.create().snapshot()), last: true } });
    expect(replica.ready).toBe(true);
    streams[2]!.emit('end');
    await tick(20);
    expect(froms.at(-1)).toBeUndefined();
    replica.stop();
  });

  it('gives up a feed that breaks its rules: entries before a snapshot, a snapshot over the bound', async () => {
    const early = new FakeStream();
    const big = new FakeStream();
    const replica = replicaWith([early, big], 16);
    replica.start();
    await tick();
    early.send({ applied_index: '2', entries: [entry(2, put('x', 'y'))] });
    expect(early.cancelled).toBe(true);
    await tick(20);
    big.send({ applied_index: '1', snapshot: { index: '1', limits: null, chunk: Buffer.alloc(32), last: false } });
    expect(big.cancelled).toBe(true);
    expect(replica.ready).toBe(false);
    replica.stop();
  });

  it('asks for a state too large again only after tooLargeRetryMs, whether the member refused it or sent it anyway', async () => {
    const refused = new FakeStream();
    const sent = new FakeStream();
    const last = new FakeStream();
    const opened: number[] = [];
    let next = 0;
    const streams = [refused, sent, last];
    const replica = replicaWith([], 16, [], {
      tooLargeRetryMs: 80,
      open: async () => {
        opened.push(performance.now());
        return streams[next++] as unknown as FollowStream;
      },
    });
    replica.start();
    await tick();
    // The member's answer to a state over the bound it was told.
    refused.emit('error', Object.assign(new Error('9 FAILED_PRECONDITION: the state is 40 bytes'), { code: 9, details: 'the state is 40 bytes' }));
    await tick(20);
    expect(opened.length).toBe(1);
    await tick(100);
    expect(opened.length).toBe(2);
    // A member that does not know the bound sends more than it: cancelled, asked again as late.
    sent.send({ applied_index: '1', snapshot: { index: '1', limits: null, chunk: Buffer.alloc(32), last: false } });
    expect(sent.cancelled).toBe(true);
    await tick(20);
    expect(opened.length).toBe(2);
    await tick(100);
    expect(opened.length).toBe(3);
    expect(opened[2]! - opened[1]!).toBeGreaterThanOrEqual(75);
    expect(replica.ready).toBe(false);
    replica.stop();
  });

  it('decodes a snapshot chunk by chunk; a damaged chunk ends the feed, and the next stream starts afresh', async () => {
    const source = Applier.create();
    for (let i = 1; i <= 300; i++) source.apply(i, { header: { id: BigInt(i), username: '', authRevision: 0 }, operation: put(`key/${String(i).padStart(3, '0')}`, `value ${i}`.repeat(20)) });
    const bytes = Buffer.from(source.snapshot());
    const chunks = Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) => bytes.subarray(i * 4096, (i + 1) * 4096));
    expect(chunks.length).toBeGreaterThan(10);
    const damaged = new FakeStream();
    const whole = new FakeStream();
    const replica = replicaWith([damaged, whole]);
    replica.start();
    await tick();
    // A key's bytes flipped in the fifth chunk: the key space's checks refuse it as it comes,
    // before the last chunk (the state is not gathered whole first).
    const spoilt = Buffer.from(chunks[4]!);
    spoilt.fill(0xff, 0, 1000);
    for (const [i, chunk] of chunks.slice(0, 6).entries()) {
      damaged.send({ applied_index: '300', snapshot: { index: '300', limits: null, chunk: i === 4 ? spoilt : chunk, last: false } });
    }
    expect(damaged.cancelled).toBe(true);
    expect(replica.ready).toBe(false);
    await tick(20);
    for (const [i, chunk] of chunks.entries()) {
      // Each chunk a buffer the stream reuses: overwritten once handed over.
      const reused = Buffer.from(chunk);
      whole.send({ applied_index: '300', snapshot: { index: '300', limits: null, chunk: reused, last: i === chunks.length - 1 } });
      reused.fill(0);
    }
    expect(replica.ready).toBe(true);
    expect(replica.appliedIndex).toBe(300);
    expect(valueOf(replica, 'key/123')).toBe('value 123'.repeat(20));
    replica.stop();
  });
  describe('a message of many entries', () => {
    const synced = async (stream: FakeStream, replica: ReadReplica): Promise<void> => {
      replica.start();
      await tick();
      stream.send({ applied_index: '1', applied_term: '2', snapshot: { index: '1', limits: null, chunk: Buffer.from(Applier.create().snapshot()), last: true } });
      expect(replica.ready).toBe(true);
    };
    const puts = (from: number, count: number) => Array.from({ length: count }, (_, i) => entry(from + i, put(`k/${from + i}`, `v${from + i}`)));

    for (const ignorePause of [false, true]) {
      it(`is applied in turns, the stream paused meanwhile, and what came behind it after (${ignorePause ? 'a stream that delivers while paused' : 'a stream that holds back'})`, async () => {
        const stream = new FakeStream(ignorePause);
        const replica = replicaWith([stream], 1 << 20, [], { applyTurnMs: 3, now: steppingClock() });
        await synced(stream, replica);
        const whole = replica.waitApplied(25, 1000);
        // Resolved in a later turn, when the replica is at that turn's end: still short of the message's end.
        const halfway = replica.waitApplied(8, 1000).then((outcome) => [outcome, replica.appliedIndex]);
        stream.send({ applied_index: '21', applied_term: '2', entries: puts(2, 20) });
        // One turn's worth applied, not the message: reads see a prefix of the log.
        const first = replica.appliedIndex;
        expect(first).toBeGreaterThan(1);
        expect(first).toBeLessThan(21);
        expect(stream.paused).toBe(true);
        expect(valueOf(replica, `k/${first}`)).toBe(`v${first}`);
        expect(valueOf(replica, `k/${first + 1}`)).toBeUndefined();
        stream.send({ applied_index: '25', applied_term: '3', entries: puts(22, 3) });
        expect(replica.appliedIndex).toBe(first);
        const [outcome, atHalfway] = await halfway;
        expect(outcome).toBe('reached');
        expect(atHalfway).toBeGreaterThanOrEqual(8);
        expect(atHalfway).toBeLessThan(21);
        expect(await whole).toBe('reached');
        expect(replica.appliedIndex).toBe(25);
        expect(stream.paused).toBe(false);
        for (const i of [2, 13, 21, 24]) expect(valueOf(replica, `k/${i}`)).toBe(`v${i}`);
        replica.stop();
      });
    }

    it('is applied whole when the stream ends halfway, and the state is kept at the message\'s index and term', async () => {
      const streams = [new FakeStream(), new FakeStream()];
      const froms: (FollowFrom | undefined)[] = [];
      const replica = replicaWith(streams, 1 << 20, froms, { applyTurnMs: 3, now: steppingClock() });
      await synced(streams[0]!, replica);
      streams[0]!.send({ applied_index: '22', applied_term: '5', entries: puts(2, 20) });
      expect(replica.appliedIndex).toBeLessThan(21);
      streams[0]!.emit('error', new Error('member gone'));
      expect(replica.ready).toBe(false);
      await tick(20);
      // Kept at the message's end: the feed said that index's term.
      expect(froms).toEqual([undefined, { index: 22, term: 5 }]);
      streams[1]!.send({ applied_index: '23', applied_term: '5', entries: [entry(23, put('k/2', 'again'))] });
      expect(replica.resumeCount).toBe(1);
      expect(valueOf(replica, 'k/21')).toBe('v21');
      expect(valueOf(replica, 'k/2')).toBe('again');
      replica.stop();
    });
  });
});

describe('ReadReplica fed by a member other than the leader', () => {
  const snapshotOf = (source: Applier, index: number) => ({ index: String(index), limits: null, chunk: Buffer.from(source.snapshot()), last: true });

  it('moves its feed to the leader once synced, keeping its state, and stays there', async () => {
    const source = Applier.create();
    source.apply(3, { header: { id: 3n, username: '', authRevision: 0 }, operation: put('a', '1') });
    const streams = [new FakeStream(), new FakeStream()];
    const froms: (FollowFrom | undefined)[] = [];
    let leader: bigint | undefined = 5n;
    const replica = replicaWith(streams, 1 << 20, froms, { leader: () => leader, minMoveIntervalMs: 1000 });
    replica.start();
    await tick();
    // Member 2 feeds it first (the leader was not reachable, or not known when it opened).
    streams[0]!.send({ applied_index: '3', applied_term: '2', snapshot: snapshotOf(source, 3) });
    streams[0]!.send({ applied_index: '6', applied_term: '3', entries: [entry(5, put('b', '2'))] });
    await vi.waitFor(() => expect(froms).toHaveLength(2));
    expect(replica.moveCount).toBe(1);
    expect(streams[0]!.cancelled).toBe(true);
    expect(froms).toEqual([undefined, { index: 6, term: 3 }]);
    // A move is not a failure of the feed.
    expect(replica.resyncCount).toBe(0);
    streams[1]!.send({ member_id: '5', applied_index: '8', applied_term: '3', entries: [entry(7, put('a', '3'))] });
    expect(replica.ready).toBe(true);
    expect(replica.resumeCount).toBe(1);
    expect(valueOf(replica, 'a')).toBe('3');
    expect(valueOf(replica, 'b')).toBe('2');
    // Fed by the leader: a leader change that names it again, or no leader, moves nothing.
    replica.leaderChanged();
    leader = undefined;
    replica.leaderChanged();
    await tick(20);
    expect(replica.moveCount).toBe(1);
    expect(streams[1]!.cancelled).toBe(false);
    replica.stop();
  });

  it('moves at most once per interval, the interval doubling while moves do not reach the leader', async () => {
    let ms = 0;
    const streams = Array.from({ length: 4 }, () => new FakeStream());
    const froms: (FollowFrom | undefined)[] = [];
    const replica = replicaWith(streams, 1 << 20, froms, { leader: () => 9n, minMoveIntervalMs: 40, maxMoveIntervalMs: 60, now: () => ms });
    replica.start();
    await tick();
    streams[0]!.send({ applied_index: '3', applied_term: '2', snapshot: snapshotOf(Applier.create(), 3) });
    await vi.waitFor(() => expect(froms).toHaveLength(2));
    expect(replica.moveCount).toBe(1);
    // The next feed is again not the leader's (member 2): the next move waits for the interval.
    streams[1]!.send({ applied_index: '4', applied_term: '2', entries: [entry(4, put('a', '1'))] });
    expect(replica.resumeCount).toBe(1);
    await tick(20);
    expect(replica.moveCount).toBe(1);
    ms = 40;
    await vi.waitFor(() => expect(froms).toHaveLength(3));
    expect(replica.moveCount).toBe(2);
    expect(froms).toEqual([undefined, { index: 3, term: 2 }, { index: 4, term: 2 }]);
    // Not reached again: the interval doubled (80), bounded by maxMoveIntervalMs (60): not before 100.
    streams[2]!.send({ applied_index: '5', applied_term: '2', entries: [entry(5, put('a', '2'))] });
    expect(replica.resumeCount).toBe(2);
    ms = 90;
    await tick(80);
    expect(replica.moveCount).toBe(2);
    ms = 100;
    replica.leaderChanged();
    await vi.waitFor(() => expect(froms).toHaveLength(4));
    expect(replica.moveCount).toBe(3);
    expect(replica.resyncCount).toBe(0);
    replica.stop();
  });

  it('without a leader to follow, stays with the member that feeds it', async () => {
    const streams = [new FakeStream(), new FakeStream()];
    const replica = replicaWith(streams);
    replica.start();
    await tick();
    streams[0]!.send({ applied_index: '3', applied_term: '2', snapshot: snapshotOf(Applier.create(), 3) });
    replica.leaderChanged();
    await tick(20);
    expect(replica.moveCount).toBe(0);
    expect(streams[0]!.cancelled).toBe(false);
    replica.stop();
  });
});
