import { assert } from '@ward/shared/errors';
import type { Index } from './types';

/**
 * The MsgApps sent to one follower and not yet acknowledged, as a ring buffer of (last index,
 * bytes). Full when it holds `capacity` messages or `maxBytes` bytes (0 = no byte limit): the
 * leader then stops sending entries to that follower until acknowledgements free space.
 */
export class Inflights {
  private start = 0;
  private count = 0;
  private bytes = 0;
  private readonly indexes: Index[] = [];
  private readonly sizes: number[] = [];

  constructor(
    readonly capacity: number,
    readonly maxBytes: number,
  ) {
    assert(capacity >= 1, 'inflights capacity must be positive');
  }

  /** Records a sent message whose last entry is `index`, carrying `bytes` of entries. */
  add(index: Index, bytes: number): void {
    assert(!this.full(), 'cannot add into a full inflights');
    let slot = this.start + this.count;
    if (slot >= this.capacity) slot -= this.capacity;
    this.indexes[slot] = index;
    this.sizes[slot] = bytes;
    this.count++;
    this.bytes += bytes;
  }

  /** Frees every message whose last index is <= `to` (they were acknowledged). */
  freeLE(to: Index): void {
    if (this.count === 0 || to < this.indexes[this.start]!) return;
    let i = 0;
    let slot = this.start;
    let freedBytes = 0;
    for (; i < this.count; i++) {
      if (to < this.indexes[slot]!) break;
      freedBytes += this.sizes[slot]!;
      slot++;
      if (slot >= this.capacity) slot -= this.capacity;
    }
    this.count -= i;
    this.bytes -= freedBytes;
    this.start = this.count === 0 ? 0 : slot;
  }

  full(): boolean {
    return this.count === this.capacity || (this.maxBytes !== 0 && this.bytes >= this.maxBytes);
  }

  size(): number {
    return this.count;
  }

  sizeBytes(): number {
    return this.bytes;
  }

  reset(): void {
    this.start = 0;
    this.count = 0;
    this.bytes = 0;
  }
}
