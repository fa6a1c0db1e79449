import { assert } from '@ward/shared/errors';
import { formatSimpleToken } from './simple-token-format';

/** What a simple token resolves to: etcd's AuthInfo (the revision is always the current one). */
export interface SimpleTokenOwner {
  readonly username: string;
  /** The log index of the Authenticate entry that issued the token. */
  readonly index: number;
}

/**
 * The simple-token table, replicated through the log (so every node resolves every token, closing
 * etcd's issue 18437) and kept in snapshots. Tokens are `<16 letters>.<log index>`. TTLs are the
 * token layer's: it proposes SimpleTokenExpire for tokens that ran out.
 *
 * Bounded per user and in total, so that no user can push another user's tokens out: a user at
 * `maxTokensPerUser` loses its own oldest token (lowest index) to its next one; the total bound is
 * a last resort that takes the oldest token of the user holding the most (ties: the user whose
 * oldest token is older). A token of user V is therefore only ever evicted for user U's new token
 * when V holds at least as many tokens as U. Both bounds are part of the state machine's rules:
 * every replica must use the same values. A restored table may hold more than `maxTokensPerUser`
 * for a user (a snapshot taken under other bounds); that user's next token trims it.
 */
export class SimpleTokenTable {
  private readonly owners = new Map<string, SimpleTokenOwner>();
  /** Each user's tokens with their index. */
  private readonly byUser = new Map<string, Map<string, number>>();
  readonly maxTokens: number;
  readonly maxTokensPerUser: number;

  constructor(maxTokens: number, maxTokensPerUser: number = maxTokens) {
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) throw new TypeError('maxTokens must be a positive integer');
    if (!Number.isSafeInteger(maxTokensPerUser) || maxTokensPerUser < 1) throw new TypeError('maxTokensPerUser must be a positive integer');
    this.maxTokens = maxTokens;
    this.maxTokensPerUser = Math.min(maxTokensPerUser, maxTokens);
  }

  get size(): number {
    return this.owners.size;
  }

  /** Live tokens of `username`. */
  countOf(username: string): number {
    return this.byUser.get(username)?.size ?? 0;
  }

  resolve(token: string): SimpleTokenOwner | undefined {
    return this.owners.get(token);
  }

  /** Registers `<prefix>.<index>` for `username`, evicting as the bounds say; returns the token. */
  assign(prefix: string, index: number, username: string): string {
    const token = formatSimpleToken(prefix, index);
    assert(!this.owners.has(token), 'a log index issues one token');
    this.trimUser(username, this.maxTokensPerUser - 1);
    while (this.owners.size >= this.maxTokens) {
      const heaviest = this.heaviestUser();
      this.trimUser(heaviest, this.countOf(heaviest) - 1);
    }
    this.insert(token, { username, index });
    return token;
  }

  /** etcd's invalidateUser: every token of `username` (password change, user delete). */
  invalidateUser(username: string): void {
    for (const token of [...(this.byUser.get(username)?.keys() ?? [])]) this.remove(token);
  }

  /** Drops every token (AuthDisable). */
  clear(): void {
    this.owners.clear();
    this.byUser.clear();
  }

  expire(tokens: readonly string[]): void {
    for (const token of tokens) if (this.owners.has(token)) this.remove(token);
  }

  /** Every live token, in no particular order. */
  tokens(): IterableIterator<string> {
    return this.owners.keys();
  }

  /** The tokens in ascending token order, for the snapshot. */
  entries(): Array<readonly [string, SimpleTokenOwner]> {
    return [...this.owners.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** A token from a snapshot, as it was (no eviction: the snapshot is the replicated state). */
  restore(token: string, owner: SimpleTokenOwner): void {
    if (this.owners.has(token)) this.remove(token);
    this.insert(token, owner);
  }

  private insert(token: string, owner: SimpleTokenOwner): void {
    this.owners.set(token, owner);
    let mine = this.byUser.get(owner.username);
    if (mine === undefined) {
      mine = new Map();
      this.byUser.set(owner.username, mine);
    }
    mine.set(token, owner.index);
  }

  private remove(token: string): void {
    const owner = this.owners.get(token);
    assert(owner !== undefined, 'removing a live token');
    this.owners.delete(token);
    const mine = this.byUser.get(owner.username);
    assert(mine !== undefined && mine.delete(token), 'the user index holds every token');
    if (mine.size === 0) this.byUser.delete(owner.username);
  }

  /** Removes the oldest tokens (lowest index) of `username` until it holds at most `keep`. */
  private trimUser(username: string, keep: number): void {
    const mine = this.byUser.get(username);
    if (mine === undefined || mine.size <= keep) return;
    const excess = mine.size - Math.max(0, keep);
    if (excess === 1) {
      this.remove(oldestOf(mine)[0]);
      return;
    }
    const oldestFirst = [...mine].sort(([, a], [, b]) => a - b);
    for (const [token] of oldestFirst.slice(0, excess)) this.remove(token);
  }

  /** The user holding the most tokens; among equals, the one whose oldest token is oldest. */
  private heaviestUser(): string {
    let heaviest: string | undefined;
    let heaviestCount = 0;
    let heaviestOldest = Number.POSITIVE_INFINITY;
    for (const [username, mine] of this.byUser) {
      if (mine.size < heaviestCount) continue;
      const oldest = oldestOf(mine)[1];
      if (mine.size > heaviestCount || oldest < heaviestOldest) {
        heaviest = username;
        heaviestCount = mine.size;
        heaviestOldest = oldest;
      }
    }
    assert(heaviest !== undefined, 'a full table has a user');
    return heaviest;
  }
}

/** The entry with the lowest index of a user's (non-empty) tokens. */
function oldestOf(tokens: ReadonlyMap<string, number>): readonly [string, number] {
  let oldest: readonly [string, number] | undefined;
  for (const entry of tokens) if (oldest === undefined || entry[1] < oldest[1]) oldest = entry;
  assert(oldest !== undefined, 'a user in the index has a token');
  return oldest;
}
