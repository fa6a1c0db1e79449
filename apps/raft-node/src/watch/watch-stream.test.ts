import { describe, expect, it } from 'vitest';
import { decodeEtcdMessage, encodeEtcdMessage, watchRequestToProto, type WatchCommand, type WatchCreateRequest } from '@ward/etcd/api-mapping';
import { Applier, toPasswordHash, type ApplyOperation } from '@ward/etcd/apply';
import type { WatchResponse__Output } from '@ward/etcd/proto';
import { WatchStream, type WatchIdentity, type WatchStreamLimits } from './watch-stream';

const u8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const HASH = toPasswordHash(u8('$2b$10$C6UzMDM.H6dfI/f/IKxGhu8ATXq6Yn3ML9bL1rJ6GyqW3G1P4WgD6'));
const ANONYMOUS: WatchIdentity = { username: '', authRevision: 0 };
const LIMITS: WatchStreamLimits = { maxWatchers: 100, batchEvents: 1000, fragmentBytes: 1024 * 1024, maxUnreadResponses: 100 };

/** A stream over a real Applier, collecting what it writes. */
function harness(limits: Partial<WatchStreamLimits> = {}) {
  const applier = Applier.create();
  let index = 0;
  const sent: WatchResponse__Output[] = [];
  let accepting = true;
  let failed: Error | undefined;
  const stream = new WatchStream({
    applier: () => applier,
    context: () => ({ clusterId: 9n, memberId: 1n, raftTerm: 2 }),
    write: (bytes) => {
      sent.push(decodeEtcdMessage<WatchResponse__Output>('etcdserverpb.WatchResponse', bytes));
      return accepting;
    },
    fail: (error) => (failed = error),
    limits: { ...LIMITS, ...limits },
  });
  const apply = (operation: ApplyOperation, username = 'root', authRevision = 0) => {
    const result = applier.apply(++index, { header: { id: BigInt(index), username, authRevision }, operation });
    stream.pump();
    return result;
  };
  const put = (key: string, value: string) => apply({ type: 'put', request: { key: u8(key), value: u8(value) } });
  const del = (key: string) => apply({ type: 'deleteRange', request: { key: u8(key) } });
  const send = (command: WatchCommand, identity: WatchIdentity = ANONYMOUS) => stream.handle(identity, encodeEtcdMessage('etcdserverpb.WatchRequest', watchRequestToProto(command)));
  const create = (fields: Partial<WatchCreateRequest> & { key: Uint8Array }, identity: WatchIdentity = ANONYMOUS) =>
    send({ type: 'create', request: { rangeEnd: new Uint8Array(0), startRevision: 0, progressNotify: false, filters: [], prevKv: false, watchId: 0n, fragment: false, ...fields } }, identity);
  return {
    applier,
    stream,
    sent,
    apply,
    put,
    del,
    send,
    create,
    take: () => sent.splice(0, sent.length),
    setAccepting: (value: boolean) => (accepting = value),
    failed: () => failed,
  };
}

const keysOf = (response: WatchResponse__Output) => response.events.map((e) => `${e.type}:${e.kv!.key.toString()}`);

describe('WatchStream (etcd watch semantics over the applied state)', () => {
  it('numbers watchers from 0, answers created with the current revision, then streams events', () => {
    const h = harness();
    h.put('a', '1');
    h.create({ key: u8('a') });
    h.create({ key: u8('b') });
    const created = h.take();
    expect(created.map((r) => [r.watch_id, r.created, r.canceled, r.header!.revision])).toEqual([
      ['0', true, false, '2'],
      ['1', true, false, '2'],
    ]);
    h.put('a', '2');
    h.put('b', '1');
    h.put('c', '1');
    const events = h.take();
    expect(events.map((r) => [r.watch_id, keysOf(r), r.header!.revision, r.header!.member_id])).toEqual([
      ['0', ['Put:a'], '3', '1'],
      ['1', ['Put:b'], '4', '1'],
    ]);
  });

  it('a watcher owns its key range: overwriting the request buffer (a gRPC Buffer) after the create changes nothing', () => {
    const h = harness();
    const request = Buffer.from(encodeEtcdMessage('etcdserverpb.WatchRequest', watchRequestToProto({ type: 'create', request: { key: u8('app/'), rangeEnd: u8('app0'), startRevision: 0, progressNotify: false, filters: [], prevKv: false, watchId: 0n, fragment: false } })));
    h.stream.handle(ANONYMOUS, request);
    expect(h.take().map((r) => [r.watch_id, r.created])).toEqual([['0', true]]);
    request.fill(0x7a); // the receive buffer is reused or rewritten
    h.put('app/x', '1');
    h.put('zzzz', '1');
    expect(h.take().map(keysOf)).toEqual([['Put:app/x']]);
  });

  it('replays history from start_revision, with prev_kv and filters', () => {
    const h = harness();
    h.put('k', 'v1');
    h.put('k', 'v2');
    h.del('k');
    h.create({ key: u8('k'), startRevision: 2, prevKv: true });
    h.create({ key: u8('k'), startRevision: 2, filters: ['NOPUT'] });
    const responses = h.take();
    expect(responses.filter((r) => r.created).map((r) => r.watch_id)).toEqual(['0', '1']);
    // a watcher's created response comes before its events
    expect(responses.findIndex((r) => r.watch_id === '1' && r.created)).toBeLessThan(responses.findIndex((r) => r.watch_id === '1' && !r.created));
    const byWatcher = new Map(responses.filter((r) => !r.created).map((r) => [r.watch_id, r]));
    const all = byWatcher.get('0')!;
    expect(keysOf(all)).toEqual(['Put:k', 'Put:k', 'Delete:k']);
    expect(all.events.map((e) => e.prev_kv?.value.toString() ?? null)).toEqual([null, 'v1', 'v2']);
    expect(keysOf(byWatcher.get('1')!)).toEqual(['Delete:k']);
  });

  it('watches a range and from a key to the end; an empty key means \\x00', () => {
    const h = harness();
    h.create({ key: u8('b'), rangeEnd: u8('d') });
    h.create({ key: u8('c'), rangeEnd: new Uint8Array([0]) });
    h.create({ key: new Uint8Array([0]), rangeEnd: new Uint8Array([0]) });
    h.take();
    for (const k of ['a', 'b', 'c', 'z']) h.put(k, '1');
    const seen = new Map<string, string[]>();
    for (const r of h.take()) seen.set(r.watch_id, [...(seen.get(r.watch_id) ?? []), ...keysOf(r)]);
    expect(Object.fromEntries(seen)).toEqual({ '0': ['Put:b', 'Put:c'], '1': ['Put:c', 'Put:z'], '2': ['Put:a', 'Put:b', 'Put:c', 'Put:z'] });
  });

  it('refuses as etcd does: negative start revision, empty range, duplicate id (watch id -1, created + canceled)', () => {
    const h = harness();
    h.create({ key: u8('a'), startRevision: -1 });
    h.create({ key: u8('b'), rangeEnd: u8('a') });
    h.create({ key: u8('a'), watchId: 7n });
    h.create({ key: u8('a'), watchId: 7n });
    const responses = h.take();
    expect(responses.map((r) => [r.watch_id, r.created, r.canceled, r.cancel_reason])).toEqual([
      ['-1', true, true, 'etcdserver: mvcc: required revision has been compacted'],
      ['-1', true, true, 'mvcc: watcher range is empty'],
      ['7', true, false, ''],
      ['-1', true, true, 'mvcc: duplicate watch ID provided on the WatchStream'],
    ]);
  });

  it('cancels a watcher (and ignores an unknown id)', () => {
    const h = harness();
    h.create({ key: u8('a') });
    h.send({ type: 'cancel', watchId: 0n });
    h.send({ type: 'cancel', watchId: 42n });
    h.put('a', '1');
    expect(h.take().map((r) => [r.watch_id, r.created, r.canceled])).toEqual([
      ['0', true, false],
      ['0', false, true],
    ]);
  });

  it('answers a progress request with watch id -1 once every watcher is caught up; nothing without watchers', () => {
    const h = harness();
    h.send({ type: 'progress' });
    expect(h.take()).toEqual([]);
    h.put('a', '1');
    h.create({ key: u8('a') });
    h.take();
    h.send({ type: 'progress' });
    expect(h.take().map((r) => [r.watch_id, r.header!.revision, r.events.length])).toEqual([['-1', '2', 0]]);
  });

  it('cancels a watcher behind a compaction with the revision to resume from', () => {
    const h = harness();
    for (let i = 0; i < 5; i++) h.put('k', `v${i}`);
    h.apply({ type: 'compact', request: { revision: 4 } });
    h.create({ key: u8('k'), startRevision: 2 });
    const [created, canceled] = h.take();
    expect(created!.created).toBe(true);
    expect([canceled!.watch_id, canceled!.canceled, canceled!.compact_revision, canceled!.header!.revision]).toEqual(['0', true, '4', '0']);
  });

  it('checks READ on the whole watched range at creation, answering with etcd status texts', () => {
    const h = harness();
    h.apply({ type: 'userAdd', request: { name: 'root', passwordHash: HASH, noPassword: false } });
    h.apply({ type: 'userGrantRole', request: { user: 'root', role: 'root' } });
    h.apply({ type: 'userAdd', request: { name: 'alice', passwordHash: HASH, noPassword: false } });
    h.apply({ type: 'roleAdd', request: { name: 'reader' } });
    h.apply({ type: 'roleGrantPermission', request: { name: 'reader', perm: { permType: 0, key: u8('a'), rangeEnd: u8('b') } } });
    h.apply({ type: 'userGrantRole', request: { user: 'alice', role: 'reader' } });
    h.apply({ type: 'authEnable' });
    const revision = h.applier.authView.revision;
    const alice = { username: 'alice', authRevision: revision };
    h.create({ key: u8('a1') }, alice);
    h.create({ key: u8('a'), rangeEnd: new Uint8Array([0]) }, alice);
    h.create({ key: u8('a1') }, ANONYMOUS);
    h.create({ key: u8('a1') }, { username: 'alice', authRevision: revision - 1 });
    expect(h.take().map((r) => [r.watch_id, r.canceled, r.cancel_reason])).toEqual([
      ['0', false, ''],
      ['-1', true, 'rpc error: code = PermissionDenied desc = etcdserver: permission denied'],
      ['-1', true, 'rpc error: code = InvalidArgument desc = etcdserver: user name is empty'],
      ['-1', true, 'rpc error: code = InvalidArgument desc = etcdserver: revision of auth store is old'],
    ]);
  });

  it('pages a slow client: nothing more is read while the transport is full; too many unread ends the stream', () => {
    const h = harness({ batchEvents: 1, maxUnreadResponses: 3 });
    h.create({ key: u8('k') });
    h.take();
    h.setAccepting(false);
    h.put('k', '1');
    expect(h.take().length).toBe(1);
    h.put('k', '2');
    h.put('k', '3');
    expect(h.take().length).toBe(0);
    h.setAccepting(true);
    h.stream.drained();
    expect(h.take().map((r) => keysOf(r).length)).toEqual([1, 1]);
    h.setAccepting(false);
    for (let i = 0; i < 5; i++) h.create({ key: u8(`x${i}`) });
    expect(h.failed()?.message).toBe('etcdserver: too many requests');
  });

  it('fragments a large response for a watcher that asked for it', () => {
    const h = harness({ fragmentBytes: 300 });
    h.create({ key: u8('k'), rangeEnd: u8('l'), fragment: true });
    h.create({ key: u8('k'), rangeEnd: u8('l') });
    h.take();
    h.apply({
      type: 'txn',
      request: { compare: [], success: Array.from({ length: 6 }, (_, i) => ({ type: 'put' as const, request: { key: u8(`k${i}`), value: new Uint8Array(100) } })), failure: [] },
    });
    const responses = h.take();
    const fragmented = responses.filter((r) => r.watch_id === '0');
    expect(fragmented.length).toBeGreaterThan(1);
    expect(fragmented.map((r) => r.fragment)).toEqual([...fragmented.slice(1).map(() => true), false]);
    expect(fragmented.flatMap((r) => r.events).length).toBe(6);
    expect(responses.filter((r) => r.watch_id === '1').map((r) => r.events.length)).toEqual([6]);
  });

  it('sends periodic progress notifications to synced progress_notify watchers without recent events', () => {
    const h = harness();
    h.create({ key: u8('k'), progressNotify: true });
    h.create({ key: u8('q') });
    h.take();
    h.stream.progressTick();
    expect(h.take().map((r) => [r.watch_id, r.events.length])).toEqual([['0', 0]]);
    h.put('k', '1');
    h.take();
    h.stream.progressTick();
    expect(h.take()).toEqual([]);
  });
});
