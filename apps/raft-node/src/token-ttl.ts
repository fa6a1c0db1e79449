// Simple tokens' sliding TTL (etcd's simpleTokenTTLKeeper). Every member notes when each token was
// issued (applied) or last resolved; the leader, once a second, proposes simpleTokenExpire (as root)
// for tokens idle longer than the TTL, so every replica drops them at the same log position.

export interface TokenTtlOptions {
  readonly ttlMs: number;
  /** Tokens tracked at most (the state machine keeps at most this many as well). */
  readonly maxTokens: number;
  /** Tokens per expiry proposal. */
  readonly maxTokensPerProposal: number;
  /** Wait this long before proposing the same token's expiry again. */
  readonly reproposeAfterMs: number;
}

interface Tracked {
  lastUseMs: number;
  proposedAtMs: number;
}

export class TokenTtlKeeper {
  private readonly tokens = new Map<string, Tracked>();

  constructor(private readonly options: TokenTtlOptions) {}

  get size(): number {
    return this.tokens.size;
  }

  /** The token was issued or used now. */
  touch(token: string, nowMs: number): void {
    const tracked = this.tokens.get(token);
    if (tracked !== undefined) {
      tracked.lastUseMs = nowMs;
      return;
    }
    if (this.tokens.size >= this.options.maxTokens) {
      const oldest = this.tokens.keys().next().value;
      if (oldest !== undefined) this.tokens.delete(oldest);
    }
    this.tokens.set(token, { lastUseMs: nowMs, proposedAtMs: Number.NEGATIVE_INFINITY });
  }

  /**
   * A new leader gives every token a full TTL: it cannot know when the old leader last saw them.
   * `live` are the state machine's tokens, and exactly those are tracked from now on: the ones it
   * never saw applied (restored from a snapshot, at boot or sent by the leader) expire too, and
   * dead ones (expired, invalidated) no longer take room.
   */
  renewAll(nowMs: number, live: Iterable<string>): void {
    const previous = new Map(this.tokens);
    this.tokens.clear();
    for (const token of live) {
      if (this.tokens.size >= this.options.maxTokens) break;
      this.tokens.set(token, { lastUseMs: nowMs, proposedAtMs: previous.get(token)?.proposedAtMs ?? Number.NEGATIVE_INFINITY });
    }
  }

  /**
   * Tokens idle longer than the TTL that are still live (per `isLive`), at most one proposal's
   * worth; dead ones are forgotten, idle or not, so they never take a live token's room.
   */
  expired(nowMs: number, isLive: (token: string) => boolean): string[] {
    const due: string[] = [];
    for (const [token, tracked] of this.tokens) {
      if (!isLive(token)) {
        this.tokens.delete(token);
        continue;
      }
      if (due.length >= this.options.maxTokensPerProposal) continue;
      if (nowMs - tracked.lastUseMs < this.options.ttlMs) continue;
      if (nowMs - tracked.proposedAtMs < this.options.reproposeAfterMs) continue;
      tracked.proposedAtMs = nowMs;
      due.push(token);
    }
    return due;
  }
}
