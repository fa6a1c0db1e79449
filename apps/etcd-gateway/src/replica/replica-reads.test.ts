import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Applier, encodeApplyRequest, type ApplyOperation } from '@ward/etcd/apply';
import type { FollowMessage__Output } from '@ward/etcd/proto';
import { createLogger } from '@ward/platform/logging';
import { ReadReplica, type FollowStream } from './read-replica';
import { ReplicaReads } from './replica-reads';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const header = (index: number) => ({ id: BigInt(index), username: '', authRevision: 0 });
const put = (key: string): ApplyOperation => ({ type: 'put', request: { key: utf8(key), value: utf8('v') } });
const entry = (index: number, operation: ApplyOperation) => ({ index: String(index), data: Buffer.from(encodeApplyRequest({ header: header(index), operation })) });
const rangeRequest = { header: header(1), operation: { type: 'range', request: { key: utf8('a') } } } as const;
/** A read as the executor hands it over; `encoded` counts the encodings a member's answer needed. */
const encoded = { count: 0 };
const rangeEntry = {
  request: rangeRequest,
  bytes: () => {
    encoded.count += 1;
    return encodeApplyRequest(rangeRequest);
  },
};

class FakeStream extends EventEmitter {
  cancel(): void {}
  send(message: Partial<FollowMessage__Output>): void {
    this.emit('data', { cluster_id: '7', member_id: '2', raft_term: '3', applied_index: '0', snapshot: null, entries: [], ...message });
  }
}

const tick = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A replica synced at index 4, reads through it with a read index of 10 and a 300 ms catch-up wait. */
async function setup(): Promise<{ stream: FakeStream; replica: ReadReplica; reads: ReplicaReads; fallbacks: () => number }> {
  const stream = new FakeStream();
  const replica = new ReadReplica({
    open: async () => stream as unknown as FollowStream,
    maxEntryBytes: 1 << 20,
    maxSnapshotBytes: 1 << 20,
    maxWaiting: 10,
    minRetryMs: 1_000,
    maxRetryMs: 1_000,
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  replica.start();
  await tick();
  const bytes = Buffer.from(Applier.create().snapshot());
  stream.send({ applied_index: '4', snapshot: { index: '4', limits: null, chunk: bytes, last: true } });
  let fallbacks = 0;
  const reads = new ReplicaReads({
    cluster: {
      highestAppliedIndex: 10,
      readIndex: async () => 10,
      propose: async () => Buffer.alloc(0),
      read: async () => {
        fallbacks += 1;
        return Buffer.from('from the members');
      },
    },
    replica,
    catchUpWaitMs: 300,
    maxWaitingReads: 10,
  });
  return { stream, replica, reads, fallbacks: () => fallbacks };
}

describe('ReplicaReads', () => {
  it('keeps the feed of a replica that is behind but applying, and answers from the members meanwhile', async () => {
    const { stream, replica, reads, fallbacks } = await setup();
    const answer = reads.read(rangeEntry, false);
    await tick();
    stream.send({ applied_index: '6', entries: [entry(5, put('a')), entry(6, put('b'))] });
    expect((await answer).toString()).toBe('from the members');
    expect(fallbacks()).toBe(1);
    expect(replica.resyncCount).toBe(0);
    expect(replica.ready).toBe(true);
    expect(replica.appliedIndex).toBe(6);
    // Until it reaches index 10, reads go to the members at once: this one finds it still at 6.
    const next = reads.read(rangeEntry, false);
    expect(replica.appliedIndex).toBe(6);
    expect((await next).toString()).toBe('from the members');
    expect(fallbacks()).toBe(2);
    // Once there, it answers again, from the request itself: its entry is encoded only for the members.
    stream.send({ applied_index: '10', entries: [entry(7, put('c')), entry(10, put('d'))] });
    const encodedBefore = encoded.count;
    const local = await reads.read(rangeEntry, false);
    expect(local.toString()).not.toBe('from the members');
    expect(fallbacks()).toBe(2);
    expect(encoded.count).toBe(encodedBefore);
    expect(replica.resyncCount).toBe(0);
  });

  it('follows again when a replica behind a read index applies nothing for catchUpWaitMs', async () => {
    const { stream, replica, reads } = await setup();
    const answer = reads.read(rangeEntry, false);
    await tick();
    stream.send({ applied_index: '6', entries: [entry(5, put('a')), entry(6, put('b'))] });
    await answer;
    expect(replica.resyncCount).toBe(0);
    await tick(350);
    await reads.read(rangeEntry, false);
    expect(replica.resyncCount).toBe(1);
  });

  it('follows again when the replica applied nothing while a read waited (its feed stalled)', async () => {
    const { replica, reads, fallbacks } = await setup();
    expect((await reads.read(rangeEntry, false)).toString()).toBe('from the members');
    expect(fallbacks()).toBe(1);
    expect(replica.resyncCount).toBe(1);
    expect(replica.ready).toBe(false);
  });
});
