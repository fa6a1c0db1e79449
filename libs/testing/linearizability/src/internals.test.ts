// White-box tests of the search's data structures.
import { describe, expect, it } from 'vitest';
import { EntryList, NONE } from './entry-list';
import { combineHashes, hashScalar, hashString, mix32 } from './hashing';
import { LinearizedSet } from './linearized-set';
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

describe('LinearizedSet', () => {
  const key = (set: LinearizedSet): number[] => {
    const target = new Uint32Array(set.keyLength);
    set.copyKey(target, 0);
    return [set.low, ...target];
  };

  it('keeps a canonical form: full words before low, a window, then the unknown region', () => {
    // 70 completed operations (3 words, the last one partial), 5 unknown ones (1 word).
    const set = new LinearizedSet(70, 5);
    expect([set.low, set.high, set.keyLength]).toEqual([0, -1, 1]);
    for (let op = 0; op < 40; op++) set.toggle(op);
    expect([set.low, set.high]).toEqual([1, 1]);
    expect(key(set)).toEqual([1, 0xff, 0]);
    set.toggle(72); // unknown operation 2
    expect(key(set)).toEqual([1, 0xff, 0b100]);
    for (let op = 40; op < 70; op++) set.toggle(op);
    expect([set.low, set.high, set.keyLength]).toEqual([3, 2, 1]); // every completed one: empty window
    set.toggle(5);
    expect([set.low, set.high]).toEqual([0, 2]);
    expect(set.keyLength).toBe(4);
  });

  it('reaches the same key and hash whatever order the members were added and removed in', () => {
    const a = new LinearizedSet(100, 10);
    const b = new LinearizedSet(100, 10);
    const members = [3, 64, 99, 0, 101, 31, 32, 105];
    members.forEach((op) => a.toggle(op));
    [...members].reverse().forEach((op) => b.toggle(op));
    [7, 50, 103].forEach((op) => {
      b.toggle(op);
      b.toggle(op);
    });
    expect(key(a)).toEqual(key(b));
    expect(a.hash).toBe(b.hash);
    b.toggle(50);
    expect(key(a)).not.toEqual(key(b));
    expect(a.hash).not.toBe(b.hash);
  });
});

describe('MemoSet', () => {
  const setOf = (members: number[]): LinearizedSet => {
    const set = new LinearizedSet(64, 32);
    members.forEach((op) => set.toggle(op));
    return set;
  };

  it('stores each (set, state) pair once, even when every hash collides', () => {
    const memo = new MemoSet<string>((a, b) => a === b);
    expect(memo.add(7, setOf([0]), 'x')).toBe(true);
    expect(memo.add(7, setOf([0]), 'x')).toBe(false);
    expect(memo.add(7, setOf([0]), 'y')).toBe(true);
    expect(memo.add(7, setOf([0, 40]), 'x')).toBe(true);
    expect(memo.add(7, setOf([0, 70]), 'x')).toBe(true); // differs in the unknown region only
    expect(memo.add(7, setOf([1]), 'x')).toBe(true); // same window length, other low/bits
    expect(memo.add(7, setOf([0, 70]), 'x')).toBe(false);
    expect(memo.size).toBe(5);
  });

  it('keeps every pair through many resizes, storing short keys', () => {
    const memo = new MemoSet<number>((a, b) => a === b);
    const set = new LinearizedSet(20_000, 0);
    let added = 0;
    for (let op = 0; op < 20_000; op++) {
      set.toggle(op);
      if (memo.add(set.hash, set, op % 3)) added++;
    }
    expect(added).toBe(20_000);
    expect(memo.wordCount).toBeLessThanOrEqual(20_000); // at most one window word per entry
    for (let op = 19_999; op >= 0; op -= 499) {
      const probe = new LinearizedSet(20_000, 0);
      for (let member = 0; member <= op; member++) probe.toggle(member);
      expect(memo.add(probe.hash, probe, op % 3)).toBe(false);
    }
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
