import type { LinearizedSet } from './linearized-set';

const INITIAL_SLOTS = 1 << 10;
const INITIAL_ENTRIES = 1 << 8;

function grown<T extends Int32Array | Uint32Array>(array: T, minimum: number): T {
  if (array.length >= minimum) return array;
  const larger = new (array.constructor as { new (length: number): T })(Math.max(minimum, array.length * 2));
  larger.set(array);
  return larger;
}

/**
 * The (linearized set, model state) pairs the search has already explored (Lowe's memoization).
 * Open addressing on a 32-bit hash; each set is stored in its short canonical form
 * ({@link LinearizedSet}) in one growing word pool, states in a parallel array. A hash match is
 * confirmed word by word and with the model's state equality, so collisions never prune.
 */
export class MemoSet<S> {
  private readonly equal: (a: S, b: S) => boolean;
  private slotEntry = new Int32Array(INITIAL_SLOTS); // entry index + 1, 0 = empty
  private slotHash = new Int32Array(INITIAL_SLOTS);
  private entryLow = new Int32Array(INITIAL_ENTRIES);
  /** Entry i's words are pool[entryStart[i], entryStart[i + 1]). */
  private entryStart = new Int32Array(INITIAL_ENTRIES + 1);
  private pool = new Uint32Array(INITIAL_ENTRIES * 4);
  private readonly states: S[] = [];

  constructor(equal: (a: S, b: S) => boolean) {
    this.equal = equal;
  }

  /** Number of pairs stored. */
  get size(): number {
    return this.states.length;
  }

  /** Words used by the stored sets (for memory accounting). */
  get wordCount(): number {
    return this.entryStart[this.states.length] as number;
  }

  /** Stores the pair unless an equal one is present; true when it was added. */
  add(hash: number, set: LinearizedSet, state: S): boolean {
    const mask = this.slotEntry.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slotEntry[slot] as number;
      if (entry === 0) break;
      if (this.slotHash[slot] === hash && this.matches(entry - 1, set, state)) return false;
      slot = (slot + 1) & mask;
    }
    const index = this.states.length;
    this.store(index, set);
    this.states.push(state);
    this.slotEntry[slot] = index + 1;
    this.slotHash[slot] = hash;
    if (this.states.length * 2 > this.slotEntry.length) this.rehash();
    return true;
  }

  private matches(index: number, set: LinearizedSet, state: S): boolean {
    if (this.entryLow[index] !== set.low) return false;
    const start = this.entryStart[index] as number;
    const length = (this.entryStart[index + 1] as number) - start;
    return set.keyEquals(this.pool, start, length) && this.equal(this.states[index] as S, state);
  }

  private store(index: number, set: LinearizedSet): void {
    this.entryLow = grown(this.entryLow, index + 1);
    this.entryStart = grown(this.entryStart, index + 2);
    const start = this.entryStart[index] as number;
    const end = start + set.keyLength;
    this.pool = grown(this.pool, end);
    set.copyKey(this.pool, start);
    this.entryLow[index] = set.low;
    this.entryStart[index + 1] = end;
  }

  private rehash(): void {
    const oldEntries = this.slotEntry;
    const oldHashes = this.slotHash;
    const mask = oldEntries.length * 2 - 1;
    this.slotEntry = new Int32Array(oldEntries.length * 2);
    this.slotHash = new Int32Array(oldEntries.length * 2);
    for (let old = 0; old < oldEntries.length; old++) {
      const entry = oldEntries[old] as number;
      if (entry === 0) continue;
      const hash = oldHashes[old] as number;
      let slot = hash & mask;
      while (this.slotEntry[slot] !== 0) slot = (slot + 1) & mask;
      this.slotEntry[slot] = entry;
      this.slotHash[slot] = hash;
    }
  }
}
