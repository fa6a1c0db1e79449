/** etcd's `--auth-token-ttl` default: a simple token idle this long expires. */
export const DEFAULT_SIMPLE_TOKEN_TTL_SECONDS = 300;

/**
 * Bounds of the replicated simple-token table. Every replica must use the same values: a limit
 * decides whether an assignment succeeds, so it is part of the state machine's rules.
 */
export interface SimpleTokenTableOptions {
  /** Sliding TTL: a token not refreshed for this long is expired by the next sweep. */
  readonly ttlMs: number;
  /** Tokens in the whole table; an assignment beyond it fails with TABLE_FULL. */
  readonly maxTokens: number;
  /** Tokens of one user; the next assignment evicts that user's token expiring first. */
  readonly maxTokensPerUser: number;
}

export const DEFAULT_SIMPLE_TOKEN_TABLE_OPTIONS: SimpleTokenTableOptions = Object.freeze({
  ttlMs: DEFAULT_SIMPLE_TOKEN_TTL_SECONDS * 1000,
  maxTokens: 1_000_000,
  maxTokensPerUser: 10_000,
});

/** Largest TTL accepted (one year): beyond it a sliding TTL means "never". */
export const MAX_SIMPLE_TOKEN_TTL_MS = 365 * 24 * 3600 * 1000;

/** Validates options (TypeError on misuse: no fallback to a default, unlike etcd's ttl ≤ 0 rule). */
export function resolveSimpleTokenTableOptions(overrides: Partial<SimpleTokenTableOptions> = {}): SimpleTokenTableOptions {
  const options = { ...DEFAULT_SIMPLE_TOKEN_TABLE_OPTIONS, ...overrides };
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new TypeError(`simple token option ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  if (options.ttlMs > MAX_SIMPLE_TOKEN_TTL_MS) {
    throw new TypeError(`simple token ttlMs must be at most ${MAX_SIMPLE_TOKEN_TTL_MS}, got ${options.ttlMs}`);
  }
  if (options.maxTokensPerUser > options.maxTokens) {
    throw new TypeError('simple token maxTokensPerUser must not exceed maxTokens');
  }
  return Object.freeze(options);
}

/**
 * How often a gateway should propose the refresh batch of tokens it saw used: a quarter of the
 * TTL, so a token used at least once per TTL is refreshed long before a sweep could expire it.
 */
export function simpleTokenRefreshIntervalMs(ttlMs: number): number {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) throw new TypeError(`ttlMs must be a positive integer, got ${ttlMs}`);
  return Math.max(1, Math.floor(ttlMs / 4));
}
