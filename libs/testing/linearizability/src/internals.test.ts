// White-box tests of the search's data structures.
import { describe, expect, it } from 'vitest';
import { EntryList, NONE } from './entry-list';
import { combineHashes, hashScalar, hashString, mix32 } from './hashing';
import { MemoSet } from './memo-set';

function walk(list: EntryList): string[] {
  const seen: string[] = [];
  for (let entry = list.next[list.head] as number; entry !== NONE; entry = list.next[entry] as number) {
    seen.push(`${list.isReturn[entry] ? 'r' : 'c'}${list.operationOf[entry]}`);
  }
  return seen;
}

describe('EntryList', () => {
  it('orders by time, calls before returns at equal times, unknown outcomes without a return', () => {
    // op0 [0, 5], op1 [5, 6], op2 [1, +inf), op3 [5, 5]
    const list = new EntryList([0, 5, 1, 5], [5, 6, Infinity, 5]);
    expect(walk(list)).toEqual(['c0', 'c2', 'c1', 'c3', 'r0', 'r3', 'r1']);
    expect(list.returnOf[2]).toBe(NONE);
  });

  it('restores the exact list after nested lifts undone in LIFO order', () => {
    const list = new EntryList([0, 1, 2, 3], [4, 2, 5, Infinity]);
    const before = walk(list);
    const calls = [1, 0, 3].map((op) => list.callOf[op] as number);
    calls.forEach((call) => list.lift(call));
    expect(walk(list)).toEqual(['c2', 'r2']);
    [...calls].reverse().forEach((call) => list.unlift(call));
    expect(walk(list)).toEqual(before);
    for (let entry = 0; entry < 7; entry++) {
      const next = list.next[entry] as number;
      if (next !== NONE) expect(list.prev[next]).toBe(entry);
    }
  });
});

describe('MemoSet', () => {
  it('stores each (bitset, state) pair once, even when every hash collides', () => {
    const memo = new MemoSet<string>(2, (a, b) => a === b);
    const bits = (a: number, b: number) => new Uint32Array([a, b]);
    expect(memo.add(7, bits(1, 0), 'x')).toBe(true);
    expect(memo.add(7, bits(1, 0), 'x')).toBe(false);
    expect(memo.add(7, bits(1, 0), 'y')).toBe(true);
    expect(memo.add(7, bits(1, 1), 'x')).toBe(true);
    expect(memo.add(8, bits(1, 0), 'x')).toBe(true); // different hash: not compared (caller's contract)
    expect(memo.size).toBe(4);
  });

  it('keeps every pair through many resizes', () => {
    const memo = new MemoSet<number>(1, (a, b) => a === b);
    let added = 0;
    let found = 0;
    for (let i = 0; i < 50_000; i++) if (memo.add(mix32(i >> 1), new Uint32Array([i]), i % 3)) added++;
    for (let i = 0; i < 50_000; i += 97) if (!memo.add(mix32(i >> 1), new Uint32Array([i]), i % 3)) found++;
    expect([added, found]).toEqual([50_000, Math.ceil(50_000 / 97)]);
    expect(memo.size).toBe(50_000);
  });
});

describe('hashing', () => {
  it('is deterministic 32-bit integer hashing that separates nearby inputs', () => {
    expect(hashString('abc')).toBe(hashString('abc'));
    expect(hashString('abc')).not.toBe(hashString('abd'));
    expect(hashScalar(1)).not.toBe(hashScalar('1'));
    expect(hashScalar(null)).not.toBe(hashScalar(0));
    expect(hashScalar(1.5)).toBe(hashScalar(1.5));
    expect(combineHashes(1, 2)).not.toBe(combineHashes(2, 1));
    for (const value of [hashString('x'), hashScalar(3), combineHashes(4, 5), mix32(6)]) {
      expect(Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31).toBe(true);
    }
  });
});
