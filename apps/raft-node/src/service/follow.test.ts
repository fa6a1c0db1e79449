import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Applier } from '@ward/etcd/apply';
import type { FollowMessage } from '@ward/etcd/proto';
import { EntryType, type Entry } from '@ward/raft/core';
import { createLogger } from '@ward/platform/logging';
import type { AppliedRequest } from '../state-machine';
import { FollowFeeds } from './follow';
import type { NodeCore } from './node-core';

/** A Follow stream whose writes are taken only when the test says so (`take`). */
class FakeCall extends EventEmitter {
  readonly written: FollowMessage[] = [];
  constructor(readonly request: { from_index: string; from_term: string; max_snapshot_bytes?: string } = { from_index: '0', from_term: '0' }) {
    super();
  }
  private untaken: (() => void)[] = [];
  writableLength = 0;
  write(message: FollowMessage, taken: () => void): boolean {
    this.written.push(message);
    this.untaken.push(taken);
    return true;
  }

  /** The stream sends everything written so far, and what that lets the feed write next (encoded between turns). */
  async take(): Promise<void> {
    for (;;) {
      await turns();
      if (this.untaken.length === 0) return;
      const callbacks = this.untaken;
      this.untaken = [];
      for (const callback of callbacks) callback();
    }
  }
}

/** The member's state as a snapshot task sees it: a real applier, or a task giving fixed chunks. */
type StateSource = Pick<Applier, 'snapshotTask'>;

/** A streamed task that is sized in one step and gives `chunks` in the next (or goes stale). */
const fixedState = (chunks: Uint8Array[], result: 'done' | 'stale' = 'done'): StateSource => ({
  snapshotTask: () => {
    let step = 0;
    return {
      step: () => (result === 'stale' ? 'stale' : ++step === 1 ? 'more' : 'done'),
      get sizeBytes() {
        return step === 0 ? undefined : chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      },
      takeChunks: () => (step === 2 ? chunks.splice(0) : []),
    } as never;
  },
});

/** Takes what `call` is sent, round after round, until `done()` (at most a bounded number of rounds). */
async function takeUntil(call: FakeCall, done: () => boolean): Promise<void> {
  for (let round = 0; round < 1000 && !done(); round++) await call.take();
}

/** Lets the snapshot's turns run (the feed takes the state between event-loop turns). */
const turns = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** The member's log as a feed reads it (entriesAfter's answer, and what it was asked). */
interface FakeLog {
  readonly asked: unknown[][];
  entries: Entry[] | undefined;
}

function fakeCore(appliedIndex: number, applier: StateSource = Applier.create(), log: FakeLog = { asked: [], entries: undefined }, applied: Promise<boolean> = Promise.resolve(true)): NodeCore {
  return {
    applied: { wait: () => applied },
    stateMachine: { applier, appliedIndex, isRequestEntry: (entry: Entry) => entry.type === EntryType.Normal && entry.data.length > 0 },
    config: { clusterId: 9n, memberId: 4n, maxTxnOpsCount: 128, eventHistoryEventsCount: 1000, maxSimpleTokensCount: 100, maxSimpleTokensPerUserCount: 10 },
    driver: {
      currentTerm: 2,
      termAt: (index: number) => (index >= 1 ? 2 : undefined),
      persistedEntriesAfter: (...args: unknown[]) => {
        log.asked.push(args);
        return log.entries;
      },
    },
  } as unknown as NodeCore;
}

const feeds = (over: Partial<{ maxFollowers: number; maxBufferedBytes: number; maxBufferedMessages: number; chunkBytes: number }> = {}) =>
  new FollowFeeds({ maxFollowers: 2, maxBufferedBytes: 1 << 20, maxBufferedMessages: 100, chunkBytes: 8, logger: createLogger({ name: 't', level: 'silent' }), ...over });

const applied = (index: number, bytes = 4): AppliedRequest => ({ index, data: new Uint8Array(bytes).fill(index), request: {} as never, result: {} as never });

describe('FollowFeeds', () => {
  it('starts a stream with the chunked snapshot at the applied index, then sends each apply batch', async () => {
    const f = feeds();
    const applier = Applier.create();
    const core = fakeCore(5, applier);
    const call = new FakeCall();
    void f.serve(core, call as never);
    await turns();
    await call.take();
    const chunks = call.written.filter((m) => m.snapshot);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((m) => m.snapshot!.index === 5)).toBe(true);
    expect(chunks.map((m) => m.snapshot!.last)).toEqual([...chunks.slice(1).map(() => false), true]);
    expect(Buffer.concat(chunks.map((m) => m.snapshot!.chunk as Buffer))).toEqual(Buffer.from(applier.snapshot()));
    expect(chunks[0]!.snapshot!.limits).toEqual({ max_txn_ops: 128, event_history_max_events: 1000, max_simple_tokens: 100, max_simple_tokens_per_user: 10 });
    f.applied(core, [applied(6), applied(8)], 9);
    const last = call.written.at(-1)!;
    expect(last.applied_index).toBe(9);
    expect(last.entries!.map((e) => e.index)).toEqual([6, 8]);
    expect(last.member_id).toBe('4');
  });

  it("goes on from a replica's index with the request entries its log holds since, without a snapshot", async () => {
    const entry = (index: number, type: EntryType, bytes: number): Entry => ({ index, term: 2, type, data: new Uint8Array(bytes).fill(index) });
    const log: FakeLog = { asked: [], entries: [entry(6, EntryType.Normal, 4), entry(7, EntryType.Normal, 0), entry(8, EntryType.ConfChangeV2, 4), entry(9, EntryType.Normal, 4)] };
    const core = fakeCore(9, Applier.create(), log);
    const f = feeds({ maxBufferedBytes: 4096, chunkBytes: 4096 });
    const call = new FakeCall({ from_index: '5', from_term: '2' });
    void f.serve(core, call as never);
    expect(log.asked).toEqual([[5, 2, 9, 2048]]);
    await turns();
    expect(call.written.some((m) => m.snapshot)).toBe(false);
    expect(call.written).toHaveLength(1);
    expect(call.written[0]!.entries!.map((e) => e.index)).toEqual([6, 9]);
    expect(call.written[0]!.applied_index).toBe(9);
    expect(call.written[0]!.applied_term).toBe(2);
    // Then the batches applied after it, as for any follower.
    f.applied(core, [applied(10)], 10);
    expect(call.written.at(-1)!.entries!.map((e) => e.index)).toEqual([10]);
    expect(call.written.at(-1)!.applied_term).toBe(2);
  });

  it("starts from a snapshot when its log cannot go on from the replica's index", async () => {
    const core = fakeCore(9, Applier.create(), { asked: [], entries: undefined });
    const f = feeds();
    const call = new FakeCall({ from_index: '5', from_term: '1' });
    void f.serve(core, call as never);
    await turns();
    await call.take();
    expect(call.written.at(-1)!.snapshot!.last).toBe(true);
    expect(call.written.at(-1)!.applied_term).toBe(2);
  });

  it("holds a replica ahead of this member until it has applied as far, then goes on from the replica's index", async () => {
    let reached!: (ok: boolean) => void;
    const log: FakeLog = { asked: [], entries: [] };
    const core = fakeCore(4, Applier.create(), log, new Promise<boolean>((resolve) => (reached = resolve)));
    const f = feeds();
    const call = new FakeCall({ from_index: '6', from_term: '2' });
    void f.serve(core, call as never);
    // Not fed while it waits: batches applied meanwhile are in the log it will be sent from.
    f.applied(core, [applied(5)], 5);
    await turns();
    expect(call.written).toHaveLength(0);
    expect(log.asked).toHaveLength(0);
    (core.stateMachine as { appliedIndex: number }).appliedIndex = 6;
    reached(true);
    await turns();
    expect(log.asked).toEqual([[6, 2, 6, (1 << 20) / 2]]);
    expect(call.written.map((m) => [m.applied_index, m.entries!.length, m.snapshot === undefined])).toEqual([[6, 0, true]]);

    // One that goes away while it waits is never fed.
    const gone = new FakeCall({ from_index: '9', from_term: '2' });
    let never!: (ok: boolean) => void;
    const later = fakeCore(6, Applier.create(), log, new Promise<boolean>((resolve) => (never = resolve)));
    const served = f.serve(later, gone as never);
    gone.emit('cancelled');
    await served;
    never(false);
    await turns();
    expect(gone.written).toHaveLength(0);
    expect(f.followerCount).toBe(1);
  });

  it('drops a follower that holds too much unsent, and refuses followers beyond the bound', async () => {
    const f = feeds({ maxBufferedBytes: 2000, chunkBytes: 4096 });
    const core = fakeCore(1);
    const slow = new FakeCall();
    const served = f.serve(core, slow as never);
    // Its end comes while other work is awaited: checked below.
    served.catch(() => undefined);
    const other = new FakeCall();
    void f.serve(core, other as never);
    await expect(f.serve(core, new FakeCall() as never)).rejects.toThrow('too many requests');
    expect(f.followerCount).toBe(2);
    await turns();
    await slow.take();
    await other.take();
    for (let i = 2; i < 40; i++) {
      f.applied(core, [applied(i, 40)], i);
      // This one takes what it is sent; the slow one never does.
      await other.take();
    }
    await expect(served).rejects.toThrow('fell too far behind');
    expect(f.followerCount).toBe(1);
    expect(other.written.at(-1)!.applied_index).toBe(39);
  });

  it('sends a snapshot larger than the lag bound at the stream\'s pace, with the batches applied meanwhile behind it', async () => {
    // The state's snapshot alone is larger than maxBufferedBytes: it must still get through, in
    // messages of at most chunkBytes cut from the state's own chunks (an empty one among them).
    const state = Uint8Array.from({ length: 4000 }, (_, i) => (i * 31) & 0xff);
    const core = fakeCore(7, fixedState([state.subarray(0, 1000), state.subarray(1000, 1000), state.subarray(1000)]));
    const f = feeds({ maxBufferedBytes: 1000, chunkBytes: 64 });
    const call = new FakeCall();
    void f.serve(core, call as never);
    // A batch applied while the state is being taken waits behind it too.
    f.applied(core, [applied(8)], 8);
    await turns();
    // A few chunks in flight, not the whole snapshot at once.
    expect(call.written.length).toBeGreaterThan(0);
    expect(call.written.length).toBeLessThan(state.length / 64 / 4);
    f.applied(core, [applied(9)], 9);
    expect(call.written.every((m) => m.snapshot)).toBe(true);
    await call.take();
    expect(f.followerCount).toBe(1);
    const chunks = call.written.filter((m) => m.snapshot);
    expect(Buffer.concat(chunks.map((m) => m.snapshot!.chunk as Buffer))).toEqual(Buffer.from(state));
    expect(chunks.at(-1)!.snapshot!.last).toBe(true);
    expect(chunks.every((m) => m.snapshot!.chunk!.length > 0 && m.snapshot!.chunk!.length <= 64)).toBe(true);
    // Then the held batches, in order, after the last chunk.
    const rest = call.written.slice(chunks.length);
    expect(rest.map((m) => m.applied_index)).toEqual([8, 9]);
    f.applied(core, [applied(10)], 10);
    expect(call.written.at(-1)!.applied_index).toBe(10);
  });

  it('drops a follower whose snapshot is not taken while too many batches wait behind it', async () => {
    const f = feeds({ maxBufferedBytes: 500, chunkBytes: 8 });
    const core = fakeCore(1);
    const stuck = new FakeCall();
    const served = f.serve(core, stuck as never);
    for (let i = 2; i < 20; i++) f.applied(core, [applied(i, 40)], i);
    await expect(served).rejects.toThrow('fell too far behind');
    expect(f.followerCount).toBe(0);
  });

  it('ends the stream ABORTED when a compaction spoils the state being taken', async () => {
    const f = feeds();
    const call = new FakeCall();
    const served = f.serve(fakeCore(3, fixedState([], 'stale')), call as never);
    await expect(served).rejects.toThrow('compaction');
    expect(call.written).toEqual([]);
    expect(f.followerCount).toBe(0);
  });

  it('ends the stream FAILED_PRECONDITION, sending nothing, when the state is larger than the replica takes', async () => {
    const f = feeds();
    const call = new FakeCall({ from_index: '0', from_term: '0', max_snapshot_bytes: '19' });
    const served = f.serve(fakeCore(3, fixedState([new Uint8Array(12), new Uint8Array(8)])), call as never);
    await expect(served).rejects.toMatchObject({ grpcCode: 9, message: 'the state is 20 bytes, more than the 19 the replica takes' });
    expect(call.written).toEqual([]);
    expect(f.followerCount).toBe(0);
    // At its bound it is sent.
    const fits = new FakeCall({ from_index: '0', from_term: '0', max_snapshot_bytes: '20' });
    void f.serve(fakeCore(3, fixedState([new Uint8Array(12), new Uint8Array(8)])), fits as never);
    await takeUntil(fits, () => fits.written.some((m) => m.snapshot?.last === true));
    expect(fits.written.reduce((sum, m) => sum + (m.snapshot?.chunk?.length ?? 0), 0)).toBe(20);
  });

  it('streams a large state through reused buffers at the stream\'s pace', async () => {
    const header = { id: 0n, username: '', authRevision: 0 };
    const applier = Applier.create();
    // 40 values of 256 KiB: 10 MiB, more than one turn of encoding (SNAPSHOT_TURN_BYTES).
    for (let i = 1; i <= 40; i++) applier.apply(i, { header, operation: { type: 'put', request: { key: new TextEncoder().encode(`k${i}`), value: new Uint8Array(256 * 1024).fill(i) } } });
    const whole = Buffer.from(applier.snapshot());
    const f = feeds({ chunkBytes: 1 << 20, maxBufferedBytes: 64 << 20 });
    const core = fakeCore(40, applier);
    // Taken to the end: the bytes of the state.
    const call = new FakeCall();
    void f.serve(core, call as never);
    // A loaded machine may need more turns than take() waits for: taken until the last message.
    await takeUntil(call, () => call.written.at(-1)?.snapshot?.last === true);
    const chunks = call.written.map((m) => m.snapshot!.chunk as Buffer);
    expect(chunks.at(-1)).toBeDefined();
    expect(call.written.at(-1)!.snapshot!.last).toBe(true);
    // Joined only now: a message that were a view of a reused buffer would hold later bytes.
    expect(Buffer.concat(chunks).equals(whole)).toBe(true);
  });

  it('ends the stream ABORTED when a compaction comes after its first messages, while the state is still being encoded', async () => {
    const header = { id: 0n, username: '', authRevision: 0 };
    const applier = Applier.create();
    // 128 values of 256 KiB: 32 MiB. Before the stream takes anything, the feed has encoded at
    // most the messages in flight plus one turn (SNAPSHOT_TURN_BYTES): far from the end, so the
    // compaction below finds the task unfinished. (A compaction after the last key was encoded
    // spoils nothing: the bytes of the state at the snapshot's index are all out of the store.)
    for (let i = 1; i <= 128; i++) applier.apply(i, { header, operation: { type: 'put', request: { key: new TextEncoder().encode(`k${i}`), value: new Uint8Array(256 * 1024).fill(i) } } });
    const f = feeds({ chunkBytes: 1 << 20, maxBufferedBytes: 64 << 20 });
    const call = new FakeCall();
    const served = f.serve(fakeCore(128, applier), call as never);
    let ended = false;
    served.catch(() => (ended = true));
    for (let i = 0; i < 1000 && call.written.length === 0; i++) await turns();
    expect(call.written.length).toBeGreaterThan(0);
    expect(call.written.length).toBeLessThan(16);
    applier.apply(129, { header, operation: { type: 'compact', request: { revision: 129 } } });
    await takeUntil(call, () => ended);
    expect(ended).toBe(true);
    await expect(served).rejects.toThrow('compaction');
    expect(call.written.length).toBeLessThan(32);
    expect(call.written.every((m) => m.snapshot!.last === false)).toBe(true);
    expect(f.followerCount).toBe(0);
  });

  it('ends every stream when the state is replaced, and forgets a follower that went away', async () => {
    const f = feeds();
    const core = fakeCore(1);
    const gone = new FakeCall();
    const goneServed = f.serve(core, gone as never);
    gone.emit('cancelled');
    await goneServed;
    const kept = new FakeCall();
    const keptServed = f.serve(core, kept as never);
    f.restart('the member installed a snapshot from the leader');
    await expect(keptServed).rejects.toThrow('installed a snapshot');
    expect(f.followerCount).toBe(0);
  });
});
