/**
 * Bytes held back for a while and released in order: each chunk is due at its arrival time plus
 * a delay (with jitter), but never before the chunk ahead of it, so a stream is never reordered.
 */
export class DelayLine {
  private readonly chunks: { readonly bytes: Uint8Array; readonly dueMs: number }[] = [];
  private head = 0;
  private lastDueMs = Number.NEGATIVE_INFINITY;
  private held = 0;

  /** Bytes waiting. */
  get heldBytes(): number {
    return this.held;
  }

  get isEmpty(): boolean {
    return this.head === this.chunks.length;
  }

  /** Adds a chunk arriving at `nowMs`; returns when it is due. */
  push(bytes: Uint8Array, nowMs: number, delayMs: number): number {
    const dueMs = Math.max(nowMs + Math.max(0, delayMs), this.lastDueMs);
    this.lastDueMs = dueMs;
    this.chunks.push({ bytes, dueMs });
    this.held += bytes.length;
    return dueMs;
  }

  /** Removes and returns the chunks due at `nowMs`, in order. */
  takeDue(nowMs: number): Uint8Array[] {
    const due: Uint8Array[] = [];
    while (this.head < this.chunks.length && this.chunks[this.head]!.dueMs <= nowMs) {
      const { bytes } = this.chunks[this.head++]!;
      this.held -= bytes.length;
      due.push(bytes);
    }
    this.compact();
    return due;
  }

  /** Removes and returns every chunk, due or not (used when the fault is healed). */
  takeAll(): Uint8Array[] {
    const all = this.chunks.slice(this.head).map((chunk) => chunk.bytes);
    this.chunks.length = 0;
    this.head = 0;
    this.held = 0;
    this.lastDueMs = Number.NEGATIVE_INFINITY;
    return all;
  }

  /** When the next chunk is due, or undefined when none waits. */
  nextDueMs(): number | undefined {
    return this.head < this.chunks.length ? this.chunks[this.head]!.dueMs : undefined;
  }

  private compact(): void {
    if (this.head > 256 && this.head * 2 > this.chunks.length) {
      this.chunks.splice(0, this.head);
      this.head = 0;
    }
  }
}
