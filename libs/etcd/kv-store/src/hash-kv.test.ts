import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KVCompactedError, KVFutureRevisionError } from './errors';
import { b, newStore } from './testing';
import type { KVStore } from './kv-store';

// The expected hashes were read from a real etcd 3.4.23 (`etcdctl endpoint hashkv --rev N`) after
// the same requests on a fresh single-member cluster: ward's HashKV is etcd's, bit for bit.
const ETCD_EMPTY_HASH = 1084519789;

/** put a 1; put b 2; put a 3; del b; txn { put c x; put d "" }; put e v×200. */
function etcdSequence(): KVStore {
  const store = newStore();
  store.put({ key: b('a'), value: b('1') });
  store.put({ key: b('b'), value: b('2') });
  store.put({ key: b('a'), value: b('3') });
  store.deleteRange({ key: b('b') });
  store.txn({
    compare: [],
    success: [
      { type: 'put', request: { key: b('c'), value: b('x') } },
      { type: 'put', request: { key: b('d'), value: b('') } },
    ],
    failure: [],
  });
  store.put({ key: b('e'), value: b('v'.repeat(200)) });
  return store;
}

describe('HashKV (etcd HashByRev)', () => {
  it('hashes an empty store to etcd’s empty-bucket value', () => {
    expect(newStore().hashKv(0).run()).toEqual({ hash: ETCD_EMPTY_HASH, compactRevision: -1, revision: 1 });
  });

  it('gives etcd 3.4’s hash at every revision of the same history', () => {
    const store = etcdSequence();
    const expected: Record<number, number> = { 0: 611905588, 1: 1084519789, 2: 2587454935, 3: 1827592406, 4: 2069675932, 5: 1125682900, 6: 2613649842, 7: 611905588 };
    for (const [revision, hash] of Object.entries(expected)) {
      expect(store.hashKv(Number(revision)).run().hash, `revision ${revision}`).toBe(hash);
    }
  });

  it('after a compaction hashes what compaction kept, as etcd does, and refuses compacted revisions', () => {
    const store = etcdSequence();
    store.compact(4);
    expect(store.hashKv(0).run()).toEqual({ hash: 1444033574, compactRevision: 4, revision: 7 });
    expect(store.hashKv(5).run().hash).toBe(1468967122);
    expect(store.hashKv(6).run().hash).toBe(2549487896);
    expect(() => store.hashKv(4)).toThrow(KVCompactedError);
    expect(() => store.hashKv(2)).toThrow(KVCompactedError);
  });

  /** put x, del x, put y, del y, compact 5 (no live key left), then put z 2; the hash after the compaction and after z. */
  const tombstonesThenZ = (): { store: KVStore; hashes: number[] } => {
    const hashes: number[] = [];
    const store = newStore();
    store.put({ key: b('x'), value: b('1') });
    store.deleteRange({ key: b('x') });
    store.put({ key: b('y'), value: b('1') });
    store.deleteRange({ key: b('y') });
    store.compact(5);
    hashes.push(store.hashKv(0).run().hash);
    store.put({ key: b('z'), value: b('2') });
    hashes.push(store.hashKv(0).run().hash);
    return { store, hashes };
  };

  it('with no live key at the hashed revision hashes what etcd’s database still holds, and leases as etcd encodes them', () => {
    const { store, hashes } = tombstonesThenZ();
    expect(hashes).toEqual([ETCD_EMPTY_HASH, 4232257556]);
    store.put({ key: b('f'), value: b('leased'), lease: 728635538394306315n });
    expect(store.hashKv(0).run().hash).toBe(2532286533);
  });

  it('hashes a negative lease ID as etcd does (int64, two\'s complement on the wire)', () => {
    // etcd 3.4.23, after the same requests: a lease granted with ID -9, put f leased --lease=-9.
    const { store } = tombstonesThenZ();
    store.put({ key: b('f'), value: b('leased'), lease: -9n });
    expect(store.hashKv(0).run().hash).toBe(2919987921);
  });

  it('refuses a future revision', () => {
    expect(() => etcdSequence().hashKv(8)).toThrow(KVFutureRevisionError);
  });

  it('in small steps gives the same hash as in one, with writes landing between the steps', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.boolean()), { minLength: 1, maxLength: 120 }), fc.integer({ min: 1, max: 7 }), (ops, budget) => {
        const store = newStore();
        for (const [key, remove] of ops) {
          if (remove) store.deleteRange({ key: b(`k${key}`) });
          else store.put({ key: b(`k${key}`), value: b(`v${key}`) });
        }
        const whole = store.hashKv(0).run();
        const task = store.hashKv(0);
        let extra = 0;
        while (!task.step(budget)) store.put({ key: b(`later-${extra++}`), value: b('x') });
        expect(task.result).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('starts over after a compaction below its revision, and fails after one that removed it', () => {
    const store = etcdSequence();
    const expectedAfterCompaction = (() => {
      const copy = etcdSequence();
      copy.compact(3);
      return copy.hashKv(6).run().hash;
    })();
    const task = store.hashKv(6);
    expect(task.step(1)).toBe(false);
    store.compact(3);
    while (!task.step(1));
    expect(task.result).toEqual({ hash: expectedAfterCompaction, compactRevision: 3, revision: 6 });

    const doomed = store.hashKv(5);
    doomed.step(1);
    store.compact(5);
    expect(() => doomed.step(1)).toThrow(KVCompactedError);
  });
});
