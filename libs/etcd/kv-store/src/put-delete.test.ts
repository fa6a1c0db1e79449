import { describe, expect, it } from 'vitest';
import { equalBytes } from '@ward/shared/bytes';
import { FROM_KEY, LeaseSet, b, keysOf, newStore, plain, putAll } from './testing';
import type { PutRequest } from './types';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

describe('Put (etcd mvcc TestKVPutMultipleTimes, TestV3PutOverwrite)', () => {
  it('first put makes revision 2; each put bumps the revision and the version, keeps create', () => {
    const store = newStore();
    expect(store.currentRevision).toBe(1);
    for (let i = 0; i < 5; i++) {
      const response = store.put({ key: b('foo'), value: b(`bar${i}`) });
      expect(response.revision).toBe(i + 2);
      const kv = store.range({ key: b('foo') }).kvs[0]!;
      expect(plain(kv)).toEqual({ key: 'foo', value: `bar${i}`, createRevision: 2, modRevision: i + 2, version: i + 1, lease: 0n });
    }
    expect(store.currentRevision).toBe(6);
  });

  it('prev_kv returns the overwritten version (etcd TestV3PutOverwrite) and nothing for a new key', () => {
    const store = newStore();
    expect(store.put({ key: b('foo'), value: b('bar'), prevKv: true }).prevKv).toBeUndefined();
    const response = store.put({ key: b('foo'), value: b('baz'), prevKv: true });
    expect(plain(response.prevKv)).toEqual({ key: 'foo', value: 'bar', createRevision: 2, modRevision: 2, version: 1, lease: 0n });
    expect(store.put({ key: b('foo'), value: b('qux') }).prevKv).toBeUndefined();
  });

  it('a put after a delete starts a new generation: version 1, create = its revision', () => {
    const store = newStore();
    putAll(store, ['k', 'k']); // 2, 3
    store.deleteRange({ key: b('k') }); // 4
    store.put({ key: b('k'), value: b('again') }); // 5
    expect(store.range({ key: b('k') }).kvs[0]).toMatchObject({ createRevision: 5, modRevision: 5, version: 1 });
  });

  it('attaches, moves and detaches leases; leaseKeys lists attached keys in key order', () => {
    const store = newStore();
    store.put({ key: b('b'), value: b('1'), lease: 10n });
    store.put({ key: b('a'), value: b('1'), lease: 10n });
    store.put({ key: b('c'), value: b('1'), lease: 20n });
    expect(store.leaseKeys(10n).map((key) => new TextDecoder().decode(key))).toEqual(['a', 'b']);
    store.put({ key: b('a'), value: b('2'), lease: 20n }); // moves a from 10 to 20
    store.put({ key: b('b'), value: b('2') }); // detaches b
    expect(store.leaseKeys(10n)).toEqual([]);
    expect(store.leaseKeyCount(20n)).toBe(2);
    store.deleteRange({ key: b('c') }); // a delete detaches
    expect(store.leaseKeys(20n)).toEqual([b('a')]);
    const visited: string[] = [];
    store.put({ key: b('z'), value: b('1'), lease: 20n });
    store.forEachLeaseKey(20n, (key) => {
      visited.push(new TextDecoder().decode(key));
    });
    expect(visited.sort()).toEqual(['a', 'z']);
    let calls = 0;
    store.forEachLeaseKey(20n, () => {
      calls += 1;
      return false;
    });
    expect(calls).toBe(1);
  });

  it('rejects a lease the lessor does not know, in a put and in a txn branch taken (etcd TestV3PutMissingLease)', () => {
    const leases = new LeaseSet();
    const store = newStore({ leases });
    const request: PutRequest = { key: b('foo'), lease: 123456n };
    expect(codeOf(() => store.put(request))).toBe('ERR_KV_LEASE_NOT_FOUND');
    expect(codeOf(() => store.txn({ compare: [], success: [{ type: 'put', request }], failure: [] }))).toBe('ERR_KV_LEASE_NOT_FOUND');
    // The failure branch is taken when bar's create revision is not > 0.
    const failing = { target: 'CREATE' as const, result: 'GREATER' as const, key: b('bar'), createRevision: 0 };
    expect(codeOf(() => store.txn({ compare: [failing], success: [], failure: [{ type: 'put', request }] }))).toBe('ERR_KV_LEASE_NOT_FOUND');
    // A bad lease on the branch not taken is ignored.
    const ok = store.txn({ compare: [], success: [{ type: 'range', request: { key: b('bar') } }], failure: [{ type: 'put', request }] });
    expect(ok.succeeded).toBe(true);
    expect(store.range({ key: b('foo') }).count).toBe(0);
    leases.granted.add(123456n);
    expect(store.put(request).revision).toBe(2);
  });

  it('ignore_value keeps the value, takes the request lease, needs the key (etcd TestV3PutIgnoreValue)', () => {
    const store = newStore();
    const ignore = (extra: Partial<PutRequest> = {}): PutRequest => ({ key: b('foo'), ignoreValue: true, ...extra });
    expect(codeOf(() => store.put(ignore()))).toBe('ERR_KV_KEY_NOT_FOUND');
    expect(codeOf(() => store.txn({ compare: [], success: [{ type: 'put', request: ignore() }], failure: [] }))).toBe('ERR_KV_KEY_NOT_FOUND');
    store.put({ key: b('foo'), value: b('bar') });
    store.txn({ compare: [], success: [{ type: 'put', request: ignore({ lease: 5n }) }], failure: [] });
    expect(store.range({ key: b('foo') }).kvs[0]).toMatchObject({ value: b('bar'), lease: 5n, version: 2 });
    expect(codeOf(() => store.put(ignore({ value: b('x') })))).toBe('ERR_KV_VALUE_PROVIDED');
    // Overwrite keeping the value and no lease: the lease is detached, no prev_kv unless asked.
    expect(store.put(ignore()).prevKv).toBeUndefined();
    expect(store.range({ key: b('foo') }).kvs[0]).toMatchObject({ value: b('bar'), lease: 0n, version: 3 });
    expect(store.leaseKeys(5n)).toEqual([]);
  });

  it('ignore_lease keeps the lease, takes the request value, needs the key (etcd TestV3PutIgnoreLease)', () => {
    const store = newStore();
    const ignore = (extra: Partial<PutRequest> = {}): PutRequest => ({ key: b('zoo'), value: b('bar'), ignoreLease: true, ...extra });
    expect(codeOf(() => store.put(ignore()))).toBe('ERR_KV_KEY_NOT_FOUND');
    store.put({ key: b('zoo'), value: b('bar'), lease: 9n });
    store.txn({ compare: [], success: [{ type: 'put', request: ignore({ value: b('bar1') }) }], failure: [] });
    expect(store.range({ key: b('zoo') }).kvs[0]).toMatchObject({ value: b('bar1'), lease: 9n });
    expect(codeOf(() => store.put(ignore({ lease: 9n })))).toBe('ERR_KV_LEASE_PROVIDED');
    store.put({ key: b('zoo'), value: b('bar') });
    expect(store.range({ key: b('zoo') }).kvs[0]).toMatchObject({ value: b('bar'), lease: 0n });
    // A key that was deleted is missing for ignore flags.
    store.deleteRange({ key: b('zoo') });
    expect(codeOf(() => store.put(ignore()))).toBe('ERR_KV_KEY_NOT_FOUND');
  });

  it('rejects an empty key (etcd checkPutRequest) and changes nothing on any error', () => {
    const store = newStore();
    store.put({ key: b('a'), value: b('1') });
    const before = store.hash();
    expect(codeOf(() => store.put({ key: new Uint8Array(0), value: b('x') }))).toBe('ERR_KV_EMPTY_KEY');
    expect(codeOf(() => store.put({ key: b('missing'), ignoreLease: true }))).toBe('ERR_KV_KEY_NOT_FOUND');
    expect(store.hash()).toBe(before);
    expect(store.currentRevision).toBe(2);
  });

  it('copies what it keeps: reusing the request buffers later does not change the store', () => {
    const store = newStore();
    const key = b('key');
    const value = b('value');
    store.put({ key, value });
    key.fill(0x7a);
    value.fill(0x7a);
    expect(store.range({ key: b('key') }).kvs[0]!.value).toEqual(b('value'));
  });

  it('stores empty values and binary values exactly', () => {
    const store = newStore();
    const binary = new Uint8Array(70_000).map((_, i) => (i * 31) & 0xff);
    store.put({ key: b('empty') });
    store.put({ key: b('bin'), value: binary });
    expect(store.range({ key: b('empty') }).kvs[0]!.value.length).toBe(0);
    expect(equalBytes(store.range({ key: b('bin') }).kvs[0]!.value, binary)).toBe(true);
  });
});

describe('DeleteRange (etcd TestV3DeleteRange, mvcc TestKVDeleteRange / TestKVDeleteMultipleTimes)', () => {
  const table: { name: string; keys: string[]; begin: string; end: string; prevKv: boolean; want: string[]; deleted: number }[] = [
    { name: 'delete middle', keys: ['foo', 'foo/abc', 'fop'], begin: 'foo/', end: 'fop', prevKv: false, want: ['foo', 'fop'], deleted: 1 },
    { name: 'no delete', keys: ['foo', 'foo/abc', 'fop'], begin: 'foo/', end: 'foo/', prevKv: false, want: ['foo', 'foo/abc', 'fop'], deleted: 0 },
    { name: 'delete first', keys: ['foo', 'foo/abc', 'fop'], begin: 'fo', end: 'fop', prevKv: false, want: ['fop'], deleted: 2 },
    { name: 'delete tail', keys: ['foo', 'foo/abc', 'fop'], begin: 'foo/', end: 'fos', prevKv: false, want: ['foo'], deleted: 2 },
    { name: 'delete exact', keys: ['foo', 'foo/abc', 'fop'], begin: 'foo/abc', end: '', prevKv: false, want: ['foo', 'fop'], deleted: 1 },
    { name: 'delete none [x,x)', keys: ['foo'], begin: 'foo', end: 'foo', prevKv: false, want: ['foo'], deleted: 0 },
    { name: 'delete middle with prev_kv', keys: ['foo', 'foo/abc', 'fop'], begin: 'foo/', end: 'fop', prevKv: true, want: ['foo', 'fop'], deleted: 1 },
  ];
  for (const row of table) {
    it(row.name, () => {
      const store = newStore();
      putAll(store, row.keys, '');
      const response = store.deleteRange({ key: b(row.begin), rangeEnd: row.end === '' ? undefined : b(row.end), prevKv: row.prevKv });
      expect(response.deleted).toBe(row.deleted);
      expect(response.prevKvs.length).toBe(row.prevKv ? row.deleted : 0);
      const after = store.range({ key: new Uint8Array([0]), rangeEnd: new Uint8Array([0xff]) });
      expect(keysOf(after.kvs)).toEqual(row.want);
      // The delete's header revision equals the next read's (no bump when nothing was deleted).
      expect(response.revision).toBe(after.revision);
      expect(response.revision).toBe(row.keys.length + 1 + (row.deleted > 0 ? 1 : 0));
    });
  }

  it('prev_kvs carry the deleted versions in key order; all deletes share one revision', () => {
    const store = newStore();
    store.put({ key: b('b'), value: b('2') });
    store.put({ key: b('a'), value: b('1'), lease: 3n });
    const response = store.deleteRange({ key: b('a'), rangeEnd: FROM_KEY, prevKv: true });
    expect(response.prevKvs.map(plain)).toEqual([
      { key: 'a', value: '1', createRevision: 3, modRevision: 3, version: 1, lease: 3n },
      { key: 'b', value: '2', createRevision: 2, modRevision: 2, version: 1, lease: 0n },
    ]);
    expect(response.revision).toBe(4);
    expect(store.leaseKeys(3n)).toEqual([]);
    expect(store.keyCount).toBe(0);
  });

  it('deleting twice deletes once (etcd TestKVDeleteMultipleTimes)', () => {
    const store = newStore();
    store.put({ key: b('foo'), value: b('bar') });
    expect(store.deleteRange({ key: b('foo') })).toMatchObject({ deleted: 1, revision: 3 });
    expect(store.deleteRange({ key: b('foo') })).toMatchObject({ deleted: 0, revision: 3 });
    expect(store.currentRevision).toBe(3);
  });

  it('rejects an empty key (etcd checkDeleteRequest)', () => {
    expect(codeOf(() => newStore().deleteRange({ key: new Uint8Array(0) }))).toBe('ERR_KV_EMPTY_KEY');
  });
});

describe('lease key revocation (etcd lessor.Revoke deletes attached keys in key order, one revision)', () => {
  it('deletes every attached key in ascending order with consecutive sub-revisions', () => {
    const store = newStore();
    for (const key of ['m', 'c', 'x', 'a']) store.put({ key: b(key), value: b('v'), lease: 42n });
    store.put({ key: b('free'), value: b('v') });
    const response = store.revokeLeaseKeys(42n);
    expect(response).toMatchObject({ revision: 7, deleted: 4 });
    const events = store.readEvents({ fromRevision: 7, key: FROM_KEY, rangeEnd: FROM_KEY, maxEvents: 10 }).events;
    expect(events.map((event) => [new TextDecoder().decode(event.kv.key), event.type, event.subRevision])).toEqual([
      ['a', 'DELETE', 0],
      ['c', 'DELETE', 1],
      ['m', 'DELETE', 2],
      ['x', 'DELETE', 3],
    ]);
    expect(keysOf(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).kvs)).toEqual(['free']);
    // Nothing attached: no revision.
    expect(store.revokeLeaseKeys(42n)).toMatchObject({ revision: 7, deleted: 0 });
    expect(() => store.revokeLeaseKeys(0n)).toThrow(TypeError);
  });
});
