// Admission control in front of every password check (gateway and token-service alike, either
// tier): the failure throttle first (a wait before the check is even queued, or a refusal), then
// a bounded round-robin wait queue (fair-queue.ts) and a bounded number of checks in flight, then —
// with the BullMQ tier — a cluster-wide slot for the user in Redis. Every refusal is immediate:
// TIER_BUSY (etcd's `too many requests`), never an unbounded queue or a hang.
import { PasswordError } from '@ward/auth/password-jobs';
import { ErrorLogLimiter, type Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import { FairQueue, type FairQueueLimits } from './fair-queue';
import type { CallerKey, KeyKind, ThrottleStore } from './throttle';

/** A cluster-wide bound on one user's checks in flight (the BullMQ tier's Redis); absent in process. */
export interface UserSlots {
  /** A release function, or undefined when the user holds all its slots. Rejects when unreachable. */
  acquire(user: string): Promise<(() => void) | undefined>;
}

export interface PasswordAdmissionOptions {
  /** Checks running at once. */
  readonly maxInFlight: number;
  readonly queue: FairQueueLimits;
  /** A check that waited this long in the queue fails with TIER_TIMEOUT instead of starting. */
  readonly queueTimeoutMs: number;
  /** Callers waiting out a throttle delay (or a held refusal) at once; more are refused at once. */
  readonly maxDelayed: number;
  /**
   * A throttled address's refusal is answered after this (0: at once), within `maxDelayed`: a
   * client looping on refusals gets one answer per hold, instead of a refusal flood of its own.
   */
  readonly refusalHoldMs: number;
  /** Uniform in [0, 1): jitter of held refusals (so a looping client's calls do not arrive in step). */
  readonly random?: () => number;
  readonly throttle: ThrottleStore;
  readonly userSlots?: UserSlots;
  readonly logger: Logger;
  /** `<prefix>auth_*` series are added to it. */
  readonly metrics?: Metrics;
  /** Monotonic milliseconds (log rate limiting). */
  readonly nowMs: () => number;
}

/** How a finished check counts for the throttle. */
export type CheckOutcome = 'success' | 'failure' | 'neutral';

export type AdmissionRefusal = 'queue-full' | 'user-queue-full' | 'address-queue-full' | 'throttled-address' | 'throttle-full' | 'user-busy' | 'store-unavailable';

interface Waiter {
  readonly key: CallerKey;
  readonly start: () => void;
  readonly fail: (error: unknown) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface AdmissionMetrics {
  refused(reason: AdmissionRefusal): void;
  throttled(by: KeyKind): void;
  checked(outcome: CheckOutcome): void;
  depth(queued: number, inFlight: number, delayed: number): void;
}

function admissionMetrics(metrics: Metrics | undefined): AdmissionMetrics {
  if (metrics === undefined) return { refused: () => undefined, throttled: () => undefined, checked: () => undefined, depth: () => undefined };
  const refused = metrics.counter({ name: 'auth_refused_total', help: "password checks refused at once ('too many requests' or unavailable), by reason", labelNames: ['reason'] });
  const throttled = metrics.counter({ name: 'auth_throttled_total', help: 'password checks delayed by the failure throttle, by the key that delayed them (pair: address and user; address; user)', labelNames: ['reason'] });
  const checked = metrics.counter({ name: 'auth_checks_total', help: 'password checks admitted and finished, by outcome for the throttle', labelNames: ['outcome'] });
  const queueDepth = metrics.gauge({ name: 'auth_queue_depth', help: 'password checks waiting in the fair queue' });
  const inFlight = metrics.gauge({ name: 'auth_in_flight', help: 'password checks running' });
  const delayed = metrics.gauge({ name: 'auth_throttle_waiting', help: 'callers waiting out a throttle delay' });
  return {
    refused: (reason) => refused.inc({ reason }),
    throttled: (by) => throttled.inc({ reason: by }),
    checked: (outcome) => checked.inc({ outcome }),
    depth: (q, f, d) => (queueDepth.set(q), inFlight.set(f), delayed.set(d)),
  };
}

export class PasswordAdmission {
  private readonly queue: FairQueue<Waiter>;
  private readonly metrics: AdmissionMetrics;
  private readonly warnings: ErrorLogLimiter;
  private inFlight = 0;
  private delayed = 0;
  private closed = false;

  constructor(private readonly options: PasswordAdmissionOptions) {
    for (const name of ['maxInFlight', 'queueTimeoutMs', 'maxDelayed', 'refusalHoldMs'] as const) {
      const min = name === 'refusalHoldMs' ? 0 : 1;
      if (!Number.isSafeInteger(options[name]) || options[name] < min) throw new TypeError(`PasswordAdmission: ${name} must be an integer ≥ ${min}, got ${options[name]}`);
    }
    this.queue = new FairQueue(options.queue);
    this.metrics = admissionMetrics(options.metrics);
    // One warn line per throttled client (address) at once, then one per 10 s with the count left out.
    this.warnings = new ErrorLogLimiter(options.nowMs, { burstLines: 1, refillIntervalMs: 10_000, maxCauses: 256 });
  }

  get stats(): { readonly queued: number; readonly inFlight: number; readonly delayed: number } {
    return { queued: this.queue.size, inFlight: this.inFlight, delayed: this.delayed };
  }

  /**
   * Runs `check` for `key` once admitted; `classify` says how its result counts for the throttle.
   * Refusals reject with TIER_BUSY (reason: the AdmissionRefusal), an unreachable throttle store
   * with TIER_FAILED, a queue wait beyond `queueTimeoutMs` with TIER_TIMEOUT.
   */
  async run<T>(key: CallerKey, check: () => Promise<T>, classify: (result: { ok: true; value: T } | { ok: false; error: unknown }) => CheckOutcome): Promise<T> {
    if (this.closed) throw new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED');
    await this.waitOutThrottle(key);
    await this.enter(key);
    let release: (() => void) | undefined;
    try {
      release = await this.userSlot(key);
      let outcome: CheckOutcome;
      let value: T;
      try {
        value = await check();
        outcome = classify({ ok: true, value });
      } catch (error) {
        outcome = classify({ ok: false, error });
        this.record(key, outcome);
        throw error;
      }
      this.record(key, outcome);
      return value;
    } finally {
      release?.();
      this.leave();
    }
  }

  /** Fails every queued check with TIER_CLOSED; running ones finish. */
  close(): void {
    this.closed = true;
    for (const waiter of this.queue.drain()) {
      clearTimeout(waiter.timer);
      waiter.fail(new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED'));
    }
    this.publish();
  }

  private async waitOutThrottle(key: CallerKey): Promise<void> {
    let reservation;
    try {
      reservation = await this.options.throttle.reserve(key);
    } catch (error) {
      this.refuse('store-unavailable', key);
      throw new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'throttle-store', cause: error });
    }
    if (reservation.kind === 'refused') {
      this.warn(key, `throttled-${reservation.by}`, undefined);
      const refusal = this.refuse(reservation.by === 'user' ? 'throttle-full' : 'throttled-address', key);
      if (this.options.refusalHoldMs > 0 && this.delayed < this.options.maxDelayed) {
        // Between half and one and a half holds: many looping connections drift apart, not in bursts.
        await this.hold(Math.round(this.options.refusalHoldMs * (0.5 + (this.options.random ?? Math.random)())));
      }
      throw refusal;
    }
    if (reservation.waitMs <= 0) return;
    for (const by of reservation.throttledBy) this.metrics.throttled(by);
    this.warn(key, reservation.throttledBy.join('+'), reservation.waitMs);
    if (this.delayed >= this.options.maxDelayed) throw this.refuse('throttle-full', key);
    await this.hold(reservation.waitMs);
  }

  /** Waits `ms`, counted among the delayed callers. */
  private async hold(ms: number): Promise<void> {
    this.delayed += 1;
    this.publish();
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      this.delayed -= 1;
      this.publish();
    }
  }

  /** Takes an in-flight slot now, or waits its turn in the fair queue. */
  private enter(key: CallerKey): Promise<void> {
    if (this.inFlight < this.options.maxInFlight && this.queue.size === 0) {
      this.inFlight += 1;
      this.publish();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { key, start: resolve, fail: reject, timer: undefined };
      const refusal = this.queue.push(key.user, key.address, waiter);
      if (refusal !== undefined) {
        reject(this.refuse(refusal, key));
        return;
      }
      waiter.timer = setTimeout(() => {
        if (!this.queue.remove(key.user, key.address, waiter)) return;
        this.publish();
        reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_TIMEOUT', { limit: this.options.queueTimeoutMs }));
      }, this.options.queueTimeoutMs);
      this.publish();
    });
  }

  private leave(): void {
    const next = this.queue.shift();
    if (next === undefined) this.inFlight -= 1;
    else {
      // The slot passes straight to the next in turn.
      clearTimeout(next.timer);
      next.start();
    }
    this.publish();
  }

  private async userSlot(key: CallerKey): Promise<(() => void) | undefined> {
    if (this.options.userSlots === undefined) return undefined;
    let release;
    try {
      release = await this.options.userSlots.acquire(key.user);
    } catch (error) {
      this.refuse('store-unavailable', key);
      throw new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'user-slots', cause: error });
    }
    if (release === undefined) throw this.refuse('user-busy', key);
    return release;
  }

  private record(key: CallerKey, outcome: CheckOutcome): void {
    this.metrics.checked(outcome);
    if (outcome === 'neutral') return;
    const write = outcome === 'failure' ? this.options.throttle.failure(key) : this.options.throttle.success(key);
    write.catch((error: unknown) => {
      const decision = this.warnings.admit('throttle-store');
      if (decision.log) this.options.logger.warn({ err: error, suppressed: decision.suppressedCount }, 'password throttle state could not be written');
    });
  }

  private refuse(reason: AdmissionRefusal, key: CallerKey): PasswordError {
    this.metrics.refused(reason);
    if (reason !== 'throttled-address') this.warn(key, reason, undefined);
    return new PasswordError('ERR_AUTH_PASSWORD_TIER_BUSY', { reason });
  }

  /** A warn line per client address at a bounded rate; never a password or a hash. */
  private warn(key: CallerKey, reason: string, waitMs: number | undefined): void {
    const decision = this.warnings.admit(`address ${key.address}`);
    if (!decision.log) return;
    this.options.logger.warn({ address: key.address, user: key.user, reason, waitMs, suppressed: decision.suppressedCount }, 'password check throttled or refused');
  }

  private publish(): void {
    this.metrics.depth(this.queue.size, this.inFlight, this.delayed);
  }
}
