/** Reconnect delays: exponential, bounded, with jitter so peers do not reconnect in lockstep. */
export interface BackoffOptions {
  /** Delay before the first retry. */
  readonly initialMs: number;
  /** Upper bound of any delay. */
  readonly maxMs: number;
  /** Growth factor per failed attempt (>= 1). */
  readonly multiplier: number;
  /** Relative spread in [0, 1]: a delay d becomes uniform in [d(1 - jitter), d(1 + jitter)], capped at maxMs. */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({ initialMs: 50, maxMs: 2000, multiplier: 2, jitter: 0.2 });

export function checkBackoff(options: BackoffOptions): BackoffOptions {
  const { initialMs, maxMs, multiplier, jitter } = options;
  if (!(Number.isFinite(initialMs) && initialMs > 0)) throw new TypeError(`backoff.initialMs must be positive, got ${initialMs}`);
  if (!(Number.isFinite(maxMs) && maxMs >= initialMs)) throw new TypeError(`backoff.maxMs must be at least initialMs, got ${maxMs}`);
  if (!(Number.isFinite(multiplier) && multiplier >= 1)) throw new TypeError(`backoff.multiplier must be at least 1, got ${multiplier}`);
  if (!(Number.isFinite(jitter) && jitter >= 0 && jitter <= 1)) throw new TypeError(`backoff.jitter must be in [0, 1], got ${jitter}`);
  return options;
}

/** Delay before retry number `attempt` (0-based); `random` returns a float in [0, 1). */
export function backoffDelayMs(options: BackoffOptions, attempt: number, random: () => number): number {
  const exponent = Math.min(Math.max(0, attempt), 64);
  const base = Math.min(options.maxMs, options.initialMs * options.multiplier ** exponent);
  const spread = base * options.jitter * (2 * random() - 1);
  return Math.max(0, Math.min(options.maxMs, base + spread));
}
