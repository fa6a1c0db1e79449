// The time-driven half of etcd's lessor. The lease table (ids and granted TTLs) is replicated by
// the state machine; deadlines are not: only the leader tracks them, on its monotonic clock. On
// becoming leader every lease gets a full TTL plus the election timeout (etcd's Promote), since a
// new leader cannot know when the old one last renewed it; followers track nothing and never
// expire a lease. The leader renews leases on keep-alive and, at a bounded rate, hands out the
// expired ones for a LeaseRevoke proposal (as the internal root identity), proposing again after a
// pause if the revoke did not apply.
//
// Finding the expired leases costs what they cost, not a pass over every tracked lease (up to a
// million, twice a second): leases wait in a min-heap by deadline, and a lease whose revoke was
// proposed waits in a second one by proposal time until its pause is over. A renewal does not
// move an entry inside a heap: it pushes a new one and the old one goes stale (dropped when it
// reaches the top); the heaps are rebuilt from the tracked leases once stale entries outnumber
// live ones two to one, so keep-alive traffic cannot grow them without bound.
import { MinHeap } from '@ward/shared/heap';

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

/** One lease's deadline. A renewal replaces the record; the replaced one is stale in its heap. */
interface Tracked {
  readonly id: bigint;
  /** Order in which the lease came to be tracked: among equal deadlines, the earlier one goes first. */
  readonly seq: number;
  readonly deadlineMs: number;
  /** When its revoke was last proposed (−∞: never). */
  proposedAtMs: number;
  /** Proposed and not yet past the reproposal pause: it waits in the proposal heap, not the deadline heap. */
  paused: boolean;
  /** False once replaced or forgotten: its heap entry is stale. */
  current: boolean;
}

const deadlineFirst = (a: Tracked, b: Tracked): boolean => a.deadlineMs < b.deadlineMs || (a.deadlineMs === b.deadlineMs && a.seq < b.seq);
const proposedFirst = (a: Tracked, b: Tracked): boolean => a.proposedAtMs < b.proposedAtMs || (a.proposedAtMs === b.proposedAtMs && a.seq < b.seq);

/** The outcome of a renewal: the granted TTL, or why not. */
export type RenewOutcome = { readonly kind: 'renewed'; readonly ttlSeconds: number } | { readonly kind: 'not_found' } | { readonly kind: 'not_primary' };

/** etcd's minimum lease TTL for an election timeout: ceil((3 * electionTicks / 2) * tick) seconds. */
export function minLeaseTtlSeconds(electionTicks: number, tickMs: number): number {
  return Math.ceil((Math.floor((3 * electionTicks) / 2) * tickMs) / 1000);
}

export class Lessor {
  private readonly tracked = new Map<bigint, Tracked>();
  /** Current records not paused (due once their deadline passes), and stale ones. */
  private byDeadline = new MinHeap<Tracked>(deadlineFirst);
  /** Current records proposed for revocation and still paused, and stale ones. */
  private byProposal = new MinHeap<Tracked>(proposedFirst);
  private nextSeq = 0;
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

  /**
   * Leases with a deadline (0 on followers). A lease that left the table without revoked() being
   * called stays counted until expired() reaches it.
   */
  get trackedCount(): number {
    return this.tracked.size;
  }

  /** Heap entries, stale ones included: at most three times trackedCount. */
  get queuedCount(): number {
    return this.byDeadline.size + this.byProposal.size;
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
      this.track(id, nowMs + this.options.promoteExtendMs + ttlSeconds * 1000, Number.NEGATIVE_INFINITY, false);
    }
    this.rebuild();
  }

  /** This member is no longer leader: it forgets every deadline. */
  demote(): void {
    this.primary = false;
    this.tracked.clear();
    this.rebuild();
  }

  /** A grant was applied: on the leader its deadline starts now. */
  granted(id: bigint, ttlSeconds: number, nowMs: number): void {
    if (!this.primary) return;
    this.enqueue(this.track(id, nowMs + ttlSeconds * 1000, Number.NEGATIVE_INFINITY, false));
  }

  /** A revoke was applied (or the table was replaced): forget leases the table no longer holds. */
  revoked(id: bigint): void {
    this.forget(id);
    this.compact();
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
      this.forget(id);
      this.compact();
      return { kind: 'not_found' };
    }
    const tracked = this.trackedOf(id, ttlSeconds, nowMs);
    if (tracked.deadlineMs <= nowMs) return { kind: 'not_found' };
    this.enqueue(this.track(id, nowMs + ttlSeconds * 1000, tracked.proposedAtMs, tracked.paused));
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
   * Expired leases to revoke now, in deadline order (equal deadlines: the lease tracked first):
   * at most the rate allows in the current one-second window, none proposed within the last
   * `reproposeAfterMs`. Leases gone from the table are forgotten when reached. `nowMs` must not
   * go back between calls (the leader's monotonic clock).
   */
  expired(nowMs: number): bigint[] {
    if (!this.primary) return [];
    if (nowMs - this.revokeWindowStartMs >= 1000) {
      this.revokeWindowStartMs = nowMs;
      this.revokesInWindow = 0;
    }
    const room = this.options.maxRevokesPerSecond - this.revokesInWindow;
    if (room <= 0) return [];
    // Leases whose pause is over wait for their deadline again (it has passed, unless renewed).
    for (let top = this.byProposal.peek(); top !== undefined; top = this.byProposal.peek()) {
      if (top.current && nowMs - top.proposedAtMs < this.options.reproposeAfterMs) break;
      this.byProposal.pop();
      if (!top.current) continue;
      top.paused = false;
      this.byDeadline.push(top);
    }
    const table = this.table();
    const chosen: bigint[] = [];
    for (let top = this.byDeadline.peek(); top !== undefined && chosen.length < room; top = this.byDeadline.peek()) {
      if (top.current && top.deadlineMs > nowMs) break;
      this.byDeadline.pop();
      if (!top.current) continue;
      if (table.ttlOf(top.id) === undefined) {
        this.forget(top.id);
        continue;
      }
      top.proposedAtMs = nowMs;
      top.paused = true;
      this.byProposal.push(top);
      chosen.push(top.id);
    }
    this.revokesInWindow += chosen.length;
    this.compact();
    return chosen;
  }

  /** A lease the table holds but the lessor has not seen applied yet (granted before promotion). */
  private trackedOf(id: bigint, ttlSeconds: number, nowMs: number): Tracked {
    let tracked = this.tracked.get(id);
    if (tracked === undefined) {
      tracked = this.track(id, nowMs + ttlSeconds * 1000, Number.NEGATIVE_INFINITY, false);
      this.enqueue(tracked);
    }
    return tracked;
  }

  /** The lease's new record; a lease tracked already keeps its place among equal deadlines. */
  private track(id: bigint, deadlineMs: number, proposedAtMs: number, paused: boolean): Tracked {
    const previous = this.tracked.get(id);
    if (previous !== undefined) previous.current = false;
    const tracked: Tracked = { id, seq: previous?.seq ?? this.nextSeq++, deadlineMs, proposedAtMs, paused, current: true };
    this.tracked.set(id, tracked);
    return tracked;
  }

  private enqueue(tracked: Tracked): void {
    (tracked.paused ? this.byProposal : this.byDeadline).push(tracked);
    this.compact();
  }

  private forget(id: bigint): void {
    const tracked = this.tracked.get(id);
    if (tracked === undefined) return;
    tracked.current = false;
    this.tracked.delete(id);
  }

  /** Rebuilds the heaps from the tracked leases once stale entries exceed twice the live ones. */
  private compact(): void {
    if (this.queuedCount - this.tracked.size > 2 * this.tracked.size) this.rebuild();
  }

  private rebuild(): void {
    const waiting: Tracked[] = [];
    const paused: Tracked[] = [];
    for (const tracked of this.tracked.values()) (tracked.paused ? paused : waiting).push(tracked);
    this.byDeadline = new MinHeap(deadlineFirst, waiting);
    this.byProposal = new MinHeap(proposedFirst, paused);
  }
}
