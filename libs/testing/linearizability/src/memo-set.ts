import { assert } from '@ward/shared/errors';

const INITIAL_CAPACITY = 1 << 10;

/**
 * The set of (linearized operations, model state) pairs the search has already explored
 * (Lowe's memoization). Open addressing on a 32-bit hash; the bitsets live in one growing
 * Uint32Array pool, the states in a parallel array. A hash match is confirmed by comparing the
 * bitset word by word and the states with the model's equality.
 */
export class MemoSet<S> {
  private readonly wordsPerSet: number;
  private readonly equal: (a: S, b: S) => boolean;
  private slotEntry: Int32Array = new Int32Array(INITIAL_CAPACITY); // entry index + 1, 0 = empty
  private slotHash: Int32Array = new Int32Array(INITIAL_CAPACITY);
  private bits: Uint32Array;
  private readonly states: S[] = [];

  constructor(wordsPerSet: number, equal: (a: S, b: S) => boolean) {
    assert(Number.isInteger(wordsPerSet) && wordsPerSet >= 1, 'MemoSet: wordsPerSet must be a positive integer');
    this.wordsPerSet = wordsPerSet;
    this.equal = equal;
    this.bits = new Uint32Array(wordsPerSet * 64);
  }

  /** Number of pairs stored. */
  get size(): number {
    return this.states.length;
  }

  /** Stores the pair unless an equal one is present; true when it was added. */
  add(hash: number, linearized: Uint32Array, state: S): boolean {
    const mask = this.slotEntry.length - 1;
    let slot = hash & mask;
    for (;;) {
      const entry = this.slotEntry[slot] as number;
      if (entry === 0) break;
      if (this.slotHash[slot] === hash && this.matches(entry - 1, linearized, state)) return false;
      slot = (slot + 1) & mask;
    }
    const index = this.states.length;
    this.storeBits(index, linearized);
    this.states.push(state);
    this.slotEntry[slot] = index + 1;
    this.slotHash[slot] = hash;
    if (this.states.length * 2 > this.slotEntry.length) this.grow();
    return true;
  }

  private matches(index: number, linearized: Uint32Array, state: S): boolean {
    const base = index * this.wordsPerSet;
    for (let word = 0; word < this.wordsPerSet; word++) {
      if (this.bits[base + word] !== linearized[word]) return false;
    }
    return this.equal(this.states[index] as S, state);
  }

  private storeBits(index: number, linearized: Uint32Array): void {
    const base = index * this.wordsPerSet;
    if (base + this.wordsPerSet > this.bits.length) {
      const larger = new Uint32Array(this.bits.length * 2);
      larger.set(this.bits);
      this.bits = larger;
    }
    this.bits.set(linearized, base);
  }

  private grow(): void {
    const oldEntries = this.slotEntry;
    const oldHashes = this.slotHash;
    const capacity = oldEntries.length * 2;
    const mask = capacity - 1;
    this.slotEntry = new Int32Array(capacity);
    this.slotHash = new Int32Array(capacity);
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
