import { assert } from '@ward/shared/errors';

/**
 * The gateway side of the sliding TTL in a replicated deployment: the tokens seen in successful
 * requests since the last flush. Every `simpleTokenRefreshIntervalMs(ttl)` the gateway drains it and
 * proposes one "refresh these tokens" entry, so use costs one Raft entry per interval rather than
 * one per request. Bounded: when full, `touch` says so and the gateway should flush early.
 */
export class TokenActivity {
  private readonly seen = new Set<string>();

  constructor(readonly maxTokens: number) {
    if (!Number.isSafeInteger(maxTokens) || maxTokens <= 0) {
      throw new TypeError(`TokenActivity: maxTokens must be a positive integer, got ${maxTokens}`);
    }
  }

  get size(): number {
    return this.seen.size;
  }

  /** Records a use. False when the buffer is full and the token was not already in it. */
  touch(token: string): boolean {
    if (this.seen.has(token)) return true;
    if (this.seen.size >= this.maxTokens) return false;
    this.seen.add(token);
    return true;
  }

  /** Removes and returns up to `maxBatch` tokens (insertion order) for one refresh proposal. */
  drain(maxBatch: number): string[] {
    if (!Number.isSafeInteger(maxBatch) || maxBatch <= 0) throw new TypeError(`drain: maxBatch must be a positive integer, got ${maxBatch}`);
    const batch: string[] = [];
    for (const token of this.seen) {
      if (batch.length >= maxBatch) break;
      batch.push(token);
    }
    for (const token of batch) this.seen.delete(token);
    assert(batch.length <= maxBatch, 'drain respects its batch bound');
    return batch;
  }
}
