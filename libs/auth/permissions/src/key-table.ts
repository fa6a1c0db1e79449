import { assert } from '@ward/shared/errors';

// A counted hash set of byte strings, laid out for few cache misses: open addressing with linear
// probing over one Int32Array of slots [hash, arena offset, length, count], the key bytes packed in
// one arena. A hit reads one slot line and one arena line. The caller computes the hash
// incrementally while walking a key, so every prefix of a key can be looked up in one pass.
// FNV-1a (32 bit): deterministic, unseeded. Entries are written only by permission grants
// (administrators); a query only reads, so a user cannot lengthen probe sequences.

export const FNV_OFFSET = 0x811c9dc5;

/** One FNV-1a step. */
export function fnvStep(hash: number, byte: number): number {
  return Math.imul(hash ^ byte, 0x01000193) >>> 0;
}

export function fnvHash(bytes: Uint8Array, length: number = bytes.length): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < length; i++) hash = fnvStep(hash, bytes[i]!);
  return hash;
}

const STRIDE = 4;
const HASH = 0;
const OFFSET = 1;
const LENGTH = 2;
const COUNT = 3; // 0 marks an empty slot
const INITIAL_SLOTS = 8;

export class KeyTable {
  private slots = new Int32Array(INITIAL_SLOTS * STRIDE);
  private arena = new Uint8Array(64);
  private arenaUsedBytes = 0;
  private liveBytes = 0;
  private entries = 0;

  /** Distinct keys held. */
  get size(): number {
    return this.entries;
  }

  private get capacity(): number {
    return this.slots.length / STRIDE;
  }

  /** Adds one copy of `key`. */
  add(key: Uint8Array): void {
    const hash = fnvHash(key);
    const slot = this.find(key, key.length, hash);
    if (slot >= 0) {
      this.slots[slot * STRIDE + COUNT]!++;
      return;
    }
    if ((this.entries + 1) * 2 > this.capacity) this.rebuild(this.capacity * 2);
    const offset = this.store(key);
    const mask = this.capacity - 1;
    let at = (hash >>> 0) & mask;
    while (this.slots[at * STRIDE + COUNT] !== 0) at = (at + 1) & mask;
    this.writeSlot(at, hash, offset, key.length, 1);
    this.entries++;
    this.liveBytes += key.length;
  }

  /** Removes one copy of `key`, which must be present. */
  remove(key: Uint8Array): void {
    const slot = this.find(key, key.length, fnvHash(key));
    assert(slot >= 0, 'key-table: removing a key that is not held');
    if (--this.slots[slot * STRIDE + COUNT]! > 0) return;
    this.entries--;
    this.liveBytes -= key.length;
    this.vacate(slot);
    // Reclaim the arena once most of it is dead bytes.
    if (this.arenaUsedBytes > 64 && this.liveBytes * 2 < this.arenaUsedBytes) this.rebuild(this.capacity);
  }

  /** The slot holding the first `length` bytes of `key` (whose FNV hash is `hash`), or -1. */
  find(key: Uint8Array, length: number, hash: number): number {
    const slots = this.slots;
    const mask = this.capacity - 1;
    for (let at = (hash >>> 0) & mask; ; at = (at + 1) & mask) {
      const base = at * STRIDE;
      if (slots[base + COUNT] === 0) return -1;
      if (slots[base + HASH] === (hash | 0) && slots[base + LENGTH] === length && this.sameBytes(slots[base + OFFSET]!, key, length)) {
        return at;
      }
    }
  }

  private sameBytes(offset: number, key: Uint8Array, length: number): boolean {
    const arena = this.arena;
    for (let i = 0; i < length; i++) if (arena[offset + i] !== key[i]) return false;
    return true;
  }

  private store(key: Uint8Array): number {
    if (this.arenaUsedBytes + key.length > this.arena.length) {
      let size = this.arena.length * 2;
      while (size < this.arenaUsedBytes + key.length) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.arena.subarray(0, this.arenaUsedBytes));
      this.arena = grown;
    }
    const offset = this.arenaUsedBytes;
    this.arena.set(key, offset);
    this.arenaUsedBytes += key.length;
    return offset;
  }

  private writeSlot(at: number, hash: number, offset: number, length: number, count: number): void {
    const base = at * STRIDE;
    this.slots[base + HASH] = hash | 0;
    this.slots[base + OFFSET] = offset;
    this.slots[base + LENGTH] = length;
    this.slots[base + COUNT] = count;
  }

  /** Backward-shift deletion: no tombstones, probe sequences stay short. */
  private vacate(slot: number): void {
    const mask = this.capacity - 1;
    const slots = this.slots;
    let hole = slot;
    this.writeSlot(hole, 0, 0, 0, 0);
    for (let at = (hole + 1) & mask; slots[at * STRIDE + COUNT] !== 0; at = (at + 1) & mask) {
      const base = at * STRIDE;
      const home = (slots[base + HASH]! >>> 0) & mask;
      // The entry may move back into the hole unless its home lies cyclically in (hole, at].
      const stays = hole <= at ? home > hole && home <= at : home > hole || home <= at;
      if (stays) continue;
      this.writeSlot(hole, slots[base + HASH]!, slots[base + OFFSET]!, slots[base + LENGTH]!, slots[base + COUNT]!);
      this.writeSlot(at, 0, 0, 0, 0);
      hole = at;
    }
  }

  /** Re-inserts every entry into `capacity` slots and a compacted arena. */
  private rebuild(capacity: number): void {
    const { slots, arena } = this;
    this.slots = new Int32Array(capacity * STRIDE);
    this.arena = new Uint8Array(Math.max(64, this.liveBytes * 2));
    this.arenaUsedBytes = 0;
    const mask = capacity - 1;
    for (let i = 0; i < slots.length / STRIDE; i++) {
      const base = i * STRIDE;
      if (slots[base + COUNT] === 0) continue;
      const length = slots[base + LENGTH]!;
      const offset = this.store(arena.subarray(slots[base + OFFSET]!, slots[base + OFFSET]! + length));
      let at = (slots[base + HASH]! >>> 0) & mask;
      while (this.slots[at * STRIDE + COUNT] !== 0) at = (at + 1) & mask;
      this.writeSlot(at, slots[base + HASH]!, offset, length, slots[base + COUNT]!);
    }
  }
}
