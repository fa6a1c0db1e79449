import { SeededRng } from '@ward/shared/clock';
import { describe, expect, it } from 'vitest';
import { CompactedError, UnavailableError } from './errors';
import { limitSize } from './limit-size';
import { MemoryStorage, PACK_MIN_BYTES, PACK_RUN_MAX_BYTES, PACK_RUNS_PER_CALL, PACK_SLAB_BYTES } from './memory-storage';
import type { Entry, Index, Term } from './types';
import { EntryType, votersConfState } from './types';

/** Every byte value, in a pseudo-random order: entries' data are views into it. */
function bytePool(rng: SeededRng, length: number): Uint8Array {
  const pool = new Uint8Array(length);
  for (let i = 0; i < length; i++) pool[i] = rng.nextInt(256);
  return pool;
}

function sized(index: Index, term: Term, pool: Uint8Array, at: number, length: number): Entry {
  return { term, index, type: index % 7 === 0 ? EntryType.ConfChangeV2 : EntryType.Normal, data: pool.subarray(at, at + length) };
}

/** The log as a plain array: the behaviour the packed MemoryStorage must keep. */
class ModelLog {
  offset = 0;
  offsetTerm = 0;
  snapIndex = 0;
  ents: Entry[] = [];

  get last(): Index {
    return this.offset + this.ents.length;
  }

  term(index: Index): Term {
    return index === this.offset ? this.offsetTerm : this.ents[index - this.offset - 1]!.term;
  }

  append(entries: readonly Entry[]): void {
    const kept = entries.filter((e) => e.index > this.offset);
    if (kept.length === 0) return;
    this.ents.length = kept[0]!.index - this.offset - 1;
    this.ents.push(...kept);
  }

  compact(index: Index): void {
    this.offsetTerm = this.term(index);
    this.ents = this.ents.slice(index - this.offset);
    this.offset = index;
  }
}

function expectSame(actual: readonly Entry[], expected: readonly Entry[]): void {
  expect(actual.map((e) => [e.index, e.term, e.type])).toEqual(expected.map((e) => [e.index, e.term, e.type]));
  for (let i = 0; i < expected.length; i++) {
    if (!Buffer.from(actual[i]!.data).equals(Buffer.from(expected[i]!.data))) throw new Error(`entry ${expected[i]!.index}: data differs`);
  }
}

describe('MemoryStorage packing of applied entries', () => {
  it('packs applied entries once PACK_MIN_BYTES wait, into slabs reused after compaction, and returns them as copies', () => {
    const rng = new SeededRng(7);
    const pool = bytePool(rng, 200 * 1024);
    const size = 100 * 1024;
    const s = new MemoryStorage(votersConfState([1n]));
    const at = (i: number): number => (i * 4096) % (pool.length - size);
    const appended = Array.from({ length: 28 }, (_, i) => sized(i + 1, 1, pool, at(i), size));
    s.append(appended.slice(0, 25));
    s.pack(25);
    expect(s.lastPacked).toBe(25);
    expect(s.packedSlabBytes).toBe(PACK_SLAB_BYTES); // 2.5 MB in one slab
    s.append(appended.slice(25, 27));
    s.pack(27);
    expect(s.lastPacked).toBe(25); // 2 × 100 KiB wait: less than PACK_MIN_BYTES
    expect(2 * size).toBeLessThan(PACK_MIN_BYTES);
    s.append(appended.slice(27));
    s.pack(27); // only what is applied is packed
    expect(s.lastPacked).toBe(25);
    s.pack(28);
    expect(s.lastPacked).toBe(28);

    expect(s.dataLength(3)).toBe(size);
    const all = s.entries(1, 29, Number.MAX_SAFE_INTEGER);
    expectSame(all, appended);
    expect(all.every((e, i) => e !== appended[i] && e.data.buffer !== pool.buffer)).toBe(true); // copies
    expect(s.entries(5, 29, 2 * size + 50).map((e) => e.index)).toEqual([5, 6]);
    expect(() => s.dataLength(29)).toThrow(UnavailableError);
    // A run holds at most PACK_RUN_MAX_BYTES: compaction to a run's last entry keeps the next
    // run whole; compaction into a run keeps it.
    const perRun = Math.floor(PACK_RUN_MAX_BYTES / size);
    s.compact(perRun - 1);
    expectSame(s.entries(perRun, perRun + 2, Number.MAX_SAFE_INTEGER), appended.slice(perRun - 1, perRun + 1));
    s.compact(perRun);
    expectSame(s.entries(perRun + 1, 29, Number.MAX_SAFE_INTEGER), appended.slice(perRun));
    expect(() => s.dataLength(perRun)).toThrow(CompactedError);
    // A slab stays while an entry it holds is kept, and is filled on.
    s.compact(27);
    const more = Array.from({ length: 30 }, (_, i) => sized(29 + i, 2, pool, at(i), size));
    s.append(more);
    s.pack(58);
    expect(s.lastPacked).toBe(58);
    expectSame(s.entries(28, 59, Number.MAX_SAFE_INTEGER), [appended[27]!, ...more]);
    const held = s.packedSlabBytes;
    expect(held).toBe(2 * PACK_SLAB_BYTES);
    // Everything packed compacted away: the slabs are kept and filled again.
    s.compact(58);
    const again = Array.from({ length: 30 }, (_, i) => sized(59 + i, 3, pool, at(i + 1), size));
    s.append(again);
    s.pack(88);
    expect(s.lastPacked).toBe(88);
    expect(s.packedSlabBytes).toBe(held);
    expectSame(s.entries(59, 89, Number.MAX_SAFE_INTEGER), again);
  });

  it('packs an entry larger than a slab into a buffer of its own', () => {
    const rng = new SeededRng(11);
    const pool = bytePool(rng, PACK_SLAB_BYTES + 200);
    const s = new MemoryStorage(votersConfState([1n]));
    const appended = [sized(1, 1, pool, 0, 1000), sized(2, 1, pool, 7, PACK_SLAB_BYTES + 100), sized(3, 1, pool, 9, PACK_MIN_BYTES)];
    s.append(appended);
    s.pack(3);
    expect(s.lastPacked).toBe(3);
    expectSame(s.entries(1, 4, Number.MAX_SAFE_INTEGER), appended);
    s.compact(2);
    expectSame(s.entries(3, 4, Number.MAX_SAFE_INTEGER), appended.slice(2));
  });

  it('packs at most PACK_RUNS_PER_CALL runs a call, the rest at the next', () => {
    const s = new MemoryStorage(votersConfState([1n]));
    const data = new Uint8Array(PACK_RUN_MAX_BYTES).fill(0x80);
    const count = PACK_RUNS_PER_CALL + 2;
    s.append(Array.from({ length: count }, (_, i) => ({ term: 1, index: i + 1, type: EntryType.Normal, data })));
    s.pack(count);
    expect(s.lastPacked).toBe(PACK_RUNS_PER_CALL);
    s.pack(count);
    expect(s.lastPacked).toBe(count);
    expect(Buffer.from(s.entries(count, count + 1, 0)[0]!.data).equals(Buffer.from(data))).toBe(true);
  });

  it('keeps the entries appended unpacked, and returns them as appended, until they are packed', () => {
    const s = new MemoryStorage(votersConfState([1n]));
    const data = new Uint8Array(PACK_MIN_BYTES - 1).fill(0xfe);
    const appended = [{ term: 1, index: 1, type: EntryType.Normal, data }];
    s.append(appended);
    s.pack(1);
    expect(s.entries(1, 2, Number.MAX_SAFE_INTEGER)[0]).toBe(appended[0]);
  });

  it('answers as a plain log through appends, conflicts, compactions, snapshots and packing (model test)', () => {
    const rng = new SeededRng(20261207);
    const pool = bytePool(rng, PACK_SLAB_BYTES + 10_000);
    const s = new MemoryStorage(votersConfState([1n]));
    let packedChecks = 0;
    const model = new ModelLog();
    let term = 1;
    const dataSize = (): number => {
      const roll = rng.nextInt(100);
      if (roll < 1) return PACK_SLAB_BYTES + rng.nextInt(10_000); // a buffer of its own
      if (roll < 3) return PACK_RUN_MAX_BYTES - 1000 + rng.nextInt(250_000); // a run of its own
      if (roll < 10) return 0;
      return rng.nextInt(120 * 1024);
    };
    for (let step = 0; step < 2000; step++) {
      const op = rng.nextInt(100);
      if (op < 50) {
        const start = Math.max(1, model.offset - 1) + rng.nextInt(model.last - Math.max(1, model.offset - 1) + 2);
        if (rng.nextInt(4) === 0) term++;
        const entries = Array.from({ length: 1 + rng.nextInt(6) }, (_, i) => {
          const length = dataSize();
          return sized(start + i, term, pool, rng.nextInt(pool.length - length + 1), length);
        });
        s.append(entries);
        model.append(entries);
      } else if (op < 80) {
        s.pack(model.offset + rng.nextInt(model.last - model.offset + 3));
      } else if (op < 88) {
        if (model.last === model.offset) continue;
        const index = model.offset + 1 + rng.nextInt(model.last - model.offset);
        if (index > model.snapIndex && rng.nextInt(2) === 0) {
          expect(s.createSnapshot(index, undefined, new Uint8Array(0)).metadata.term).toBe(model.term(index));
          model.snapIndex = index;
        }
        s.compact(index);
        model.compact(index);
      } else if (op < 95) {
        const index = Math.max(model.last, model.snapIndex) + 1 + rng.nextInt(3);
        term++;
        s.applySnapshot({ data: new Uint8Array(0), metadata: { confState: votersConfState([1n]), index, term } });
        Object.assign(model, { offset: index, offsetTerm: term, snapIndex: index, ents: [] });
      } else {
        continue;
      }

      expect([s.firstIndex(), s.lastIndex()]).toEqual([model.offset + 1, model.last]);
      for (let i = model.offset; i <= model.last; i++) expect(s.term(i)).toBe(model.term(i));
      for (let i = model.offset + 1; i <= model.last; i++) expect(s.dataLength(i)).toBe(model.ents[i - model.offset - 1]!.data.length);
      if (model.last === model.offset) continue;
      expectSame(s.entries(model.offset + 1, model.last + 1, Number.MAX_SAFE_INTEGER), model.ents);
      if (s.lastPacked > model.offset) packedChecks++;
      const lo = model.offset + 1 + rng.nextInt(model.last - model.offset);
      const hi = lo + 1 + rng.nextInt(model.last - lo + 1);
      const maxBytes = rng.nextInt(400 * 1024);
      expectSame(s.entries(lo, hi, maxBytes), limitSize(model.ents.slice(lo - model.offset - 1, hi - model.offset - 1), maxBytes));
    }
    // Most checks read packed entries back (the test exercised what it checks).
    expect(packedChecks).toBeGreaterThan(200);
  });
});
