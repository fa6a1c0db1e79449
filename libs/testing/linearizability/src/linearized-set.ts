import { assert } from '@ward/shared/errors';
import { mix32 } from './hashing';

const FULL_WORD = 0xffffffff;

/**
 * The set of operations linearized so far on the current search path, as a bitset laid out so
 * that it has a short canonical form for the memo.
 *
 * Operations are numbered completed first (in call order), then unknown-outcome ones. Completed
 * operations occupy words [0, completedWords); unknown ones start at a word boundary after them.
 * The search linearizes completed operations roughly in call order, so the completed region is
 * "all ones up to `low`, a short mixed window, zeros after `high`": the memo stores only `low`,
 * the window and the unknown region, whatever the history's length.
 *
 * The hash is the XOR of a fixed 32-bit value per member (Zobrist hashing), updated in O(1).
 */
export class LinearizedSet {
  readonly words: Uint32Array;
  readonly completedWords: number;
  readonly unknownWords: number;
  /** First word of the completed region that is not full (all words before it are). */
  low = 0;
  /** Last nonzero word of the completed region, or low - 1 when the window is empty. */
  high = -1;
  hash = 0;
  private readonly bitOf: Int32Array;
  private readonly memberHash: Int32Array;
  private readonly fullMasks: Uint32Array;

  /** Operations 0..completedCount-1 are completed ones; the next unknownCount are unknown. */
  constructor(completedCount: number, unknownCount: number) {
    assert(completedCount >= 0 && unknownCount >= 0, 'LinearizedSet: negative counts');
    this.completedWords = Math.ceil(completedCount / 32);
    this.unknownWords = Math.ceil(unknownCount / 32);
    this.words = new Uint32Array(this.completedWords + this.unknownWords);
    const count = completedCount + unknownCount;
    this.bitOf = new Int32Array(count);
    this.memberHash = new Int32Array(count);
    for (let operation = 0; operation < count; operation++) {
      this.bitOf[operation] = operation < completedCount ? operation : this.completedWords * 32 + (operation - completedCount);
      this.memberHash[operation] = mix32(Math.imul(operation + 1, 0x9e3779b1));
    }
    this.fullMasks = new Uint32Array(this.completedWords).fill(FULL_WORD);
    if (completedCount % 32 !== 0) this.fullMasks[this.completedWords - 1] = (1 << completedCount % 32) - 1;
  }

  /** Number of words of the canonical form. */
  get keyLength(): number {
    return this.high - this.low + 1 + this.unknownWords;
  }

  /** Adds or removes an operation (the caller knows which). */
  toggle(operation: number): void {
    const bit = this.bitOf[operation] as number;
    const word = bit >>> 5;
    const value = ((this.words[word] as number) ^ (1 << (bit & 31))) >>> 0;
    this.words[word] = value;
    this.hash ^= this.memberHash[operation] as number;
    if (word >= this.completedWords) return;
    const added = (value & (1 << (bit & 31))) !== 0;
    if (added) {
      if (word > this.high) this.high = word;
      while (this.low < this.completedWords && this.words[this.low] === this.fullMasks[this.low]) this.low++;
    } else {
      if (word < this.low) this.low = word;
      while (this.high >= this.low && this.words[this.high] === 0) this.high--;
    }
    if (this.high < this.low - 1) this.high = this.low - 1;
  }

  /** Copies the canonical form (window words, then unknown words) into `target` at `offset`. */
  copyKey(target: Uint32Array, offset: number): void {
    let at = offset;
    for (let word = this.low; word <= this.high; word++) target[at++] = this.words[word] as number;
    for (let word = this.completedWords; word < this.words.length; word++) target[at++] = this.words[word] as number;
  }

  /** True when the canonical form equals `length` words of `source` from `offset` (low already matched). */
  keyEquals(source: Uint32Array, offset: number, length: number): boolean {
    if (length !== this.keyLength) return false;
    let at = offset;
    for (let word = this.low; word <= this.high; word++) if (source[at++] !== this.words[word]) return false;
    for (let word = this.completedWords; word < this.words.length; word++) if (source[at++] !== this.words[word]) return false;
    return true;
  }
}
