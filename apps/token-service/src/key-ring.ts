// This replica's signing keys and their schedule. Each generated key is published one period
// before it signs (so a verifier's cached key set already holds it), signs for one period, and
// stays published until the last token it signed has expired (lifetime + clock tolerance after it
// stopped signing); then it is dropped. The private halves never leave this process. An operator's
// key file instead gives one key that signs for as long as it is configured.
import { generateJwtKeyPem, loadJwtKey, type JwtKey, type JwtSignMethod } from '@ward/auth/tokens';
import type { Clock } from '@ward/shared/clock';

/** One key with its times (epoch ms; Infinity: no end). */
/** A public JWK as published. */
export type PublicJwk = NonNullable<JwtKey['publicJwk']>;

export interface ScheduledKey {
  readonly key: JwtKey;
  readonly keyId: string;
  readonly notBeforeMs: number;
  readonly signUntilMs: number;
  readonly retireAfterMs: number;
}

export interface KeyRingOptions {
  readonly signMethod: JwtSignMethod;
  readonly clock: Clock;
  /** Lifetime of issued tokens. */
  readonly ttlMs: number;
  readonly clockToleranceMs: number;
  /** Rotation: each generated key signs this long. Ignored with an operator key. */
  readonly periodMs: number;
  /** An operator's PEM private key (and kid): one key, no rotation. */
  readonly operatorKey?: { readonly privateKeyPem: string; readonly keyId?: string };
}

/** Keys of this ring held at most (the config refuses a schedule needing more). */
const MAX_RING_KEYS = 16;

export class KeyRing {
  private keys: ScheduledKey[] = [];
  private rotating: Promise<void> | undefined;

  private constructor(private readonly options: KeyRingOptions) {}

  static async create(options: KeyRingOptions): Promise<KeyRing> {
    const ring = new KeyRing(options);
    const nowMs = options.clock.nowMs();
    if (options.operatorKey !== undefined) {
      const key = await loadJwtKey({ signMethod: options.signMethod, privateKeyPem: options.operatorKey.privateKeyPem, ...(options.operatorKey.keyId ? { keyId: options.operatorKey.keyId } : {}) });
      ring.keys = [{ key, keyId: key.keyId!, notBeforeMs: nowMs, signUntilMs: Infinity, retireAfterMs: Infinity }];
    } else {
      await ring.generate(nowMs);
      await ring.maintain();
    }
    return ring;
  }

  get rotates(): boolean {
    return this.options.operatorKey === undefined;
  }

  /** The key that signs now (rotating first when its period is over). */
  async signingKey(): Promise<ScheduledKey> {
    await this.maintain();
    const nowMs = this.options.clock.nowMs();
    const current = this.keys.find((k) => k.notBeforeMs <= nowMs && nowMs < k.signUntilMs);
    if (current === undefined) throw new Error('key ring: no key signs now');
    return current;
  }

  /** The keys verifiers must know now: the signing one, the next one, and those whose tokens may live. */
  published(): readonly ScheduledKey[] {
    const nowMs = this.options.clock.nowMs();
    return this.keys.filter((k) => k.retireAfterMs > nowMs);
  }

  /** The public JWK Set of the published keys (never a private part). */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.published().map((k) => ({ ...k.key.publicJwk! })) };
  }

  /**
   * Drops `keyId` at once (compromise). The next period's key signs from now (an operator's key
   * leaves nothing to sign with); false when unknown.
   */
  async revoke(keyId: string): Promise<boolean> {
    const index = this.keys.findIndex((k) => k.keyId === keyId);
    if (index === -1) return false;
    this.keys.splice(index, 1);
    // An operator's key has no successor: this replica cannot sign until it is given another.
    if (!this.rotates) return true;
    const nowMs = this.options.clock.nowMs();
    if (!this.keys.some((k) => k.notBeforeMs <= nowMs && nowMs < k.signUntilMs)) {
      const next = this.keys.find((k) => k.notBeforeMs > nowMs);
      if (next !== undefined) {
        this.keys = this.keys.filter((k) => k !== next);
        this.keys.push({ ...next, notBeforeMs: nowMs, signUntilMs: nowMs + this.options.periodMs, retireAfterMs: nowMs + this.options.periodMs + this.graceMs() });
      } else await this.generate(nowMs);
    }
    await this.maintain();
    return true;
  }

  /**
   * Brings the schedule up to now: retires keys whose tokens have all expired and makes sure the
   * key of the next period exists (generated now, published ahead of use). One rotation at a time.
   */
  maintain(): Promise<void> {
    if (!this.rotates) return Promise.resolve();
    if (this.rotating !== undefined) return this.rotating;
    const run = this.rotate().finally(() => {
      if (this.rotating === run) this.rotating = undefined;
    });
    this.rotating = run;
    return run;
  }

  private async rotate(): Promise<void> {
    const nowMs = this.options.clock.nowMs();
    this.keys = this.keys.filter((k) => k.retireAfterMs > nowMs);
    let last = this.keys.at(-1);
    // A stall longer than a period: start afresh from now rather than minting missed periods.
    if (last === undefined || last.signUntilMs <= nowMs) last = await this.generate(nowMs);
    if (last.notBeforeMs <= nowMs) await this.generate(last.signUntilMs);
  }

  /** Time a key stays published after it stopped signing: its last token's lifetime and the skew allowance. */
  private graceMs(): number {
    return this.options.ttlMs + this.options.clockToleranceMs;
  }

  private async generate(notBeforeMs: number): Promise<ScheduledKey> {
    const { privateKeyPem } = generateJwtKeyPem(this.options.signMethod);
    const key = await loadJwtKey({ signMethod: this.options.signMethod, privateKeyPem });
    const scheduled: ScheduledKey = {
      key,
      keyId: key.keyId!,
      notBeforeMs,
      signUntilMs: notBeforeMs + this.options.periodMs,
      retireAfterMs: notBeforeMs + this.options.periodMs + this.graceMs(),
    };
    if (this.keys.length >= MAX_RING_KEYS) throw new Error('key ring: too many keys published at once');
    this.keys.push(scheduled);
    return scheduled;
  }
}
