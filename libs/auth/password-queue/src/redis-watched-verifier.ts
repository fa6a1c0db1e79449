// The BullMQ tier as a service runs it without a fallback: Redis is probed once at start and then
// every probe interval; while it does not answer (two failed probes in a row once it was up), every
// hash or verify fails at once with
// TIER_FAILED (etcd's `unhealthy cluster`) and the tier reports itself not ready with the reason.
// The queue verifier is connected the first time Redis answers (at start or later), and its
// connections reconnect by themselves afterwards: nothing needs a restart.
import { PasswordError, type PasswordTierHealth, type PasswordVerifier } from '@ward/auth/password-jobs';
import type { Logger } from '@ward/platform/logging';

/** A verifier that can be closed (the queue verifier). */
export interface ClosableVerifier extends PasswordVerifier {
  close(): Promise<void>;
}

export interface RedisWatchedVerifierOptions {
  /** host:port of Redis, for the reason and the log (never the URL: it may hold a password). */
  readonly where: string;
  /** True when Redis answers a PING; must settle within its own bound. */
  readonly ping: () => Promise<boolean>;
  /** Connects the queue verifier (called only after a PING answered). */
  readonly connect: () => Promise<ClosableVerifier>;
  /** A connect not finished within this counts as Redis unreachable (a late one is closed). */
  readonly connectTimeoutMs: number;
  readonly logger: Logger;
  /** Closes whatever `ping` uses. */
  readonly closeProbe?: () => void;
}

type State = 'unknown' | 'up' | 'down';

/** Failed probes in a row that take a tier that was up down (before it was ever up: one). */
const FAILED_PROBES_FOR_DOWN = 2;

export class RedisWatchedVerifier implements ClosableVerifier {
  private verifier: ClosableVerifier | undefined;
  private state: State = 'unknown';
  /** Failed probes in a row; once up, one alone (a stalled event loop, a slow PING) is not an outage. */
  private failures = 0;
  private checking: Promise<void> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(private readonly options: RedisWatchedVerifierOptions) {
    if (!Number.isSafeInteger(options.connectTimeoutMs) || options.connectTimeoutMs < 1) throw new TypeError('RedisWatchedVerifier: connectTimeoutMs must be a positive integer');
  }

  /** Ready only while Redis answered the last probe and the queue verifier is connected. */
  health(): PasswordTierHealth {
    if (this.state === 'up') return { ready: true };
    const where = this.options.where;
    return { ready: false, reason: this.state === 'unknown' ? `password tier: connecting to redis at ${where}` : `password tier: redis at ${where} unreachable` };
  }

  /** Probes every `intervalMs` from now on (the timer does not keep the process alive). */
  startProbing(intervalMs: number): void {
    if (!Number.isSafeInteger(intervalMs) || intervalMs < 1) throw new TypeError('RedisWatchedVerifier: intervalMs must be a positive integer');
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => void this.check(), intervalMs);
    this.timer.unref();
  }

  /** One probe (joined if one is running): PING, connect the verifier if needed, update the state. */
  check(): Promise<void> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = undefined));
    return this.checking;
  }

  async hash(password: Uint8Array): Promise<Uint8Array> {
    return this.guarded((verifier) => verifier.hash(password));
  }

  async verify(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    return this.guarded((verifier) => verifier.verify(password, hash));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.checking?.catch(() => undefined);
    this.options.closeProbe?.();
    await this.verifier?.close();
  }

  private async guarded<T>(operation: (verifier: ClosableVerifier) => Promise<T>): Promise<T> {
    if (this.closed) throw new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED');
    const verifier = this.verifier;
    if (this.state !== 'up' || verifier === undefined) throw new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'redis-unreachable' });
    try {
      return await operation(verifier);
    } catch (error) {
      // A failed enqueue is usually Redis going away between probes: look again now.
      if (error instanceof PasswordError && error.code === 'ERR_AUTH_PASSWORD_TIER_FAILED' && error.reason === 'enqueue') void this.check();
      throw error;
    }
  }

  private async checkOnce(): Promise<void> {
    if (this.closed) return;
    let answered = await this.options.ping().catch(() => false);
    if (answered && this.verifier === undefined && !this.closed) {
      try {
        const verifier = await this.connectWithin();
        if (this.closed) await verifier.close();
        else this.verifier = verifier;
      } catch (error) {
        this.options.logger.warn({ err: error, redis: this.options.where }, 'password tier: redis answered but the queue could not be connected; retrying');
        answered = false;
      }
    }
    if (this.closed) return;
    this.failures = answered ? 0 : this.failures + 1;
    if (answered) this.setState('up');
    else if (this.state !== 'up' || this.failures >= FAILED_PROBES_FOR_DOWN) this.setState('down');
  }

  private connectWithin(): Promise<ClosableVerifier> {
    const connecting = this.options.connect();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`connect took over ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
    });
    return Promise.race([connecting, timeout]).then(
      (verifier) => {
        clearTimeout(timer);
        return verifier;
      },
      (error: unknown) => {
        clearTimeout(timer);
        // A connect that finishes after the deadline is closed, not leaked.
        connecting.then((late) => late.close(), () => undefined).catch(() => undefined);
        throw error;
      },
    );
  }

  private setState(next: 'up' | 'down'): void {
    const previous = this.state;
    if (previous === next) return;
    this.state = next;
    const redis = this.options.where;
    if (next === 'up') this.options.logger.info({ redis }, previous === 'unknown' ? 'password tier: redis connected' : 'password tier: redis reachable again; password checks resume');
    else this.options.logger.warn({ redis }, "password tier: redis unreachable; password checks fail with 'unhealthy cluster' and /readyz reports not ready until it answers (reconnecting)");
  }
}
