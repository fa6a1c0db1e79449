import type { Index } from './types';

/** A slab of the pool in use: its bytes and the highest log index whose data it holds. */
interface SlabInUse {
  readonly bytes: Uint8Array;
  last: Index;
  /** Made for one placement larger than a slab: dropped when released, never reused. */
  readonly dedicated: boolean;
}

/**
 * Byte slabs for the packed log's data, filled in log order and released in the same order when
 * the log is compacted past everything a slab holds. Released slabs are kept (at most
 * `maxFreeSlabs`) and filled again, so a log that grows and is compacted in turns allocates its
 * memory once instead of per entry: memory outside V8's heap that does not grow starts no full
 * collections.
 */
export class SlabPool {
  private readonly inUse: SlabInUse[] = [];
  private readonly free: Uint8Array[] = [];
  /** Bytes placed in the newest slab in use. */
  private used = 0;

  constructor(
    readonly slabBytes: number,
    readonly maxFreeSlabs: number,
  ) {}

  /** Bytes left in the newest slab in use (0 when there is none; a slab of its own is full). */
  room(): number {
    return this.inUse.length === 0 ? 0 : Math.max(0, this.slabBytes - this.used);
  }

  /**
   * Room for `length` bytes of the data of entries up to `last`: at the end of the newest slab
   * when it fits, else at the start of a reused or new slab (one of its own when `length` is more
   * than a slab).
   */
  place(length: number, last: Index): { bytes: Uint8Array; start: number } {
    const newest = this.inUse[this.inUse.length - 1];
    if (newest !== undefined && length <= this.slabBytes - this.used) {
      newest.last = Math.max(newest.last, last);
      const start = this.used;
      this.used += length;
      return { bytes: newest.bytes, start };
    }
    const dedicated = length > this.slabBytes;
    const bytes = dedicated ? new Uint8Array(length) : (this.free.pop() ?? new Uint8Array(this.slabBytes));
    this.inUse.push({ bytes, last, dedicated });
    this.used = length;
    return { bytes, start: 0 };
  }

  /** Takes back the slabs holding only entries at or below `index` (compacted away). */
  releaseThrough(index: Index): void {
    while (this.inUse.length > 0 && this.inUse[0]!.last <= index) this.release(this.inUse.shift()!);
    if (this.inUse.length === 0) this.used = 0;
  }

  /** Takes every slab back (the log was replaced by a snapshot). */
  releaseAll(): void {
    this.releaseThrough(Number.POSITIVE_INFINITY);
  }

  /** Bytes of the slabs in use and kept for reuse. */
  get heldBytes(): number {
    let bytes = this.free.length * this.slabBytes;
    for (const slab of this.inUse) bytes += slab.bytes.length;
    return bytes;
  }

  private release(slab: SlabInUse): void {
    if (!slab.dedicated && this.free.length < this.maxFreeSlabs) this.free.push(slab.bytes);
  }
}
