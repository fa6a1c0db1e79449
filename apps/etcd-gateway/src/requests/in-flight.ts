// Per-caller bounds on requests in flight through the executor (every KV, lease, auth-management
// and maintenance request that goes to the cluster): a user, or an anonymous client address, holds
// at most its bound at once, and a request beyond it gets etcd's `too many requests` at once instead
// of queueing behind the caller's own. The members' bounds (calls pending per member, proposals and
// reads waiting) stay the last resort, which one caller alone cannot reach.

export interface InFlightLimits {
  /** Requests of one user (the token's or the certificate's) in flight at once. */
  readonly perUser: number;
  /** Requests of one client address in flight at once while anonymous. */
  readonly perAddress: number;
}

export class InFlightBounds {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limits: InFlightLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`InFlightBounds: ${name} must be a positive integer, got ${value}`);
    }
  }

  /**
   * Takes a slot for `username` (or, when it is '', for `address`); the key to give back, or
   * undefined when the caller is at its bound.
   */
  take(username: string, address: string): string | undefined {
    const key = username === '' ? `address:${address}` : `user:${username}`;
    const count = this.counts.get(key) ?? 0;
    if (count >= (username === '' ? this.limits.perAddress : this.limits.perUser)) return undefined;
    this.counts.set(key, count + 1);
    return key;
  }

  give(key: string): void {
    const count = this.counts.get(key) ?? 0;
    if (count <= 1) this.counts.delete(key);
    else this.counts.set(key, count - 1);
  }

  /** Callers with a request in flight (0 when idle: nothing is kept for callers that left). */
  get trackedCallersCount(): number {
    return this.counts.size;
  }
}
