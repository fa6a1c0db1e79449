import { describe, expect, it } from 'vitest';
import { KVStore } from './kv-store';
import { RECORD_OVERHEAD_BYTES } from './state-digest';
import { b, newStore, testOptions } from './testing';

const cost = (key: string, value?: string): number => RECORD_OVERHEAD_BYTES + key.length + (value?.length ?? 0);

describe('KVStore.retainedBytes (the backend quota measure)', () => {
  it('counts every retained version and tombstone, and compaction gives their bytes back', () => {
    const store = newStore();
    expect(store.retainedBytes).toBe(0);
    store.put({ key: b('foo'), value: b('bar-1') });
    expect(store.retainedBytes).toBe(cost('foo', 'bar-1'));
    store.put({ key: b('foo'), value: b('bar-22') });
    store.put({ key: b('zz'), value: b('') });
    expect(store.retainedBytes).toBe(cost('foo', 'bar-1') + cost('foo', 'bar-22') + cost('zz'));
    store.deleteRange({ key: b('foo') });
    const beforeCompaction = cost('foo', 'bar-1') + cost('foo', 'bar-22') + cost('zz') + cost('foo');
    expect(store.retainedBytes).toBe(beforeCompaction);
    // The tombstone sits at the compact revision, so it stays (as in etcd); older versions go, their
    // bytes given back as their chains are cut (in steps, after the compaction is answered).
    store.compact(store.currentRevision);
    expect(store.compactionPending).toBe(true);
    expect(store.retainedBytes).toBe(beforeCompaction);
    expect(store.compactionStep()).toBe(true);
    expect(store.compactionPending).toBe(false);
    expect(store.retainedBytes).toBe(cost('zz') + cost('foo'));
    // One revision later the tombstone is below the compact revision and goes too.
    store.put({ key: b('zz'), value: b('q') });
    store.compact(store.currentRevision);
    expect(store.compactionStep()).toBe(true);
    expect(store.retainedBytes).toBe(cost('zz', 'q'));
    const restored = KVStore.restore(store.snapshot(), testOptions());
    expect(restored.retainedBytes).toBe(cost('zz', 'q'));
  });

  it('counts a txn put and a range delete inside one revision', () => {
    const store = newStore();
    store.put({ key: b('a/1'), value: b('x') });
    store.put({ key: b('a/2'), value: b('y') });
    store.txn({
      compare: [],
      success: [
        { type: 'deleteRange', request: { key: b('a/'), rangeEnd: b('a0') } },
        { type: 'put', request: { key: b('b'), value: b('zzz') } },
      ],
      failure: [],
    });
    expect(store.retainedBytes).toBe(cost('a/1', 'x') + cost('a/2', 'y') + cost('a/1') + cost('a/2') + cost('b', 'zzz'));
  });
});
