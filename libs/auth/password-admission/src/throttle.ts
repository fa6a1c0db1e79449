// Failure throttling of password checks, per user and per client address. The rule (the same in
// memory and in Redis's Lua script, redis-stores.ts):
//
// - A key (`user:<name>` or `address:<ip>`) counts failed checks `failures`; it is forgotten
//   `forgetAfterMs` after its last failure, and a successful check resets the user's key.
// - Its delay is 0 for the first `freeFailures` failures, then `baseDelayMs · 2^(failures − free)`,
//   at most `maxDelayMs`.
// - Checks of a key with a delay are spaced by it: each takes the next slot `max(now, nextAt)` and
//   moves `nextAt` one delay further; the caller waits for its slot before its check is queued.
// - An address whose next slot is more than `maxDelayMs` away is refused at once (too many
//   requests): the address is the caller's own, and it keeps at most one delay's worth waiting.
// - A user's wait is capped at `maxDelayMs` and never refused: whoever floods a user's name, the
//   user's own login still goes through after at most one maximal delay (no lock-out).

/** The throttle's limits (config: *_AUTH_THROTTLE_*). */
export interface ThrottleLimits {
  readonly freeFailures: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly forgetAfterMs: number;
}

export const DEFAULT_THROTTLE_LIMITS: ThrottleLimits = Object.freeze({ freeFailures: 5, baseDelayMs: 250, maxDelayMs: 4000, forgetAfterMs: 600_000 });

/** The largest failure count kept (2^64 · base is far above any max delay). */
export const MAX_COUNTED_FAILURES = 64;

export interface ThrottleState {
  failures: number;
  /** Earliest start of the next check (ms, the store's clock). */
  nextAtMs: number;
  /** Last failure (ms); the state is forgotten `forgetAfterMs` after it. */
  lastFailureMs: number;
}

export type KeyKind = 'user' | 'address';

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

/** The spacing between checks of a key with `failures` failed checks. */
export function throttleDelayMs(failures: number, limits: ThrottleLimits): number {
  if (failures < limits.freeFailures) return 0;
  const steps = Math.min(failures - limits.freeFailures, 40);
  return Math.min(limits.maxDelayMs, limits.baseDelayMs * 2 ** steps);
}

/** The state as it stands at `nowMs` (forgotten after `forgetAfterMs` without a failure). */
export function currentState(state: ThrottleState | undefined, nowMs: number, limits: ThrottleLimits): ThrottleState {
  if (state === undefined || nowMs - state.lastFailureMs > limits.forgetAfterMs) return { failures: 0, nextAtMs: 0, lastFailureMs: nowMs };
  return state;
}

/**
 * Takes `kind`'s next slot: the wait from `nowMs`, or undefined when an address would wait more
 * than the maximal delay (refused; the state is left unchanged).
 */
export function reserveSlot(state: ThrottleState, kind: KeyKind, nowMs: number, limits: ThrottleLimits): number | undefined {
  const delay = throttleDelayMs(state.failures, limits);
  if (delay === 0) return 0;
  const slot = Math.max(nowMs, state.nextAtMs);
  const wait = slot - nowMs;
  if (kind === 'address' && wait > limits.maxDelayMs) return undefined;
  // A user's line never grows beyond one maximal delay ahead: every caller waits at most that.
  state.nextAtMs = kind === 'address' ? slot + delay : Math.min(slot + delay, nowMs + limits.maxDelayMs);
  return Math.min(wait, limits.maxDelayMs);
}

/** One more failure: the next check waits at least the new delay from now. */
export function recordFailure(state: ThrottleState, nowMs: number, limits: ThrottleLimits): void {
  state.failures = Math.min(MAX_COUNTED_FAILURES, state.failures + 1);
  state.lastFailureMs = nowMs;
  state.nextAtMs = Math.max(state.nextAtMs, nowMs + throttleDelayMs(state.failures, limits));
}

/** Where throttle state lives: this process (in-process tier) or Redis (BullMQ tier). */
export interface ThrottleStore {
  /** Reserves the caller's slot on both keys (both or neither). Rejects when the store is unreachable. */
  reserve(key: CallerKey): Promise<Reservation>;
  /** A failed check (wrong password, unknown user). */
  failure(key: CallerKey): Promise<void>;
  /** A successful check: the user's throttle is reset (the address's decays on its own). */
  success(key: CallerKey): Promise<void>;
}

/**
 * Throttle state in this process, bounded: at most `maxTrackedKeys` keys per kind, the least
 * recently failed forgotten first (a map iterates in insertion order; a failure re-inserts).
 */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly states: Record<KeyKind, Map<string, ThrottleState>> = { user: new Map(), address: new Map() };

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
    return { user: this.states.user.size, address: this.states.address.size };
  }

  async reserve(key: CallerKey): Promise<Reservation> {
    const now = this.nowMs();
    const address = currentState(this.states.address.get(key.address), now, this.limits);
    const user = currentState(this.states.user.get(key.user), now, this.limits);
    const before = { ...address };
    const addressWait = reserveSlot(address, 'address', now, this.limits);
    if (addressWait === undefined) return { kind: 'refused', by: 'address' };
    const userWait = reserveSlot(user, 'user', now, this.limits);
    if (userWait === undefined) {
      Object.assign(address, before);
      return { kind: 'refused', by: 'user' };
    }
    this.keep('address', key.address, address);
    this.keep('user', key.user, user);
    const throttledBy: KeyKind[] = [];
    if (addressWait > 0) throttledBy.push('address');
    if (userWait > 0) throttledBy.push('user');
    return { kind: 'wait', waitMs: Math.max(addressWait, userWait), throttledBy };
  }

  async failure(key: CallerKey): Promise<void> {
    const now = this.nowMs();
    for (const kind of ['address', 'user'] as const) {
      const name = kind === 'user' ? key.user : key.address;
      const state = currentState(this.states[kind].get(name), now, this.limits);
      recordFailure(state, now, this.limits);
      this.states[kind].delete(name);
      this.states[kind].set(name, state);
      this.evict(kind);
    }
  }

  async success(key: CallerKey): Promise<void> {
    this.states.user.delete(key.user);
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
