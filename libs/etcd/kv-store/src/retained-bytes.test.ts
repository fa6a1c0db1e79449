import { describe, expect, it } from 'vitest';
import { KVStore } from './kv-store';
import { RECORD_OVERHEAD_BYTES, RECORD_SNAPSHOT_OVERHEAD_BYTES } from './state-digest';
import { SeededRng } from '@ward/shared/clock';
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

  it('bounds the snapshot from above: every record with its key, its value and RECORD_SNAPSHOT_OVERHEAD_BYTES', () => {
    const rng = new SeededRng(20);
    const store = newStore();
    const text = (length: number): Uint8Array => b('k'.repeat(length));
    for (let round = 0; round < 3000; round++) {
      const key = text(1 + rng.nextInt(300));
      const choice = rng.nextInt(10);
      if (choice === 0) store.deleteRange({ key });
      else store.put({ key, value: new Uint8Array(rng.nextInt(600)).fill(118), ...(choice < 4 ? { lease: 0x7fffffffffffffffn } : {}) });
      if (round === 2000) {
        store.compact(store.currentRevision - 500);
        while (store.compactionStep() !== true);
      }
    }
    const bytes = store.snapshot().length;
    // The head (magic, format, four varints) and the trailer are the rest.
    expect(bytes).toBeLessThanOrEqual(store.snapshotBoundBytes + 64);
    // Not loose where keys are many and values large: a million such keys bound at 1.2x their snapshot.
    const wide = newStore();
    for (let i = 0; i < 2000; i++) wide.put({ key: b(`scale/${String(i).padStart(9, '0')}`), value: new Uint8Array(256) });
    expect(wide.snapshot().length).toBeLessThanOrEqual(wide.snapshotBoundBytes + 64);
    expect(wide.snapshotBoundBytes).toBeLessThan(wide.snapshot().length * 1.2);
    expect(RECORD_SNAPSHOT_OVERHEAD_BYTES).toBeLessThan(RECORD_OVERHEAD_BYTES);
    expect(KVStore.restore(store.snapshot(), testOptions()).snapshotBoundBytes).toBe(store.snapshotBoundBytes);
  });
});
