// Failure throttling of password checks, per user and per client address. The rule (the same in
// memory and in Redis's Lua script, redis-stores.ts):
//
// - Three keys count failed checks: the pair (client address, user name), the user name, and the
//   client address. A key is forgotten `forgetAfterMs` after its last failure; a successful check
//   resets its user and its pair.
// - A key's delay is 0 for its first free failures (`freeFailures` for the pair and the user,
//   `addressFreeFailures` for the address: an address holds many users, behind a NAT many
//   people), then `baseDelayMs · 2^(failures − free)`, at most `maxDelayMs`.
// - Checks of a key with a delay are spaced by it: each takes the next slot `max(now, nextAt)` and
//   moves `nextAt` one delay further; the caller waits for its slot before its check is queued.
// - A pair or an address whose next slot is more than `maxDelayMs` away is refused at once (too
//   many requests): both are the caller's own, and keep at most one delay's worth waiting.
// - A user's wait is capped at `maxDelayMs` and never refused: whoever floods a user's name, the
//   user's own login (from an address of its own) still goes through after at most one maximal
//   delay (no lock-out).

/** The throttle's limits (config: *_AUTH_THROTTLE_*). */
export interface ThrottleLimits {
  /** Free failures of a user, and of a (address, user) pair. */
  readonly freeFailures: number;
  /** Free failures of a client address (over all the users tried from it). */
  readonly addressFreeFailures: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly forgetAfterMs: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = Object.freeze({ freeFailures: 5, addressFreeFailures: 50, baseDelayMs: 250, maxDelayMs: 4000, forgetAfterMs: 600_000 });

/** The largest failure count kept (2^64 · base is far above any max delay). */
export const MAX_COUNTED_FAILURES = 64;

export interface ThrottleState {
  failures: number;
  /** Earliest start of the next check (ms, the store's clock). */
  nextAtMs: number;
  /** Last failure (ms); the state is forgotten `forgetAfterMs` after it. */
  lastFailureMs: number;
}

export type KeyKind = 'user' | 'address' | 'pair';

export const KEY_KINDS: readonly KeyKind[] = ['pair', 'address', 'user'];

/** The name of `kind`'s key for `key`. */
export function keyName(kind: KeyKind, key: CallerKey): string {
  if (kind === 'user') return key.user;
  if (kind === 'address') return key.address;
  return `${key.address}\u0000${key.user}`;
}

/** Who is asking: the user name tried and the client's address (no port). */
export interface CallerKey {
  readonly user: string;
  readonly address: string;
}

/** The wait before a check may be queued, or a refusal. */
export type Reservation = { readonly kind: 'wait'; readonly waitMs: number; readonly throttledBy: readonly KeyKind[] } | { readonly kind: 'refused'; readonly by: KeyKind };

export function checkThrottleLimits(limits: ThrottleLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`throttle limit ${name} must be a non-negative integer, got ${value}`);
  }
  if (limits.baseDelayMs > limits.maxDelayMs) throw new TypeError('throttle: baseDelayMs must be ≤ maxDelayMs');
}

/** The spacing between checks of a key of `kind` with `failures` failed checks. */
export function throttleDelayMs(failures: number, limits: ThrottleLimits, kind: KeyKind = 'user'): number {
  const free = kind === 'address' ? limits.addressFreeFailures : limits.freeFailures;
  if (failures < free) return 0;
  const steps = Math.min(failures - free, 40);
  return Math.min(limits.maxDelayMs, limits.baseDelayMs * 2 ** steps);
}

/** The state as it stands at `nowMs` (forgotten after `forgetAfterMs` without a failure). */
export function currentState(state: ThrottleState | undefined, nowMs: number, limits: ThrottleLimits): ThrottleState {
  if (state === undefined || nowMs - state.lastFailureMs > limits.forgetAfterMs) return { failures: 0, nextAtMs: 0, lastFailureMs: nowMs };
  return state;
}

/** Whether `kind`'s key refuses a caller more than the maximal delay away (the caller's own keys). */
const refusable = (kind: KeyKind): boolean => kind !== 'user';

/**
 * Takes `kind`'s next slot: the wait from `nowMs`, or undefined when a pair or an address would
 * wait more than the maximal delay (refused; the state is left unchanged).
 */
export function reserveSlot(state: ThrottleState, kind: KeyKind, nowMs: number, limits: ThrottleLimits): number | undefined {
  const delay = throttleDelayMs(state.failures, limits, kind);
  if (delay === 0) return 0;
  const slot = Math.max(nowMs, state.nextAtMs);
  const wait = slot - nowMs;
  if (refusable(kind) && wait > limits.maxDelayMs) return undefined;
  // A user's line never grows beyond one maximal delay ahead: every caller waits at most that.
  state.nextAtMs = refusable(kind) ? slot + delay : Math.min(slot + delay, nowMs + limits.maxDelayMs);
  return Math.min(wait, limits.maxDelayMs);
}

/** One more failure: the next check waits at least the new delay from now. */
export function recordFailure(state: ThrottleState, kind: KeyKind, nowMs: number, limits: ThrottleLimits): void {
  state.failures = Math.min(MAX_COUNTED_FAILURES, state.failures + 1);
  state.lastFailureMs = nowMs;
  state.nextAtMs = Math.max(state.nextAtMs, nowMs + throttleDelayMs(state.failures, limits, kind));
}

/** Where throttle state lives: this process (in-process tier) or Redis (BullMQ tier). */
export interface ThrottleStore {
  /** Reserves the caller's slot on both keys (both or neither). Rejects when the store is unreachable. */
  reserve(key: CallerKey): Promise<Reservation>;
  /** A failed check (wrong password, unknown user). */
  failure(key: CallerKey): Promise<void>;
  /** A successful check: the user's and the pair's throttle are reset (the address's decays on its own). */
  success(key: CallerKey): Promise<void>;
}

/**
 * Throttle state in this process, bounded: at most `maxTrackedKeys` keys per kind, the least
 * recently failed forgotten first (a map iterates in insertion order; a failure re-inserts).
 */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly states: Record<KeyKind, Map<string, ThrottleState>> = { user: new Map(), address: new Map(), pair: new Map() };

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly maxTrackedKeys: number,
    private readonly nowMs: () => number,
  ) {
    checkThrottleLimits(limits);
    if (!Number.isSafeInteger(maxTrackedKeys) || maxTrackedKeys < 1) throw new TypeError('MemoryThrottleStore: maxTrackedKeys must be a positive integer');
  }

  /** Keys tracked now, per kind. */
  get tracked(): Readonly<Record<KeyKind, number>> {
    return { user: this.states.user.size, address: this.states.address.size, pair: this.states.pair.size };
  }

  async reserve(key: CallerKey): Promise<Reservation> {
    const now = this.nowMs();
    const states = KEY_KINDS.map((kind) => ({ kind, name: keyName(kind, key), state: currentState(this.states[kind].get(keyName(kind, key)), now, this.limits) }));
    const before = states.map(({ state }) => ({ ...state }));
    let waitMs = 0;
    const throttledBy: KeyKind[] = [];
    for (const { kind, state } of states) {
      const wait = reserveSlot(state, kind, now, this.limits);
      if (wait === undefined) {
        // Both or neither: slots already taken on the other keys are given back.
        states.forEach(({ state: taken }, i) => Object.assign(taken, before[i]));
        return { kind: 'refused', by: kind };
      }
      if (wait > 0) throttledBy.push(kind);
      waitMs = Math.max(waitMs, wait);
    }
    for (const { kind, name, state } of states) this.keep(kind, name, state);
    return { kind: 'wait', waitMs, throttledBy };
  }

  async failure(key: CallerKey): Promise<void> {
    const now = this.nowMs();
    for (const kind of KEY_KINDS) {
      const name = keyName(kind, key);
      const state = currentState(this.states[kind].get(name), now, this.limits);
      recordFailure(state, kind, now, this.limits);
      this.states[kind].delete(name);
      this.states[kind].set(name, state);
      this.evict(kind);
    }
  }

  async success(key: CallerKey): Promise<void> {
    this.states.user.delete(key.user);
    this.states.pair.delete(keyName('pair', key));
  }

  /** Keeps a key that has a state worth remembering (a clean key is not stored). */
  private keep(kind: KeyKind, name: string, state: ThrottleState): void {
    if (state.failures === 0) this.states[kind].delete(name);
    else if (!this.states[kind].has(name)) {
      this.states[kind].set(name, state);
      this.evict(kind);
    }
  }

  private evict(kind: KeyKind): void {
    const map = this.states[kind];
    while (map.size > this.maxTrackedKeys) map.delete(map.keys().next().value as string);
  }
}
