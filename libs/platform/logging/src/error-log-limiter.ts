import type { Logger } from './logger';

// Unexpected errors are logged, but a request that fails the same way over and over cannot write a
// line per request: each cause (the error's class and first message line) has a token bucket, and
// the next line a cause is allowed carries how many of its occurrences were not logged. The causes
// tracked are bounded; beyond the bound, idle causes are forgotten and any other new cause shares
// one overflow bucket, so the log rate stays bounded whatever the errors look like.

export interface ErrorLogLimits {
  /** Lines one cause may write at once before it is throttled. */
  readonly burstLines: number;
  /** After the burst: one line per cause per this many milliseconds. */
  readonly refillIntervalMs: number;
  /** Causes with their own bucket; further causes share the overflow bucket. */
  readonly maxCauses: number;
}

export const DEFAULT_ERROR_LOG_LIMITS: ErrorLogLimits = Object.freeze({ burstLines: 5, refillIntervalMs: 10_000, maxCauses: 64 });

/** Longest cause key kept (class name and the first line of the message). */
const MAX_CAUSE_KEY_CHARS = 160;

/** The cause key shared by every new cause once {@link ErrorLogLimits.maxCauses} are tracked. */
export const OVERFLOW_CAUSE = '(other causes)';

interface Bucket {
  tokens: number;
  refilledAtMs: number;
  suppressed: number;
}

/** What a caller should do with one occurrence. */
export type ErrorLogDecision = { readonly log: true; readonly cause: string; readonly suppressedCount: number } | { readonly log: false };

/** The cause of `error` as a bounded key: class name and the first line of its message. */
export function errorCause(error: unknown): string {
  if (error instanceof Error) {
    const firstLine = error.message.split('\n', 1)[0] ?? '';
    return `${error.name}: ${firstLine}`.slice(0, MAX_CAUSE_KEY_CHARS);
  }
  return `${typeof error}`.slice(0, MAX_CAUSE_KEY_CHARS);
}

export class ErrorLogLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number,
    readonly limits: ErrorLogLimits = DEFAULT_ERROR_LOG_LIMITS,
  ) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`error log limit ${name} must be a positive integer`);
    }
  }

  /** Causes tracked now (at most maxCauses + 1, the overflow bucket). */
  get trackedCauses(): number {
    return this.buckets.size;
  }

  /** Counts one occurrence of `cause`; says whether to log it and how many were held back before. */
  admit(cause: string): ErrorLogDecision {
    const nowMs = this.now();
    const key = this.bucketKey(cause, nowMs);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.limits.burstLines, refilledAtMs: nowMs, suppressed: 0 };
      this.buckets.set(key, bucket);
    }
    this.refill(bucket, nowMs);
    if (bucket.tokens < 1) {
      bucket.suppressed += 1;
      return { log: false };
    }
    bucket.tokens -= 1;
    const suppressedCount = bucket.suppressed;
    bucket.suppressed = 0;
    return { log: true, cause: key, suppressedCount };
  }

  private refill(bucket: Bucket, nowMs: number): void {
    const elapsed = Math.max(0, nowMs - bucket.refilledAtMs);
    const earned = Math.floor(elapsed / this.limits.refillIntervalMs);
    if (earned === 0) return;
    bucket.tokens = Math.min(this.limits.burstLines, bucket.tokens + earned);
    bucket.refilledAtMs = bucket.tokens === this.limits.burstLines ? nowMs : bucket.refilledAtMs + earned * this.limits.refillIntervalMs;
  }

  /** The key an occurrence is counted under: its own while there is room, else the overflow bucket. */
  private bucketKey(cause: string, nowMs: number): string {
    if (this.buckets.has(cause)) return cause;
    if (this.ownBuckets() < this.limits.maxCauses) return cause;
    // Forget causes that hold nothing: a full bucket with nothing suppressed is a fresh bucket.
    for (const [key, bucket] of this.buckets) {
      if (key === OVERFLOW_CAUSE || bucket.suppressed > 0) continue;
      this.refill(bucket, nowMs);
      if (bucket.tokens >= this.limits.burstLines) this.buckets.delete(key);
    }
    return this.ownBuckets() < this.limits.maxCauses ? cause : OVERFLOW_CAUSE;
  }

  private ownBuckets(): number {
    return this.buckets.size - (this.buckets.has(OVERFLOW_CAUSE) ? 1 : 0);
  }
}

/** Reports an error a service did not expect (answered as `internal error`). */
export type UnexpectedErrorLog = (error: unknown, bindings?: Readonly<Record<string, unknown>>) => void;

/**
 * Logs unexpected errors at error level, rate-limited per cause (ErrorLogLimiter): a request that
 * keeps failing the same way writes a few lines, then one per refill interval with the count of
 * occurrences left out.
 */
export function unexpectedErrorLog(logger: Logger, nowMs: () => number, limits: ErrorLogLimits = DEFAULT_ERROR_LOG_LIMITS): UnexpectedErrorLog {
  const limiter = new ErrorLogLimiter(nowMs, limits);
  return (error, bindings) => {
    const decision = limiter.admit(errorCause(error));
    if (!decision.log) return;
    if (decision.suppressedCount === 0) logger.error({ ...bindings, err: error }, 'unmapped error answered as internal');
    else logger.error({ ...bindings, err: error, suppressedCount: decision.suppressedCount, cause: decision.cause }, 'unmapped error answered as internal (more of this cause were not logged)');
  };
}
