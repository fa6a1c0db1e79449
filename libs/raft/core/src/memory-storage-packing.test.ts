import { SeededRng } from '@ward/shared/clock';
import { describe, expect, it } from 'vitest';
import { CompactedError, UnavailableError } from './errors';
import { limitSize } from './limit-size';
import { MemoryStorage, PACK_MIN_BYTES, PACK_RUN_MAX_BYTES, PACK_RUNS_PER_CALL, type BytesAsText } from './memory-storage';
import type { Entry, Index, Term } from './types';
import { EntryType, votersConfState } from './types';

/** latin1 through Buffer (as the host's packer), counting what it is asked for. */
function countingPacker(): BytesAsText & { packed: number[]; unpacked: number } {
  const packer = {
    packed: [] as number[],
    unpacked: 0,
    pack(parts: readonly Uint8Array[], totalBytes: number): string {
      packer.packed.push(parts.length);
      return Buffer.concat(parts, totalBytes).toString('latin1');
    },
    unpack(text: string, start: number, end: number): Uint8Array {
      packer.unpacked++;
      return Buffer.from(text.substring(start, end), 'latin1');
    },
  };
  return packer;
}

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
  it('packs runs of at most PACK_RUN_MAX_BYTES once PACK_MIN_BYTES wait, and unpacks them only when read', () => {
    const rng = new SeededRng(7);
    const pool = bytePool(rng, 200 * 1024);
    const size = 100 * 1024;
    const packer = countingPacker();
    const s = new MemoryStorage(votersConfState([1n]), packer);
    const appended = Array.from({ length: 25 }, (_, i) => sized(i + 1, 1, pool, (i * 4096) % (pool.length - size), size));
    s.append(appended);
    s.pack(25);
    const perRun = Math.floor(PACK_RUN_MAX_BYTES / size);
    expect(packer.packed).toEqual([perRun, perRun, 25 - 2 * perRun]);
    s.append([sized(26, 1, pool, 0, size), sized(27, 1, pool, 1, size)]);
    s.pack(27);
    expect(packer.packed.length).toBe(3); // 2 × 100 KiB wait: less than PACK_MIN_BYTES
    expect(2 * size).toBeLessThan(PACK_MIN_BYTES);
    s.append([sized(28, 1, pool, 2, size)]);
    s.pack(27); // only applied entries are packed
    expect(packer.packed.length).toBe(3);
    s.pack(28);
    expect(packer.packed).toEqual([perRun, perRun, 25 - 2 * perRun, 3]);

    expect(s.dataLength(3)).toBe(size);
    expect(packer.unpacked).toBe(0);
    expectSame(s.entries(1, 29, Number.MAX_SAFE_INTEGER), [...appended, sized(26, 1, pool, 0, size), sized(27, 1, pool, 1, size), sized(28, 1, pool, 2, size)]);
    expect(packer.unpacked).toBe(28);
    // Size-limited: only what is returned is unpacked.
    expect(s.entries(5, 29, 2 * size + 50).map((e) => e.index)).toEqual([5, 6]);
    expect(packer.unpacked).toBe(30);
    expect(() => s.dataLength(29)).toThrow(UnavailableError);
    // Compaction to a run's last entry keeps that run; one past it drops it.
    s.compact(perRun - 1);
    expectSame(s.entries(perRun, perRun + 2, Number.MAX_SAFE_INTEGER), appended.slice(perRun - 1, perRun + 1));
    s.compact(perRun);
    expectSame(s.entries(perRun + 1, perRun + 2, Number.MAX_SAFE_INTEGER), [appended[perRun]!]);
    s.compact(20);
    expect(() => s.dataLength(20)).toThrow(CompactedError);
    expect(s.dataLength(21)).toBe(size);
  });

  it('packs at most PACK_RUNS_PER_CALL runs a call, the rest at the next', () => {
    const packer = countingPacker();
    const s = new MemoryStorage(votersConfState([1n]), packer);
    const data = new Uint8Array(PACK_RUN_MAX_BYTES).fill(0x80);
    const count = PACK_RUNS_PER_CALL + 2;
    s.append(Array.from({ length: count }, (_, i) => ({ term: 1, index: i + 1, type: EntryType.Normal, data })));
    s.pack(count);
    expect(packer.packed.length).toBe(PACK_RUNS_PER_CALL);
    s.pack(count);
    expect(packer.packed.length).toBe(count);
    expect(Buffer.from(s.entries(count, count + 1, 0)[0]!.data).equals(Buffer.from(data))).toBe(true);
  });

  it('keeps the entries appended unpacked, and returns them as appended, until they are packed', () => {
    const s = new MemoryStorage(votersConfState([1n]), countingPacker());
    const data = new Uint8Array(PACK_MIN_BYTES - 1).fill(0xfe);
    const appended = [{ term: 1, index: 1, type: EntryType.Normal, data }];
    s.append(appended);
    s.pack(1);
    expect(s.entries(1, 2, Number.MAX_SAFE_INTEGER)[0]).toBe(appended[0]);
  });

  it('answers as a plain log through appends, conflicts, compactions, snapshots and packing (model test)', () => {
    const rng = new SeededRng(20261207);
    const pool = bytePool(rng, 1_300_000);
    const packer = countingPacker();
    const s = new MemoryStorage(votersConfState([1n]), packer);
    const model = new ModelLog();
    let term = 1;
    const dataSize = (): number => {
      const roll = rng.nextInt(100);
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
      const lo = model.offset + 1 + rng.nextInt(model.last - model.offset);
      const hi = lo + 1 + rng.nextInt(model.last - lo + 1);
      const maxBytes = rng.nextInt(400 * 1024);
      expectSame(s.entries(lo, hi, maxBytes), limitSize(model.ents.slice(lo - model.offset - 1, hi - model.offset - 1), maxBytes));
    }
    // The run packed often and read packed entries back (the test exercised what it checks).
    expect(packer.packed.length).toBeGreaterThan(50);
    expect(packer.packed.some((parts) => parts > 1)).toBe(true);
    expect(packer.unpacked).toBeGreaterThan(500);
  });
});
