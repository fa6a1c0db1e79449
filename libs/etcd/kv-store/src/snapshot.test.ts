import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { equalBytes, splitBytes } from '@ward/shared/bytes';
import { sha256 } from '@ward/shared/digest';
import { KVSnapshotInvalidError } from './errors';
import { KVStore } from './kv-store';
import { StateHasher } from './state-hash';
import { FROM_KEY, b, canonical, newStore, testOptions } from './testing';
import type { RequestOp } from './types';
import { SNAPSHOT_STEP_BYTES, type SnapshotStepResult } from './snapshot';
import { joinChunks } from '@ward/shared/binary';

/** A random workload step over a small key space (deterministic from the generated values). */
type Op =
  | { kind: 'put'; key: string; value: string; lease: bigint }
  | { kind: 'delete'; key: string; fromKey: boolean }
  | { kind: 'txn'; keys: string[] }
  | { kind: 'compact'; back: number }
  | { kind: 'revoke'; lease: bigint };

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'a/1', 'a/2', '\u00ff');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('put' as const), key: keyArb, value: fc.string({ maxLength: 4 }), lease: fc.constantFrom(0n, 0n, 7n, -9n, 1n << 62n) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: keyArb, fromKey: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('txn' as const), keys: fc.uniqueArray(keyArb, { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), back: fc.integer({ min: 0, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), lease: fc.constantFrom(7n, -9n) }) },
);

function apply(store: KVStore, op: Op): void {
  switch (op.kind) {
    case 'put':
      store.put({ key: b(op.key), value: b(op.value), lease: op.lease });
      return;
    case 'delete':
      store.deleteRange({ key: b(op.key), rangeEnd: op.fromKey ? FROM_KEY : undefined });
      return;
    case 'txn': {
      const success: RequestOp[] = op.keys.map((key) => ({ type: 'put', request: { key: b(key), value: b('t') } }));
      store.txn({ compare: [{ target: 'VERSION', result: 'GREATER', key: b('a'), version: 1 }], success, failure: [{ type: 'deleteRange', request: { key: b('c') } }] });
      return;
    }
    case 'compact': {
      const revision = store.currentRevision - op.back;
      if (revision > store.compactRevision) store.compact(revision);
      return;
    }
    case 'revoke':
      store.revokeLeaseKeys(op.lease);
      return;
  }
}

/** Everything observable: reads at every retained revision, the Watch log, lease attachments. */
function observe(store: KVStore): string {
  const reads: unknown[] = [];
  for (let revision = Math.max(1, store.compactRevision); revision <= store.currentRevision; revision++) {
    reads.push(store.range({ key: FROM_KEY, rangeEnd: FROM_KEY, revision }));
  }
  const events = store.readEvents({ fromRevision: store.oldestEventRevision, key: FROM_KEY, rangeEnd: FROM_KEY, prevKv: true, maxEvents: 1_000_000 });
  return canonical({ reads, events, leases: [store.leaseKeys(7n), store.leaseKeys(-9n), store.leaseKeys(1n << 62n)], counts: [store.keyCount, store.eventCount] });
}

describe('snapshot -> restore (etcd mvcc TestKVSnapshot / TestKVRestore; raft spec §3.6 replay determinism)', () => {
  it('gives the same hash, the same bytes and the same behaviour over random operation sequences', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.array(opArb, { maxLength: 20 }), (before, after) => {
        const original = newStore({ eventHistoryMaxEvents: 12 });
        for (const op of before) apply(original, op);
        const bytes = original.snapshot();
        const restored = KVStore.restore(bytes, testOptions({ eventHistoryMaxEvents: 12 }));
        // A restored store whose digest is first read only after more changes and compactions.
        const readLate = KVStore.restore(bytes, testOptions({ eventHistoryMaxEvents: 12 }));
        expect(restored.hash()).toBe(original.hash());
        expect(restored.retainedBytes).toBe(original.retainedBytes);
        // The incremental digest, summed from the state on its first read after a restore,
        // matches the one kept in step.
        expect(restored.digest()).toBe(original.digest());
        expect(equalBytes(restored.snapshot(), bytes)).toBe(true);
        expect(observe(restored)).toBe(observe(original));
        for (const op of after) {
          apply(original, op);
          apply(restored, op);
          apply(readLate, op);
        }
        expect(restored.hash()).toBe(original.hash());
        expect(restored.digest()).toBe(original.digest());
        expect(readLate.digest()).toBe(original.digest());
        // (After the digest: the bytes of a compaction come back as its chains are cut, which the digest finishes.)
        expect(readLate.retainedBytes).toBe(original.retainedBytes);
        expect(KVStore.restore(original.snapshot(), testOptions({ eventHistoryMaxEvents: 12 })).digest()).toBe(original.digest());
        expect(observe(restored)).toBe(observe(original));
      }),
      { numRuns: 300 },
    );
  });

  it('replicas applying the same operations have identical hashes; one differing write changes it', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 30 }), (ops) => {
        const [one, two] = [newStore(), newStore()];
        for (const op of ops) {
          apply(one, op);
          apply(two, op);
        }
        expect(one.hash()).toBe(two.hash());
        expect(one.digest()).toBe(two.digest());
        two.put({ key: b('divergent'), value: b('x') });
        expect(one.hash()).not.toBe(two.hash());
        expect(one.digest()).not.toBe(two.digest());
      }),
      { numRuns: 100 },
    );
  });

  it('keeps the Watch log across a restore after compacting at a delete (tombstone at the compact revision)', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v') }); // 2
    store.deleteRange({ key: b('k') }); // 3
    store.compact(3);
    const restored = KVStore.restore(store.snapshot(), testOptions());
    const read = (s: KVStore) => s.readEvents({ fromRevision: 3, key: FROM_KEY, rangeEnd: FROM_KEY, maxEvents: 10 }).events.map((event) => event.type);
    expect(read(restored)).toEqual(['DELETE']);
    expect(read(store)).toEqual(['DELETE']);
    expect(restored.hash()).toBe(store.hash());
  });

  it('keeps every change of the compact revision when one txn put and deleted the same key', () => {
    const store = newStore();
    store.put({ key: b('k'), value: b('v1') }); // 2
    store.txn({ compare: [], success: [{ type: 'put', request: { key: b('k'), value: b('v2') } }, { type: 'deleteRange', request: { key: b('k'), rangeEnd: FROM_KEY } }], failure: [] }); // 3
    store.compact(3);
    const restored = KVStore.restore(store.snapshot(), testOptions());
    const read = (s: KVStore) => s.readEvents({ fromRevision: 3, key: FROM_KEY, rangeEnd: FROM_KEY, maxEvents: 10 }).events.map((event) => `${event.type}.${event.subRevision}`);
    expect(read(store)).toEqual(['PUT.0', 'DELETE.1']);
    expect(read(restored)).toEqual(['PUT.0', 'DELETE.1']);
    expect(restored.range({ key: b('k'), revision: 3 }).count).toBe(0);
    expect(restored.hash()).toBe(store.hash());
  });

  it('hash() is a format 1 snapshot\'s trailer, whichever format the store writes, and changes with the state', () => {
    const trailerHex = (bytes: Uint8Array): string => {
      const view = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - 8, 8);
      return view.getUint32(0, true).toString(16).padStart(8, '0') + view.getUint32(4, true).toString(16).padStart(8, '0');
    };
    const store = newStore({ snapshotFormat: 1 });
    const latest = newStore();
    const empty = store.hash();
    expect(empty).toMatch(/^[0-9a-f]{16}$/);
    for (const each of [store, latest]) each.put({ key: b('a'), value: b('1') });
    expect(store.hash()).not.toBe(empty);
    expect(store.hash()).toBe(trailerHex(store.snapshot()));
    expect(latest.hash()).toBe(store.hash());
    expect(trailerHex(latest.snapshot())).not.toBe(store.hash());
  });

  it('format 2 is format 1 with its format byte and its trailer\'s second word (0, reserved) changed; each restores what the other does', () => {
    const one = newStore({ snapshotFormat: 1 });
    const two = newStore({ snapshotFormat: 2 });
    for (const store of [one, two]) {
      store.put({ key: b('a'), value: b('1'), lease: 5n });
      store.put({ key: b('b'), value: new Uint8Array(70_000).fill(3) });
      store.deleteRange({ key: b('a') });
      store.compact(2);
    }
    const bytes1 = one.snapshot();
    const bytes2 = two.snapshot();
    expect(bytes1[4]).toBe(1);
    expect(bytes2[4]).toBe(2);
    expect(bytes2.length).toBe(bytes1.length);
    const body = bytes2.subarray(0, bytes2.length - 8);
    expect(equalBytes(body.subarray(5), bytes1.subarray(5, bytes1.length - 8))).toBe(true);
    const crc = new StateHasher();
    crc.write(body);
    const trailer = new DataView(bytes2.buffer, bytes2.byteOffset + body.length, 8);
    expect(trailer.getUint32(0, true)).toBe(crc.crc32c);
    expect(trailer.getUint32(4, true)).toBe(0);
    // A store reads both and writes its own format; the state is the same.
    const fromOne = KVStore.restore(bytes1, testOptions({ snapshotFormat: 2 }));
    const fromTwo = KVStore.restore(bytes2, testOptions({ snapshotFormat: 1 }));
    expect(equalBytes(fromOne.snapshot(), bytes2)).toBe(true);
    expect(equalBytes(fromTwo.snapshot(), bytes1)).toBe(true);
    expect(fromOne.hash()).toBe(one.hash());
    // The streamed task writes the same bytes, and sizes them.
    const task = two.snapshotTask({ nextBuffer: () => new Uint8Array(64 * 1024) });
    const streamed: Uint8Array[] = [];
    let result: SnapshotStepResult;
    do {
      result = task.step(3);
      for (const chunk of task.takeChunks()) streamed.push(chunk.slice());
    } while (result === 'more');
    expect(task.sizeBytes).toBe(bytes2.length);
    expect(equalBytes(joinChunks(streamed), bytes2)).toBe(true);
  });

  it('refuses a snapshotFormat other than 1 or 2', () => {
    expect(() => newStore({ snapshotFormat: 3 as never })).toThrow(/snapshotFormat must be 1 or 2/);
  });

  it('a state of several MiB is encoded in chunks that join to the bytes a restore re-encodes alike', () => {
    const store = newStore();
    const value = 'v'.repeat(4000);
    for (let i = 0; i < 1000; i++) store.put({ key: b(`key-${String(i).padStart(4, '0')}`), value: b(`${value}${i}`) });
    const chunks = store.snapshotChunks();
    expect(chunks.length).toBeGreaterThan(3);
    const joined = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let offset = 0;
    for (const chunk of chunks) {
      joined.set(chunk, offset);
      offset += chunk.length;
    }
    const restored = KVStore.restore(joined, testOptions());
    expect(equalBytes(restored.snapshot(), joined)).toBe(true);
    expect(restored.hash()).toBe(store.hash());
    expect(restored.range({ key: b('key-0999') }).kvs[0]?.value).toEqual(b(`${value}999`));
  });

  it('a snapshot taken in steps while the store changes has the bytes of the state at its start, or goes stale when a compaction came between', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), fc.array(fc.tuple(opArb, fc.integer({ min: 1, max: 3 })), { maxLength: 30 }), (before, during) => {
        const store = newStore();
        for (const op of before) apply(store, op);
        const atStart = store.snapshot();
        const task = store.snapshotTask();
        let result: SnapshotStepResult = 'more';
        let compactedWhileTaking = false;
        for (const [op, budget] of during) {
          result = task.step(budget);
          if (result !== 'more') break;
          const compactRevision = store.compactRevision;
          apply(store, op);
          if (store.compactRevision !== compactRevision) compactedWhileTaking = true;
        }
        while (result === 'more') result = task.step(1);
        expect(result).toBe(compactedWhileTaking ? 'stale' : 'done');
        if (result === 'done') expect(equalBytes(joinChunks(task.chunks), atStart)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('a streamed snapshot sizes the image, then writes the same bytes into the buffers handed back to it, while the store changes', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 30 }),
        fc.array(fc.tuple(opArb, fc.integer({ min: 1, max: 3 })), { maxLength: 40 }),
        fc.integer({ min: 64, max: 200 }),
        (before, during, chunkBytes) => {
          const store = newStore();
          for (const op of before) apply(store, op);
          const atStart = store.snapshot();
          // The consumer copies what it takes and hands the buffers back: a pool of a few buffers.
          const pool: Uint8Array[] = [];
          const lent = new Set<ArrayBufferLike>();
          const nextBuffer = (): Uint8Array => {
            const buffer = pool.pop() ?? new Uint8Array(chunkBytes);
            lent.add(buffer.buffer);
            return buffer;
          };
          const task = store.snapshotTask({ nextBuffer });
          const copies: Uint8Array[] = [];
          const take = (): void => {
            for (const chunk of task.takeChunks()) {
              copies.push(chunk.slice());
              // Every chunk but the trailer's is in a buffer the pool lent.
              if (lent.has(chunk.buffer)) pool.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunkBytes));
              else expect(chunk.length).toBe(8);
            }
          };
          let result: SnapshotStepResult = 'more';
          let compactedWhileTaking = false;
          for (const [op, budget] of during) {
            result = task.step(budget);
            take();
            // Nothing is handed out before the length is known.
            if (task.sizeBytes === undefined) expect(copies).toEqual([]);
            if (result !== 'more') break;
            const compactRevision = store.compactRevision;
            apply(store, op);
            if (store.compactRevision !== compactRevision) compactedWhileTaking = true;
          }
          while (result === 'more') {
            result = task.step(1);
            take();
          }
          expect(result).toBe(compactedWhileTaking ? 'stale' : 'done');
          if (result !== 'done') return;
          expect(task.sizeBytes).toBe(atStart.length);
          expect(equalBytes(joinChunks(copies), atStart)).toBe(true);
          // Every buffer lent came back but the one the writer took after its last flush.
          expect(lent.size - pool.length).toBe(1);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a streamed snapshot of several MiB is written through a handful of reused buffers', () => {
    const store = newStore();
    for (let i = 0; i < 1000; i++) store.put({ key: b(`key-${String(i).padStart(4, '0')}`), value: b(`${'v'.repeat(4000)}${i}`) });
    const pool: Uint8Array[] = [];
    let created = 0;
    const task = store.snapshotTask({
      nextBuffer: () => {
        const buffer = pool.pop();
        if (buffer !== undefined) return buffer;
        created++;
        return new Uint8Array(64 * 1024);
      },
    });
    const copies: Uint8Array[] = [];
    let result: SnapshotStepResult;
    do {
      result = task.step(50);
      for (const chunk of task.takeChunks()) {
        copies.push(chunk.slice());
        if (chunk.buffer.byteLength === 64 * 1024) pool.push(new Uint8Array(chunk.buffer));
      }
    } while (result === 'more');
    expect(result).toBe('done');
    const bytes = joinChunks(copies);
    expect(bytes.length).toBeGreaterThan(4_000_000);
    expect(equalBytes(bytes, store.snapshot())).toBe(true);
    // 50 keys of 4 KB fill about 3 of the 64 KiB buffers per step, and all go back to the pool.
    expect(created).toBeLessThanOrEqual(5);
  });

  it('a step of large values ends after SNAPSHOT_STEP_BYTES, short of its key budget, and the bytes are the same', () => {
    const store = newStore();
    // 24 values of 400 KiB: about 9.4 MiB, which a budget of 256 keys would take in one step.
    for (let i = 0; i < 24; i++) store.put({ key: b(`big-${String(i).padStart(2, '0')}`), value: new Uint8Array(400 * 1024).fill(i) });
    const task = store.snapshotTask();
    const copies: Uint8Array[] = [];
    let steps = 0;
    let result: SnapshotStepResult;
    do {
      result = task.step(256);
      steps++;
    } while (result === 'more');
    expect(result).toBe('done');
    for (const chunk of task.chunks) copies.push(chunk);
    expect(equalBytes(joinChunks(copies), store.snapshot())).toBe(true);
    // Each step stops once it wrote 1 MiB (3 values): 8 steps, and one that finds no key left.
    expect(SNAPSHOT_STEP_BYTES).toBe(1024 * 1024);
    expect(steps).toBeGreaterThanOrEqual(8);
  });

  it('uses standard checksums: CRC-32C("123456789") = e3069283, FNV-1a("a") = e40c292c', () => {
    const crc = new StateHasher();
    crc.write(b('123456789'));
    expect(crc.crc32c.toString(16)).toBe('e3069283');
    const fnv = new StateHasher();
    fnv.write(b('a'));
    expect(fnv.fnv1a.toString(16)).toBe('e40c292c');
  });
});

/** `bytes` cut at `cuts`, as Node Buffers (what gRPC hands over; their slice is a view, not a copy), each a copy. */
function piecesAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  return splitBytes(bytes, cuts).map((piece) => Buffer.from(piece));
}

/** Decodes pieces as a replica's feed does: each pushed, then overwritten (a reused buffer must not matter). */
function decodePieces(pieces: readonly Uint8Array[], options = testOptions({ eventHistoryMaxEvents: 12 })): KVStore {
  const decoder = KVStore.decoder(pieces.reduce((sum, piece) => sum + piece.length, 0), options);
  for (const piece of pieces) {
    decoder.push(piece);
    piece.fill(0xee);
  }
  return decoder.finish();
}

describe('KVStore.decoder: an image pushed in pieces', () => {
  it('restores the same state wherever the image is cut, over random operation sequences', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.array(fc.nat(400), { maxLength: 12 }), (ops, cuts) => {
        const original = newStore({ eventHistoryMaxEvents: 12 });
        for (const op of ops) apply(original, op);
        const bytes = original.snapshot();
        const restored = decodePieces(piecesAt(bytes, cuts));
        expect(equalBytes(restored.snapshot(), bytes)).toBe(true);
        expect(restored.digest()).toBe(original.digest());
        expect(restored.retainedBytes).toBe(original.retainedBytes);
        expect(observe(restored)).toBe(observe(original));
      }),
      { numRuns: 300 },
    );
  });

  it('restores byte by byte, and values larger than the pieces (a key straddling many pieces)', () => {
    const store = newStore();
    // 300 KiB values: past the first join of a straddling key (64 KiB), so it grows.
    for (let i = 0; i < 6; i++) store.put({ key: b(`big/${i}`), value: new Uint8Array(300 * 1024).fill(i + 1), lease: i % 2 === 0 ? 3n : 0n });
    for (let i = 0; i < 200; i++) store.put({ key: b(`small/${String(i).padStart(3, '0')}`), value: b(`v${i}`) });
    store.deleteRange({ key: b('small/1'), rangeEnd: b('small/2') });
    const bytes = store.snapshot();
    for (const size of [100 * 1024, 1024 * 1024, 7919]) {
      const cuts = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => (i + 1) * size);
      expect(equalBytes(decodePieces(piecesAt(bytes, cuts), testOptions()).snapshot(), bytes), `pieces of ${size} bytes`).toBe(true);
    }
    // Every byte its own piece (the head and each key straddle).
    const tiny = newStore();
    for (let i = 0; i < 30; i++) tiny.put({ key: b(`k${i}`), value: b(`value ${i}`), lease: 9n });
    tiny.compact(10);
    const tinyBytes = tiny.snapshot();
    expect(equalBytes(decodePieces(piecesAt(tinyBytes, Array.from({ length: tinyBytes.length }, (_, i) => i)), testOptions()).snapshot(), tinyBytes)).toBe(true);
  });

  it('refuses what restore refuses: a flipped bit, a short or a long image, garbage', () => {
    const store = newStore();
    for (let i = 0; i < 50; i++) store.put({ key: b(`k${String(i).padStart(2, '0')}`), value: b(`value ${i}`) });
    const bytes = store.snapshot();
    const outcome = (pieces: Uint8Array[], total = pieces.reduce((sum, p) => sum + p.length, 0)): string => {
      try {
        const decoder = KVStore.decoder(total, testOptions());
        for (const piece of pieces) decoder.push(piece);
        decoder.finish();
        return 'ok';
      } catch (error) {
        return error instanceof KVSnapshotInvalidError ? 'invalid' : `crash: ${String(error)}`;
      }
    };
    const cuts = [5, 17, 100, 101, 300];
    expect(outcome(piecesAt(bytes, cuts))).toBe('ok');
    const fnvSlot = bytes.length - 4;
    for (let i = 0; i < fnvSlot; i++) {
      const copy = bytes.slice();
      copy[i]! ^= 1 << (i % 8);
      expect(outcome(piecesAt(copy, cuts))).toBe('invalid');
    }
    expect(outcome(piecesAt(bytes.subarray(0, bytes.length - 1), cuts), bytes.length)).toBe('invalid');
    expect(outcome(piecesAt(bytes.subarray(0, 200), cuts), bytes.length)).toBe('invalid');
    expect(outcome([...piecesAt(bytes, cuts), Uint8Array.of(0)], bytes.length)).toBe('invalid');
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 13, maxLength: 200 }), fc.array(fc.nat(200)), (garbage, garbageCuts) => {
        expect(outcome(piecesAt(garbage, garbageCuts))).toBe('invalid');
      }),
      { numRuns: 300 },
    );
  });
});

describe('restore rejects bad bytes with a coded error and never crashes', () => {
  const sample = (): Uint8Array => {
    const store = newStore();
    store.put({ key: b('a'), value: b('1'), lease: 5n });
    store.put({ key: b('a'), value: b('2') });
    store.txn({ compare: [], success: [{ type: 'put', request: { key: b('b'), value: b('x') } }, { type: 'deleteRange', request: { key: b('a') } }], failure: [] });
    store.compact(3);
    return store.snapshot();
  };

  const outcome = (bytes: Uint8Array): string => {
    try {
      KVStore.restore(bytes, testOptions());
      return 'ok';
    } catch (error) {
      if (error instanceof KVSnapshotInvalidError) return 'invalid';
      return `crash: ${String(error)}`;
    }
  };

  it('every truncation is refused', () => {
    const bytes = sample();
    for (let length = 0; length < bytes.length; length++) expect(outcome(bytes.subarray(0, length))).toBe('invalid');
    expect(outcome(bytes)).toBe('ok');
  });

  it('every single-bit flip is refused, but in the trailer\'s second word (format 1\'s FNV-1a, format 2\'s reserved word: not checked on restore)', () => {
    const bytes = sample();
    const fnvSlot = bytes.length - 4;
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const copy = bytes.slice();
        copy[i]! ^= 1 << bit;
        expect(outcome(copy)).toBe(i < fnvSlot ? 'invalid' : 'ok');
      }
    }
  });

  it('random garbage is refused', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(outcome(bytes)).toBe('invalid');
      }),
      { numRuns: 500 },
    );
  });

  it('structurally wrong content with a valid checksum is refused (the decoder checks the MVCC invariants)', () => {
    // Re-seal a body after changing one field, so only the structural checks can catch it.
    const reseal = (body: Uint8Array): Uint8Array => {
      const hasher = new StateHasher();
      hasher.write(body);
      const out = new Uint8Array(body.length + 8);
      out.set(body);
      const view = new DataView(out.buffer);
      view.setUint32(body.length, hasher.crc32c, true);
      view.setUint32(body.length + 4, hasher.fnv1a, true);
      return out;
    };
    const bytes = sample();
    const body = bytes.subarray(0, bytes.length - 8);
    expect(outcome(reseal(body))).toBe('ok');
    let refused = 0;
    let accepted = 0;
    for (let i = 0; i < body.length; i++) {
      for (const delta of [1, 0x80]) {
        const copy = body.slice();
        copy[i] = (copy[i]! + delta) & 0xff;
        const result = outcome(reseal(copy));
        expect(result.startsWith('crash')).toBe(false);
        if (result === 'invalid') refused += 1;
        else accepted += 1;
      }
    }
    // Value and key bytes may change freely (a different but valid state); structure may not.
    expect(refused).toBeGreaterThan(accepted);
  });

  it('refuses a change log with a revision missing, a sub-revision twice or one past the end', () => {
    // Hand-made images: every key one live record created at its revision, floor 1, uncompacted.
    const image = (current: number, changes: readonly (readonly [string, number, number])[]): Uint8Array => {
      const body = [0x57, 0x4b, 0x56, 0x53, 1, current, 0, 1, changes.length];
      for (const [key, mod, sub] of changes) body.push(key.length, ...b(key), 1, 0, mod, sub, mod, 1, 1, 0x76);
      const hasher = new StateHasher();
      hasher.write(Uint8Array.from(body));
      const out = new Uint8Array(body.length + 8);
      out.set(body);
      new DataView(out.buffer).setUint32(body.length, hasher.crc32c, true);
      new DataView(out.buffer).setUint32(body.length + 4, hasher.fnv1a, true);
      return out;
    };
    expect(outcome(image(2, [['a', 2, 0], ['b', 2, 1]]))).toBe('ok');
    expect(outcome(image(3, [['a', 2, 0], ['b', 3, 0]]))).toBe('ok');
    expect(outcome(image(2, [['a', 2, 0], ['b', 2, 0]]))).toBe('invalid');
    expect(outcome(image(4, [['a', 2, 0], ['b', 4, 0]]))).toBe('invalid');
    expect(outcome(image(2, [['a', 2, 0], ['b', 2, 2]]))).toBe('invalid');
    expect(outcome(image(3, [['a', 2, 0], ['b', 2, 1]]))).toBe('invalid');
  });

  it('refuses an unknown format version and foreign bytes', () => {
    const bytes = sample();
    // Sealed with a valid CRC-32C, so only the format byte can refuse it.
    const withFormat = (format: number): Uint8Array => {
      const copy = bytes.slice();
      copy[4] = format;
      const hasher = new StateHasher();
      hasher.write(copy.subarray(0, copy.length - 8));
      new DataView(copy.buffer).setUint32(copy.length - 8, hasher.crc32c, true);
      return copy;
    };
    expect(outcome(withFormat(1))).toBe('ok');
    expect(outcome(withFormat(2))).toBe('ok');
    expect(outcome(withFormat(3))).toBe('invalid');
    expect(outcome(withFormat(0))).toBe('invalid');
    expect(outcome(new Uint8Array([0x57, 0x4b, 0x56, 0x53, 3, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe('invalid');
    expect(outcome(b('definitely not a snapshot'))).toBe('invalid');
    expect(bytes.length).toBeGreaterThan(20);
  });
});

describe('snapshot format 1, pinned (written by stores told snapshotFormat 1)', () => {
  const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

  it('encodes a small history (leases of both signs, a tombstone, compaction, a non-ASCII key) to these exact bytes', () => {
    const store = newStore({ snapshotFormat: 1 });
    store.put({ key: b('a'), value: b('1') });
    store.put({ key: b('b'), value: b('2'), lease: 7n });
    store.put({ key: b('a'), value: b('3'), lease: -9n });
    store.deleteRange({ key: b('b') });
    store.put({ key: b('\u00ff'), value: b('x') });
    store.compact(3);
    store.put({ key: b('c'), value: b('') });
    const bytes = store.snapshot();
    expect(hex(bytes)).toBe(
      '574b56530107040304016102000200020101310204000202f7ffffffffffffff013301620202030003010700000000000000013201050001630100070007010002c3bf0100060006010178bba198dd9bb08088',
    );
    expect(store.hash()).toBe('dd98a1bb8880b09b');
    expect(hex(KVStore.restore(bytes, testOptions({ snapshotFormat: 1 })).snapshot())).toBe(hex(bytes));
  });

  it('encodes a larger history (a 200 KB value across the writer\'s 64 KiB chunks) to the same bytes as before', () => {
    const store = newStore({ snapshotFormat: 1 });
    for (let i = 0; i < 3000; i++) {
      store.put({ key: b(`k/${i % 700}`), value: new Uint8Array((i * 37) % 300).fill(i & 0xff), lease: i % 5 === 0 ? BigInt(i) : 0n });
    }
    store.put({ key: b('huge'), value: new Uint8Array(200_000).map((_, i) => (i * 7) & 0xff) });
    for (let i = 0; i < 100; i++) store.deleteRange({ key: b(`k/${i * 3}`) });
    store.compact(1500);
    const bytes = store.snapshot();
    expect(bytes.length).toBe(556_375);
    expect(hex(sha256(bytes))).toBe('c46250d0b723afe894ee34df79dd0c78ae04e8f7ef1346aa92b9520eca982560');
    expect(store.hash()).toBe('0390879a07259779');
  });
});

describe('a compaction cut in steps (KVStore.compactionStep) against one cut at once', () => {
  const KEYS = ['a', 'b', 'c', 'd', 'a/1', 'a/2', '\u00ff'];
  const cutWhole = (store: KVStore): void => {
    expect(store.compactionStep(Number.MAX_SAFE_INTEGER)).toBe(true);
  };

  it('answers, snapshots and hashes alike at every step, and a snapshot or HashKV begun before the cutting ends has the bytes of the whole cut', () => {
    let sawPending = 0;
    let sawKeyLeft = 0;
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.array(fc.tuple(opArb, fc.integer({ min: 1, max: 3 })), { maxLength: 30 }), fc.integer({ min: 1, max: 4 }), (before, during, snapshotBudget) => {
        const stepped = newStore({ eventHistoryMaxEvents: 12 });
        const whole = newStore({ eventHistoryMaxEvents: 12 });
        for (const op of before) {
          apply(stepped, op);
          apply(whole, op);
          cutWhole(whole);
        }
        // Begun while a compaction may still be cutting: the state at this moment, cut whole.
        const task = stepped.snapshotTask();
        const hashTask = stepped.hashKv(0);
        const atStart = whole.snapshot();
        const hashAtStart = whole.hashKv(0).run();
        let result: SnapshotStepResult = 'more';
        let compactedWhileTaking = false;
        let compactedSinceStart = false;
        for (const [op, budget] of during) {
          if (stepped.compactionPending) sawPending++;
          expect(observe(stepped)).toBe(observe(whole));
          for (const key of KEYS) {
            // A key whose every record is below the compaction is gone before its chain is cut.
            if (stepped.compactionPending && whole.hasHistory(b(key)) !== stepped.hasHistory(b(key))) throw new Error('hasHistory differs');
          }
          if (result === 'more') result = task.step(snapshotBudget);
          const compactRevision = stepped.compactRevision;
          apply(stepped, op);
          apply(whole, op);
          cutWhole(whole);
          if (stepped.compactRevision !== compactRevision) {
            compactedSinceStart = true;
            if (result === 'more') compactedWhileTaking = true;
          }
          stepped.compactionStep(budget);
        }
        while (result === 'more') result = task.step(snapshotBudget);
        expect(result).toBe(compactedWhileTaking ? 'stale' : 'done');
        if (result === 'done') expect(equalBytes(joinChunks(task.chunks), atStart)).toBe(true);
        if (!compactedSinceStart) {
          while (!hashTask.step(1));
          expect(hashTask.result).toEqual(hashAtStart);
        }
        if (stepped.compactionPending) sawKeyLeft++;
        expect(observe(stepped)).toBe(observe(whole));
        expect(stepped.hash()).toBe(whole.hash());
        expect(stepped.compactionPending).toBe(false);
        expect(stepped.retainedBytes).toBe(whole.retainedBytes);
        expect(stepped.digest()).toBe(whole.digest());
        expect(equalBytes(stepped.snapshot(), whole.snapshot())).toBe(true);
      }),
      { numRuns: 400 },
    );
    // The property ran with compactions left to cut, not only with none.
    expect(sawPending).toBeGreaterThan(100);
    expect(sawKeyLeft).toBeGreaterThan(10);
  });

  it('a snapshot begun while a compaction is cutting leaves out the keys it takes out of the index meanwhile', () => {
    const stepped = newStore();
    const whole = newStore();
    for (const store of [stepped, whole]) {
      for (const key of ['a', 'b', 'c', 'd']) store.put({ key: b(key), value: b('v') });
      store.deleteRange({ key: b('b') });
      store.deleteRange({ key: b('d') });
      store.put({ key: b('e'), value: b('v') });
      store.compact(store.currentRevision);
    }
    cutWhole(whole);
    expect(stepped.compactionPending).toBe(true);
    expect(stepped.hasHistory(b('b'))).toBe(false);
    expect(stepped.hasHistory(b('a'))).toBe(true);
    const task = stepped.snapshotTask();
    // Two keys of five cut per step: the first steps cut, the head (four keys: b and d go) comes after.
    expect(task.step(1)).toBe('more');
    stepped.put({ key: b('f'), value: b('after the start') });
    whole.put({ key: b('f'), value: b('after the start') });
    let result: SnapshotStepResult = 'more';
    while (result === 'more') result = task.step(1);
    expect(result).toBe('done');
    expect(stepped.compactionPending).toBe(false);
    expect(stepped.hasHistory(b('b'))).toBe(false);
    const restored = KVStore.restore(joinChunks(task.chunks), testOptions());
    expect(restored.range({ key: FROM_KEY, rangeEnd: FROM_KEY }).kvs.map((kv) => new TextDecoder().decode(kv.key))).toEqual(['a', 'c', 'e']);
    expect(equalBytes(stepped.snapshot(), whole.snapshot())).toBe(true);
  });
});
