import { describe, expect, it } from 'vitest';
import { hasCode } from '@ward/shared/errors';
import { KVStore } from './kv-store';
import type { RangeRequest } from './types';
import { FROM_KEY, b, keysOf, newStore, putAll } from './testing';

interface RangeCase {
  readonly request: RangeRequest;
  readonly keys: string[];
  readonly more: boolean;
  readonly count: number;
}

/** Runs one table of etcd's TestV3RangeRequest: put the keys, then check every request. */
function runTable(putKeys: string[], cases: RangeCase[]): void {
  const store = newStore();
  putAll(store, putKeys);
  for (const [i, c] of cases.entries()) {
    const response = store.range(c.request);
    expect(keysOf(response.kvs), `case ${i} keys`).toEqual(c.keys);
    expect(response.more, `case ${i} more`).toBe(c.more);
    expect(response.count, `case ${i} count`).toBe(c.count);
    // Header revision is the store revision: etcd's first put makes revision 2.
    expect(response.revision, `case ${i} header revision`).toBe(putKeys.length + 1);
  }
}

describe('Range (etcd tests/integration/v3_grpc_test.go TestV3RangeRequest)', () => {
  it('single key: exists / does not exist', () => {
    runTable(['foo', 'bar'], [
      { request: { key: b('foo') }, keys: ['foo'], more: false, count: 1 },
      { request: { key: b('baz') }, keys: [], more: false, count: 0 },
    ]);
  });

  it('multi-key: [a,z), [b,d), out of range, [c,c), [d,b), ["\\0","\\0") = everything', () => {
    runTable(['a', 'b', 'c', 'd', 'e'], [
      { request: { key: b('a'), rangeEnd: b('z') }, keys: ['a', 'b', 'c', 'd', 'e'], more: false, count: 5 },
      { request: { key: b('b'), rangeEnd: b('d') }, keys: ['b', 'c'], more: false, count: 2 },
      { request: { key: b('f'), rangeEnd: b('z') }, keys: [], more: false, count: 0 },
      { request: { key: b('c'), rangeEnd: b('c') }, keys: [], more: false, count: 0 },
      { request: { key: b('d'), rangeEnd: b('b') }, keys: [], more: false, count: 0 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY }, keys: ['a', 'b', 'c', 'd', 'e'], more: false, count: 5 },
    ]);
  });

  it('revision: 0 = current; 1 = the empty initial state; 2 and 3 = after the first puts', () => {
    runTable(['a', 'b', 'c', 'd', 'e'], [
      { request: { key: b('a'), rangeEnd: b('z'), revision: 0 }, keys: ['a', 'b', 'c', 'd', 'e'], more: false, count: 5 },
      { request: { key: b('a'), rangeEnd: b('z'), revision: 1 }, keys: [], more: false, count: 0 },
      { request: { key: b('a'), rangeEnd: b('z'), revision: 2 }, keys: ['a'], more: false, count: 1 },
      { request: { key: b('a'), rangeEnd: b('z'), revision: 3 }, keys: ['a', 'b'], more: false, count: 2 },
    ]);
  });

  it('limit: more is set while keys remain; count is never cut', () => {
    runTable(['a', 'b', 'c'], [
      { request: { key: b('a'), rangeEnd: b('z'), limit: 1 }, keys: ['a'], more: true, count: 3 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 2 }, keys: ['a', 'b'], more: true, count: 3 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 3 }, keys: ['a', 'b', 'c'], more: false, count: 3 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 4 }, keys: ['a', 'b', 'c'], more: false, count: 3 },
      // A negative limit is no limit (etcd only cuts when limit > 0).
      { request: { key: b('a'), rangeEnd: b('z'), limit: -1 }, keys: ['a', 'b', 'c'], more: false, count: 3 },
    ]);
  });

  it('count only: no keys, count ignores limit', () => {
    runTable(['a', 'b', 'c'], [
      { request: { key: b('a'), rangeEnd: b('z'), countOnly: true }, keys: [], more: false, count: 3 },
      { request: { key: b('b'), rangeEnd: b('c'), countOnly: true }, keys: [], more: false, count: 1 },
      { request: { key: b('x'), rangeEnd: b('z'), countOnly: true }, keys: [], more: false, count: 0 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 1, countOnly: true }, keys: [], more: false, count: 3 },
    ]);
  });

  it('sort: by key both ways, by create, by mod, empty range, NONE + target = ascending', () => {
    runTable(['b', 'a', 'c', 'd', 'c'], [
      { request: { key: b('a'), rangeEnd: b('z'), limit: 1, sortOrder: 'ASCEND', sortTarget: 'KEY' }, keys: ['a'], more: true, count: 4 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 1, sortOrder: 'DESCEND', sortTarget: 'KEY' }, keys: ['d'], more: true, count: 4 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 1, sortOrder: 'ASCEND', sortTarget: 'CREATE' }, keys: ['b'], more: true, count: 4 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 1, sortOrder: 'DESCEND', sortTarget: 'MOD' }, keys: ['c'], more: true, count: 4 },
      { request: { key: b('z'), rangeEnd: b('z'), limit: 1, sortOrder: 'DESCEND', sortTarget: 'CREATE' }, keys: [], more: false, count: 0 },
      { request: { key: b('a'), rangeEnd: b('z'), limit: 10, sortOrder: 'NONE', sortTarget: 'CREATE' }, keys: ['b', 'a', 'c', 'd'], more: false, count: 4 },
    ]);
  });

  it('min/max mod revision filters (count stays the range total)', () => {
    runTable(['rev2', 'rev3', 'rev4', 'rev5', 'rev6'], [
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, minModRevision: 3 }, keys: ['rev3', 'rev4', 'rev5', 'rev6'], more: false, count: 5 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, maxModRevision: 3 }, keys: ['rev2', 'rev3'], more: false, count: 5 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, minModRevision: 3, maxModRevision: 5 }, keys: ['rev3', 'rev4', 'rev5'], more: false, count: 5 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, maxModRevision: 10 }, keys: ['rev2', 'rev3', 'rev4', 'rev5', 'rev6'], more: false, count: 5 },
    ]);
  });

  it('min/max create revision filters', () => {
    runTable(['rev2', 'rev3', 'rev2', 'rev2', 'rev6', 'rev3'], [
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, minCreateRevision: 3 }, keys: ['rev3', 'rev6'], more: false, count: 3 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, maxCreateRevision: 3 }, keys: ['rev2', 'rev3'], more: false, count: 3 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, minCreateRevision: 3, maxCreateRevision: 5 }, keys: ['rev3'], more: false, count: 3 },
      { request: { key: FROM_KEY, rangeEnd: FROM_KEY, maxCreateRevision: 10 }, keys: ['rev2', 'rev3', 'rev6'], more: false, count: 3 },
    ]);
  });
});

describe('Range details (etcd txn/range.go, mvcc kvstore_txn.go rangeKeys)', () => {
  it('limit with a filter is applied after filtering (etcd fetches everything when filters are set)', () => {
    const store = newStore();
    putAll(store, ['a', 'b', 'c', 'd']); // revisions 2..5
    const response = store.range({ key: b('a'), rangeEnd: b('z'), minModRevision: 3, limit: 2 });
    expect(keysOf(response.kvs)).toEqual(['b', 'c']);
    expect(response.more).toBe(true);
    expect(response.count).toBe(4);
  });

  it('sorts by VERSION and VALUE, descending too; ties keep key order', () => {
    const store = newStore();
    store.put({ key: b('a'), value: b('3') });
    store.put({ key: b('b'), value: b('1') });
    store.put({ key: b('b'), value: b('2') });
    store.put({ key: b('c'), value: b('2') });
    const range = (sortTarget: RangeRequest['sortTarget'], sortOrder: RangeRequest['sortOrder']) =>
      keysOf(store.range({ key: b('a'), rangeEnd: b('z'), sortTarget, sortOrder }).kvs);
    expect(range('VERSION', 'ASCEND')).toEqual(['a', 'c', 'b']);
    expect(range('VERSION', 'DESCEND')).toEqual(['b', 'a', 'c']);
    expect(range('VALUE', 'ASCEND')).toEqual(['b', 'c', 'a']);
    expect(range('VALUE', 'DESCEND')).toEqual(['a', 'b', 'c']);
    expect(range('KEY', 'NONE')).toEqual(['a', 'b', 'c']);
  });

  it('historical read: future revision and compacted revision errors (etcd TestKVRangeBadRev)', () => {
    const store = newStore();
    putAll(store, ['foo', 'foo', 'foo']); // revisions 2, 3, 4
    store.compact(3);
    expect(() => store.range({ key: b('foo'), revision: 5 })).toThrowError(
      expect.objectContaining({ code: 'ERR_KV_FUTURE_REVISION', revision: 5, currentRevision: 4 }),
    );
    expect(() => store.range({ key: b('foo'), revision: 2 })).toThrowError(
      expect.objectContaining({ code: 'ERR_KV_COMPACTED', revision: 2, compactRevision: 3 }),
    );
    // The compact revision itself stays readable.
    const atCompact = store.range({ key: b('foo'), revision: 3 });
    expect(atCompact.kvs[0]!.modRevision).toBe(3);
    expect(atCompact.kvs[0]!.version).toBe(2);
    expect(atCompact.revision).toBe(4);
  });

  it('reads an older version at a past revision, and a deleted key before its delete', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v1') }); // 2
    store.put({ key: b('k'), value: b('v2') }); // 3
    store.deleteRange({ key: b('k') }); // 4
    store.put({ key: b('k'), value: b('v3') }); // 5
    const at = (revision: number) => store.range({ key: b('k'), revision }).kvs[0];
    expect(at(2)).toMatchObject({ value: b('v1'), version: 1, createRevision: 2, modRevision: 2 });
    expect(at(3)).toMatchObject({ value: b('v2'), version: 2, createRevision: 2, modRevision: 3 });
    expect(at(4)).toBeUndefined();
    expect(at(5)).toMatchObject({ value: b('v3'), version: 1, createRevision: 5, modRevision: 5 });
  });

  it('keys_only drops the value only: key, revisions, version and lease stay (etcd 3.4.23, any sort target)', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v'), lease: 7n });
    store.put({ key: b('k'), value: b('v2'), lease: 7n });
    store.put({ key: b('l'), value: b('w') });
    // etcd 3.4.23 answered these exact fields for the same puts (lease kept, value empty).
    const expected = [
      { key: b('k'), createRevision: 2, modRevision: 3, version: 2, value: new Uint8Array(0), lease: 7n },
      { key: b('l'), createRevision: 4, modRevision: 4, version: 1, value: new Uint8Array(0), lease: 0n },
    ];
    for (const sortTarget of ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'] as const) {
      expect(store.range({ key: b('k'), rangeEnd: b('m'), keysOnly: true, sortTarget, sortOrder: 'ASCEND' }).kvs).toEqual(
        sortTarget === 'VERSION' ? [expected[1], expected[0]] : expected,
      );
    }
    expect(store.range({ key: b('k'), keysOnly: true, revision: 2 }).kvs).toEqual([{ ...expected[0], modRevision: 2, version: 1 }]);
    expect(store.range({ key: b('k') }).kvs[0]!.lease).toBe(7n);
  });

  it('orders keys as unsigned bytes and honours from-key and binary range ends', () => {
    const store = newStore();
    for (const key of [[0x00], [0x61], [0x61, 0x00], [0x7f], [0x80], [0xff, 0xff]]) {
      store.put({ key: new Uint8Array(key), value: b('x') });
    }
    const all = store.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).kvs.map((kv) => [...kv.key]);
    expect(all).toEqual([[0x00], [0x61], [0x61, 0x00], [0x7f], [0x80], [0xff, 0xff]]);
    const fromHigh = store.range({ key: new Uint8Array([0x80]), rangeEnd: FROM_KEY }).kvs.map((kv) => [...kv.key]);
    expect(fromHigh).toEqual([[0x80], [0xff, 0xff]]);
    const prefix = store.range({ key: new Uint8Array([0x61]), rangeEnd: new Uint8Array([0x62]) });
    expect(prefix.count).toBe(2);
  });

  it('a limited range counts like a full read at every revision, over an index many levels deep', () => {
    // Enough keys for a multi-level index, so count takes subtree totals where nothing changed
    // since the read revision and looks at keys one by one where something did.
    const store = newStore();
    const key = (i: number): string => `k${String(i).padStart(4, '0')}`;
    for (let i = 0; i < 3000; i++) store.put({ key: b(key(i)), value: b('v') });
    const afterLoad = store.currentRevision;
    for (let i = 0; i < 3000; i += 7) store.put({ key: b(key(i)), value: b('w') });
    store.deleteRange({ key: b(key(1000)), rangeEnd: b(key(1500)) });
    for (let i = 2000; i < 2400; i += 3) store.deleteRange({ key: b(key(i)) });
    for (let i = 1200; i < 1300; i += 2) store.put({ key: b(key(i)), value: b('again') });
    store.compact(afterLoad);
    const restored = KVStore.restore(store.snapshot(), store.options);
    const spans: [string, string][] = [['k', 'l'], [key(990), key(1600)], [key(1450), key(2500)], [key(2999), 'l'], [key(5), key(6)]];
    const revisions = [afterLoad, afterLoad + 1, afterLoad + 300, store.currentRevision - 60, store.currentRevision];
    for (const target of [store, restored]) {
      for (const [from, to] of spans) {
        for (const revision of revisions) {
          const request = { key: b(from), rangeEnd: b(to), revision };
          const all = target.range(request).kvs.length;
          const page = target.range({ ...request, limit: 2 });
          expect(page.count, `${from}..${to} at ${revision}`).toBe(all);
          expect(page.more).toBe(all > 2);
          expect(target.range({ ...request, countOnly: true }).count).toBe(all);
        }
      }
    }
    // The figures are real: a range over all keys at the load revision saw all 3000.
    expect(store.range({ key: b('k'), rangeEnd: b('l'), revision: afterLoad, limit: 1 }).count).toBe(3000);
  });

  it('returns fresh arrays: mutating a response does not change the store', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('value') });
    const first = store.range({ key: b('k') }).kvs[0]!;
    first.value.fill(0);
    first.key.fill(0);
    expect(store.range({ key: b('k') }).kvs[0]!.value).toEqual(b('value'));
  });

  it('rejects an empty key and sort options outside the enums (etcd checkRangeRequest)', () => {
    const store = newStore();
    const codeOf = (request: RangeRequest): string | undefined => {
      try {
        store.range(request);
        return undefined;
      } catch (error) {
        return hasCode(error, 'ERR_KV_EMPTY_KEY') || hasCode(error, 'ERR_KV_INVALID_SORT_OPTION') ? error.code : 'other';
      }
    };
    expect(codeOf({ key: new Uint8Array(0) })).toBe('ERR_KV_EMPTY_KEY');
    expect(codeOf({ key: b('a'), sortOrder: 'SIDEWAYS' as never })).toBe('ERR_KV_INVALID_SORT_OPTION');
    expect(codeOf({ key: b('a'), sortTarget: 'LEASE' as never })).toBe('ERR_KV_INVALID_SORT_OPTION');
    expect(codeOf({ key: b('a') })).toBeUndefined();
  });
});
