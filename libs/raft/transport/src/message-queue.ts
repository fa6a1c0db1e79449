import { assert } from '@ward/shared/errors';
import { byteLength, type MessageBytes } from './frame-codec';

/** A bounded FIFO of messages by count and bytes, each with the time it was queued. */
export class MessageQueue {
  private items: MessageBytes[] = [];
  private sizes: number[] = [];
  private queuedAtMs: number[] = [];
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

  /** Adds a message queued at `nowMs`; false (nothing changes) when it would pass a limit. */
  push(message: MessageBytes, nowMs: number): boolean {
    const size = byteLength(message);
    if (this.length >= this.maxMessages || this.bytes + size > this.maxBytes) return false;
    this.items.push(message);
    this.sizes.push(size);
    this.queuedAtMs.push(nowMs);
    this.bytes += size;
    return true;
  }

  /** Removes the messages queued before `cutoffMs` (the oldest are first); returns how many. */
  dropQueuedBefore(cutoffMs: number): number {
    let end = this.head;
    let bytes = 0;
    while (end < this.items.length && this.queuedAtMs[end]! < cutoffMs) bytes += this.sizes[end++]!;
    const count = end - this.head;
    this.advance(end, bytes);
    return count;
  }

  /**
   * Removes up to `maxCount` messages of at most `maxBytes` together (always at least one when
   * not empty) and returns them.
   */
  take(maxCount: number, maxBytes: number): MessageBytes[] {
    let end = this.head;
    let bytes = 0;
    while (end < this.items.length && end - this.head < maxCount) {
      const size = this.sizes[end]!;
      if (end > this.head && bytes + size > maxBytes) break;
      bytes += size;
      end++;
    }
    const taken = this.items.slice(this.head, end);
    this.advance(end, bytes);
    return taken;
  }

  private advance(end: number, bytes: number): void {
    this.head = end;
    this.bytes -= bytes;
    assert(this.bytes >= 0, 'message queue byte count went negative');
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.queuedAtMs = this.queuedAtMs.slice(this.head);
      this.head = 0;
    }
  }

  /** Empties the queue; returns how many messages it held. */
  clear(): number {
    const count = this.length;
    this.items = [];
    this.sizes = [];
    this.queuedAtMs = [];
    this.head = 0;
    this.bytes = 0;
    return count;
  }
}
