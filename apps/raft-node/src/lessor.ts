// The time-driven half of etcd's lessor. The lease table (ids and granted TTLs) is replicated by
// the state machine; deadlines are not: only the leader tracks them, on its monotonic clock. On
// becoming leader every lease gets a full TTL plus the election timeout (etcd's Promote), since a
// new leader cannot know when the old one last renewed it; followers track nothing and never
// expire a lease. The leader renews leases on keep-alive and, at a bounded rate, hands out the
// expired ones for a LeaseRevoke proposal (as the internal root identity), proposing again after a
// pause if the revoke did not apply.

/** The replicated lease table, as the lessor reads it. */
export interface LeaseTableView {
  ttlOf(id: bigint): number | undefined;
  entries(): ReadonlyArray<readonly [bigint, number]>;
}

export interface LessorOptions {
  /** etcd's minimum lease TTL; shorter TTLs are raised to it when granted. */
  readonly minTtlSeconds: number;
  /** Added to every deadline on promotion (etcd extends by the election timeout). */
  readonly promoteExtendMs: number;
  /** Leases handed out for revocation per second at most (etcd's leaseRevokeRate, 1000). */
  readonly maxRevokesPerSecond: number;
  /** A lease whose revoke was proposed but did not apply is proposed again after this long. */
  readonly reproposeAfterMs: number;
}

interface Tracked {
  deadlineMs: number;
  proposedAtMs: number;
}

/** The outcome of a renewal: the granted TTL, or why not. */
export type RenewOutcome = { readonly kind: 'renewed'; readonly ttlSeconds: number } | { readonly kind: 'not_found' } | { readonly kind: 'not_primary' };

/** etcd's minimum lease TTL for an election timeout: ceil((3 * electionTicks / 2) * tick) seconds. */
export function minLeaseTtlSeconds(electionTicks: number, tickMs: number): number {
  return Math.ceil((Math.floor((3 * electionTicks) / 2) * tickMs) / 1000);
}

export class Lessor {
  private readonly tracked = new Map<bigint, Tracked>();
  private primary = false;
  private revokeWindowStartMs = Number.NEGATIVE_INFINITY;
  private revokesInWindow = 0;

  constructor(
    private readonly options: LessorOptions,
    private readonly table: () => LeaseTableView,
  ) {
    if (!Number.isSafeInteger(options.minTtlSeconds) || options.minTtlSeconds < 1) throw new TypeError('Lessor: minTtlSeconds must be a positive integer');
    if (!Number.isSafeInteger(options.maxRevokesPerSecond) || options.maxRevokesPerSecond < 1) throw new TypeError('Lessor: maxRevokesPerSecond must be a positive integer');
  }

  get isPrimary(): boolean {
    return this.primary;
  }

  /** Leases with a deadline (0 on followers). */
  get trackedCount(): number {
    return this.tracked.size;
  }

  /** The TTL a grant is applied with: etcd raises anything below the minimum to it. */
  grantTtl(requestedSeconds: number): number {
    return Math.max(requestedSeconds, this.options.minTtlSeconds);
  }

  /** This member became leader: every lease in the table gets now + TTL + the promotion extension. */
  promote(nowMs: number): void {
    this.primary = true;
    this.tracked.clear();
    for (const [id, ttlSeconds] of this.table().entries()) {
      this.tracked.set(id, { deadlineMs: nowMs + this.options.promoteExtendMs + ttlSeconds * 1000, proposedAtMs: Number.NEGATIVE_INFINITY });
    }
  }

  /** This member is no longer leader: it forgets every deadline. */
  demote(): void {
    this.primary = false;
    this.tracked.clear();
  }

  /** A grant was applied: on the leader its deadline starts now. */
  granted(id: bigint, ttlSeconds: number, nowMs: number): void {
    if (!this.primary) return;
    this.tracked.set(id, { deadlineMs: nowMs + ttlSeconds * 1000, proposedAtMs: Number.NEGATIVE_INFINITY });
  }

  /** A revoke was applied (or the table was replaced): forget leases the table no longer holds. */
  revoked(id: bigint): void {
    this.tracked.delete(id);
  }

  /** The table was replaced by a snapshot: on the leader, deadlines follow the new table. */
  resync(nowMs: number): void {
    if (this.primary) this.promote(nowMs);
  }

  /** etcd's Renew: a live lease's deadline becomes now + its TTL. An expired one is not renewed. */
  renew(id: bigint, nowMs: number): RenewOutcome {
    if (!this.primary) return { kind: 'not_primary' };
    const ttlSeconds = this.table().ttlOf(id);
    if (ttlSeconds === undefined) {
      this.tracked.delete(id);
      return { kind: 'not_found' };
    }
    const tracked = this.trackedOf(id, ttlSeconds, nowMs);
    if (tracked.deadlineMs <= nowMs) return { kind: 'not_found' };
    tracked.deadlineMs = nowMs + ttlSeconds * 1000;
    return { kind: 'renewed', ttlSeconds };
  }

  /** Milliseconds left before the lease expires (≤ 0 once due), undefined when unknown or not primary. */
  remainingMs(id: bigint, nowMs: number): number | undefined {
    if (!this.primary) return undefined;
    const ttlSeconds = this.table().ttlOf(id);
    if (ttlSeconds === undefined) return undefined;
    return this.trackedOf(id, ttlSeconds, nowMs).deadlineMs - nowMs;
  }

  /**
   * Expired leases to revoke now, in deadline order: at most the rate allows in the current
   * one-second window, none proposed within the last `reproposeAfterMs`. Leases gone from the
   * table are forgotten.
   */
  expired(nowMs: number): bigint[] {
    if (!this.primary) return [];
    if (nowMs - this.revokeWindowStartMs >= 1000) {
      this.revokeWindowStartMs = nowMs;
      this.revokesInWindow = 0;
    }
    const room = this.options.maxRevokesPerSecond - this.revokesInWindow;
    if (room <= 0) return [];
    const table = this.table();
    const due: Array<[bigint, Tracked]> = [];
    for (const [id, tracked] of this.tracked) {
      if (tracked.deadlineMs > nowMs) continue;
      if (table.ttlOf(id) === undefined) {
        this.tracked.delete(id);
        continue;
      }
      if (nowMs - tracked.proposedAtMs < this.options.reproposeAfterMs) continue;
      due.push([id, tracked]);
    }
    due.sort(([, a], [, b]) => a.deadlineMs - b.deadlineMs);
    const chosen = due.slice(0, room);
    for (const [, tracked] of chosen) tracked.proposedAtMs = nowMs;
    this.revokesInWindow += chosen.length;
    return chosen.map(([id]) => id);
  }

  /** A lease the table holds but the lessor has not seen applied yet (granted before promotion). */
  private trackedOf(id: bigint, ttlSeconds: number, nowMs: number): Tracked {
    let tracked = this.tracked.get(id);
    if (tracked === undefined) {
      tracked = { deadlineMs: nowMs + ttlSeconds * 1000, proposedAtMs: Number.NEGATIVE_INFINITY };
      this.tracked.set(id, tracked);
    }
    return tracked;
  }
}
