import { assert } from '@ward/shared/errors';

/** What a simple token resolves to: etcd's AuthInfo (the revision is always the current one). */
export interface SimpleTokenOwner {
  readonly username: string;
  /** The log index of the Authenticate entry that issued the token. */
  readonly index: number;
}

const PREFIX_LETTERS = /^[A-Za-z]{16}$/;

/** True for etcd's simple-token prefix: 16 letters from [a-zA-Z]. */
export function isSimpleTokenPrefix(prefix: string): boolean {
  return PREFIX_LETTERS.test(prefix);
}

/**
 * The simple-token table, replicated through the log (so every node resolves every token, closing
 * etcd's issue 18437) and kept in snapshots. Tokens are `<16 letters>.<log index>`. When full, the
 * oldest token (lowest index) is dropped, deterministically. TTLs are the token layer's: it proposes
 * SimpleTokenExpire for tokens that ran out.
 */
export class SimpleTokenTable {
  private readonly owners = new Map<string, SimpleTokenOwner>();
  readonly maxTokens: number;

  constructor(maxTokens: number) {
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) throw new TypeError('maxTokens must be a positive integer');
    this.maxTokens = maxTokens;
  }

  get size(): number {
    return this.owners.size;
  }

  resolve(token: string): SimpleTokenOwner | undefined {
    return this.owners.get(token);
  }

  /** Registers `<prefix>.<index>` for `username`; returns the token. */
  assign(prefix: string, index: number, username: string): string {
    assert(isSimpleTokenPrefix(prefix), 'a simple-token prefix is 16 letters');
    const token = `${prefix}.${index}`;
    assert(!this.owners.has(token), 'a log index issues one token');
    if (this.owners.size >= this.maxTokens) this.dropOldest();
    this.owners.set(token, { username, index });
    return token;
  }

  /** etcd's invalidateUser: every token of `username` (password change, user delete). */
  invalidateUser(username: string): void {
    for (const [token, owner] of this.owners) if (owner.username === username) this.owners.delete(token);
  }

  /** Drops every token (AuthDisable). */
  clear(): void {
    this.owners.clear();
  }

  expire(tokens: readonly string[]): void {
    for (const token of tokens) this.owners.delete(token);
  }

  /** Every live token, in no particular order. */
  tokens(): IterableIterator<string> {
    return this.owners.keys();
  }

  /** The tokens in ascending token order, for the snapshot. */
  entries(): Array<readonly [string, SimpleTokenOwner]> {
    return [...this.owners.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  restore(token: string, owner: SimpleTokenOwner): void {
    this.owners.set(token, owner);
  }

  private dropOldest(): void {
    let oldest: string | undefined;
    let oldestIndex = Number.POSITIVE_INFINITY;
    for (const [token, owner] of this.owners) {
      if (owner.index < oldestIndex) {
        oldest = token;
        oldestIndex = owner.index;
      }
    }
    if (oldest !== undefined) this.owners.delete(oldest);
  }
}
