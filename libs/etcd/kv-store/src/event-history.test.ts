import { describe, expect, it } from 'vitest';
import { fromUtf8 } from '@ward/shared/bytes';
import { FROM_KEY, b, newStore, plain, putAll } from './testing';
import type { KVStore } from './kv-store';
import type { ReadEventsRequest, WatchEvent } from './types';

const ALL = { key: FROM_KEY, rangeEnd: FROM_KEY } as const;

function read(store: KVStore, request: Partial<ReadEventsRequest> & { fromRevision: number }): { events: WatchEvent[]; nextRevision: number } {
  return store.readEvents({ ...ALL, maxEvents: 1000, ...request });
}

const summary = (events: WatchEvent[]) => events.map((event) => `${event.type} ${fromUtf8(event.kv.key)}@${event.revision}.${event.subRevision}`);

describe('Watch history (etcd watchable_store_txn.go events, v3rpc watch.go prev_kv)', () => {
  it('reports puts with the full KeyValue and deletes with only the key and the deleting revision', () => {
    const store = newStore();
    store.put({ key: b('foo'), value: b('bar'), lease: 4n }); // 2
    store.deleteRange({ key: b('foo') }); // 3
    const { events, nextRevision } = read(store, { fromRevision: 1 });
    expect(nextRevision).toBe(4);
    expect(events.map((event) => [event.type, plain(event.kv)])).toEqual([
      ['PUT', { key: 'foo', value: 'bar', createRevision: 2, modRevision: 2, version: 1, lease: 4n }],
      ['DELETE', { key: 'foo', value: '', createRevision: 0, modRevision: 3, version: 0, lease: 0n }],
    ]);
  });

  it('adds prev_kv for overwrites and deletes, never for a creation', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v1') }); // 2 create
    store.put({ key: b('k'), value: b('v2') }); // 3 overwrite
    store.deleteRange({ key: b('k') }); // 4 delete
    store.put({ key: b('k'), value: b('v3') }); // 5 re-create
    const events = read(store, { fromRevision: 2, prevKv: true }).events;
    expect(events.map((event) => (event.prevKv === undefined ? null : fromUtf8(event.prevKv.value)))).toEqual([null, 'v1', 'v2', null]);
    expect(read(store, { fromRevision: 2 }).events.every((event) => event.prevKv === undefined)).toBe(true);
  });

  it('drops prev_kv where etcd cannot read revision - 1 any more (compacted)', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v1') }); // 2
    store.put({ key: b('other'), value: b('x') }); // 3
    store.put({ key: b('k'), value: b('v2') }); // 4
    store.put({ key: b('k'), value: b('v3') }); // 5
    store.compact(4);
    const events = read(store, { fromRevision: 4, prevKv: true }).events;
    expect(events.map((event) => [event.revision, event.prevKv === undefined ? null : fromUtf8(event.prevKv.value)])).toEqual([
      [4, null],
      [5, 'v2'],
    ]);
  });

  it('reports as prev_kv the version from before the txn when one txn puts and then from-key deletes a key', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v1') }); // 2
    store.txn({ compare: [], success: [{ type: 'put', request: { key: b('k'), value: b('v2') } }, { type: 'deleteRange', request: { key: b('k'), rangeEnd: FROM_KEY } }], failure: [] }); // 3
    const events = read(store, { fromRevision: 3, prevKv: true }).events;
    expect(events.map((event) => [event.type, event.subRevision, event.prevKv === undefined ? null : fromUtf8(event.prevKv.value)])).toEqual([
      ['PUT', 0, 'v1'],
      ['DELETE', 1, 'v1'],
    ]);
  });

  it('reads from a revision, filtered by a single key, a range and from-key', () => {
    const store = newStore();
    putAll(store, ['a', 'b', 'c', 'b']); // 2..5
    expect(summary(read(store, { fromRevision: 4 }).events)).toEqual(['PUT c@4.0', 'PUT b@5.0']);
    expect(summary(read(store, { fromRevision: 1, key: b('b'), rangeEnd: undefined }).events)).toEqual(['PUT b@3.0', 'PUT b@5.0']);
    expect(summary(read(store, { fromRevision: 1, key: b('a'), rangeEnd: b('c') }).events)).toEqual(['PUT a@2.0', 'PUT b@3.0', 'PUT b@5.0']);
    expect(summary(read(store, { fromRevision: 1, key: b('b'), rangeEnd: FROM_KEY }).events)).toEqual(['PUT b@3.0', 'PUT c@4.0', 'PUT b@5.0']);
    expect(read(store, { fromRevision: 9 })).toEqual({ events: [], nextRevision: 9 });
  });

  it('returns whole revisions only and says where to continue', () => {
    const store = newStore();
    store.put({ key: b('a'), value: b('1') }); // 2
    store.txn({ compare: [], success: ['x', 'y', 'z'].map((key) => ({ type: 'put' as const, request: { key: b(key), value: b('1') } })), failure: [] }); // 3
    store.put({ key: b('a'), value: b('2') }); // 4
    const first = read(store, { fromRevision: 2, maxEvents: 2 });
    expect(summary(first.events)).toEqual(['PUT a@2.0', 'PUT x@3.0', 'PUT y@3.1', 'PUT z@3.2']);
    expect(first.nextRevision).toBe(4);
    const second = read(store, { fromRevision: first.nextRevision, maxEvents: 2 });
    expect(summary(second.events)).toEqual(['PUT a@4.0']);
    expect(second.nextRevision).toBe(5);
    expect(() => store.readEvents({ ...ALL, fromRevision: 1, maxEvents: 0 })).toThrow(TypeError);
  });

  it('refuses to read below the compact revision, naming where a watcher may resume', () => {
    const store = newStore();
    putAll(store, ['a', 'a', 'a']); // 2, 3, 4
    store.compact(3);
    expect(store.oldestEventRevision).toBe(3);
    expect(() => read(store, { fromRevision: 2 })).toThrowError(expect.objectContaining({ code: 'ERR_KV_COMPACTED', compactRevision: 3 }));
    expect(summary(read(store, { fromRevision: 3 }).events)).toEqual(['PUT a@3.0', 'PUT a@4.0']);
  });

  it('stays within its bound by dropping whole oldest revisions, never the newest', () => {
    const store = newStore({ eventHistoryMaxEvents: 5 });
    putAll(store, ['a', 'b', 'c', 'd', 'e', 'f', 'g']); // 2..8
    expect(store.eventCount).toBe(5);
    expect(store.oldestEventRevision).toBe(4);
    expect(() => read(store, { fromRevision: 3 })).toThrowError(expect.objectContaining({ code: 'ERR_KV_COMPACTED', compactRevision: 4 }));
    // A txn larger than the bound stays whole: it is the newest revision.
    store.txn({ compare: [], success: ['p', 'q', 'r', 's', 't', 'u', 'v', 'w'].map((key) => ({ type: 'put' as const, request: { key: b(key) } })), failure: [] });
    expect(store.eventCount).toBe(8);
    expect(store.oldestEventRevision).toBe(9);
    expect(read(store, { fromRevision: 9 }).events.length).toBe(8);
    store.put({ key: b('next'), value: b('x') });
    expect(store.eventCount).toBe(1);
    expect(store.oldestEventRevision).toBe(10);
  });
});
