import { describe, expect, it } from 'vitest';
import { FROM_KEY, b, canonical, newStore, putAll } from './testing';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
};

describe('Compact (etcd mvcc kvstore.go updateCompactRev, key_index.go compact)', () => {
  it('compacts at the current revision (etcd TestV3CompactCurrentRev) and reads there still work', () => {
    const store = newStore();
    putAll(store, ['foo', 'foo', 'foo']); // 2, 3, 4
    expect(store.compact(4)).toEqual({ revision: 4 });
    expect(store.compactRevision).toBe(4);
    expect(store.range({ key: b('foo'), revision: 4 }).kvs[0]).toMatchObject({ modRevision: 4, version: 3, createRevision: 2 });
  });

  it('refuses a revision at or below the last compaction and a future revision (etcd TestKVCompactBad)', () => {
    const store = newStore();
    putAll(store, ['foo', 'foo', 'foo']); // 2, 3, 4
    expect(codeOf(() => store.compact(5))).toBe('ERR_KV_FUTURE_REVISION');
    expect(store.compact(3).revision).toBe(4);
    expect(codeOf(() => store.compact(3))).toBe('ERR_KV_COMPACTED');
    expect(codeOf(() => store.compact(2))).toBe('ERR_KV_COMPACTED');
    expect(() => store.compact(2)).toThrowError(expect.objectContaining({ revision: 2, compactRevision: 3 }));
  });

  it('starts at compact revision -1, so compacting at 0 is accepted once (etcd compactMainRev quirk)', () => {
    const store = newStore();
    expect(store.compactRevision).toBe(-1);
    expect(store.compact(0).revision).toBe(1);
    expect(codeOf(() => store.compact(0))).toBe('ERR_KV_COMPACTED');
    expect(store.compact(1).revision).toBe(1);
  });

  it('keeps the latest version of every live key at or below the revision (etcd TestKVCompactReserveLastValue)', () => {
    const store = newStore();
    store.put({ key: b('foo'), value: b('bar0'), lease: 1n }); // 2
    store.put({ key: b('foo'), value: b('bar1'), lease: 2n }); // 3
    store.deleteRange({ key: b('foo') }); // 4
    store.put({ key: b('foo'), value: b('bar2'), lease: 3n }); // 5
    const expectations: [number, string | undefined][] = [
      [1, 'bar0'],
      [2, 'bar1'],
      [3, undefined],
      [4, 'bar2'],
    ];
    for (const [compactAt, afterValue] of expectations) {
      const copy = newStore();
      copy.put({ key: b('foo'), value: b('bar0'), lease: 1n });
      copy.put({ key: b('foo'), value: b('bar1'), lease: 2n });
      copy.deleteRange({ key: b('foo') });
      copy.put({ key: b('foo'), value: b('bar2'), lease: 3n });
      copy.compact(compactAt + 1);
      // etcd reads at revision+1 after compacting at revision+1: the version live then remains.
      const kv = copy.range({ key: b('foo'), revision: compactAt + 1 }).kvs[0];
      expect(kv === undefined ? undefined : new TextDecoder().decode(kv.value)).toBe(afterValue);
    }
    expect(store.range({ key: b('foo') }).kvs[0]!.lease).toBe(3n);
  });

  it('removes a key whose newest record is a tombstone below the revision, keeps one exactly at it', () => {
    const store = newStore();
    store.put({ key: b('gone'), value: b('x') }); // 2
    store.put({ key: b('edge'), value: b('x') }); // 3
    store.deleteRange({ key: b('gone') }); // 4
    store.deleteRange({ key: b('edge') }); // 5
    store.compact(5);
    expect(store.hasHistory(b('gone'))).toBe(false);
    expect(store.hasHistory(b('edge'))).toBe(true);
    store.put({ key: b('x'), value: b('x') }); // 6
    store.compact(6);
    expect(store.hasHistory(b('edge'))).toBe(false);
    expect(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).count).toBe(1);
  });

  it('answers every read at or above the compact revision exactly as before', () => {
    const store = newStore();
    const keys = ['a', 'b', 'c', 'd'];
    for (let i = 0; i < 40; i++) {
      const key = keys[(i * 7) % keys.length]!;
      if (i % 5 === 4) store.deleteRange({ key: b(key) });
      else store.put({ key: b(key), value: b(`v${i}`) });
    }
    const readAll = (revision: number) => canonical(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY, revision }));
    const before = new Map<number, string>();
    for (let revision = 1; revision <= store.currentRevision; revision++) before.set(revision, readAll(revision));
    const compactAt = Math.floor(store.currentRevision / 2);
    store.compact(compactAt);
    for (let revision = compactAt; revision <= store.currentRevision; revision++) expect(readAll(revision)).toBe(before.get(revision));
    expect(codeOf(() => readAll(compactAt - 1))).toBe('ERR_KV_COMPACTED');
  });
});
