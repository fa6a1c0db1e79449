import type { Rng } from '@ward/shared/clock';

/** Bounds of the retry loop around one request (from the config). */
export interface RetryBounds {
  /** Tries in total, the first included (≥ 1). */
  readonly maxAttemptsCount: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Delay before try number `attempt + 1` (attempt ≥ 1 tries already failed): exponential with
 * "full jitter" — uniform in [0, min(max, base·2^(attempt-1))] — so gateways that lost the same
 * leader do not retry in lockstep.
 */
export function backoffDelayMs(attempt: number, bounds: RetryBounds, rng: Rng): number {
  if (!Number.isSafeInteger(attempt) || attempt < 1) throw new TypeError(`backoffDelayMs: attempt must be ≥ 1, got ${attempt}`);
  const ceilingMs = Math.min(bounds.maxDelayMs, bounds.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(rng.nextFloat() * (ceilingMs + 1));
}

/** Resolves after `delayMs`, or rejects with the signal's reason when it aborts first. */
export function sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
