import { assert } from '@ward/shared/errors';

/** A bounded FIFO of messages by count and bytes. */
export class MessageQueue {
  private items: Uint8Array[] = [];
  private head = 0;
  private bytes = 0;

  constructor(
    private readonly maxMessages: number,
    private readonly maxBytes: number,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  get queuedBytes(): number {
    return this.bytes;
  }

  /** Adds a message; false (nothing changes) when it would pass a limit. */
  push(message: Uint8Array): boolean {
    if (this.length >= this.maxMessages || this.bytes + message.length > this.maxBytes) return false;
    this.items.push(message);
    this.bytes += message.length;
    return true;
  }

  /**
   * Removes up to `maxCount` messages of at most `maxBytes` together (always at least one when
   * not empty) and returns them.
   */
  take(maxCount: number, maxBytes: number): Uint8Array[] {
    let end = this.head;
    let bytes = 0;
    while (end < this.items.length && end - this.head < maxCount) {
      const size = this.items[end]!.length;
      if (end > this.head && bytes + size > maxBytes) break;
      bytes += size;
      end++;
    }
    const taken = this.items.slice(this.head, end);
    this.head = end;
    this.bytes -= bytes;
    assert(this.bytes >= 0, 'message queue byte count went negative');
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return taken;
  }

  /** Empties the queue; returns how many messages it held. */
  clear(): number {
    const count = this.length;
    this.items = [];
    this.head = 0;
    this.bytes = 0;
    return count;
  }
}
