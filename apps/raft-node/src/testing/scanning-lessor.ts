// Test and benchmark support: the lessor as it was before its heaps (the reference its replacement
// is checked and measured against), and a lease table kept in a Map.
import type { LeaseTableView, LessorOptions, RenewOutcome } from '../lessor';

/**
 * The reference: the lessor as it was before the heaps, scanning every tracked lease and sorting
 * the due ones on each expired() call.
 */
export class ScanningLessor {
  private readonly tracked = new Map<bigint, { deadlineMs: number; proposedAtMs: number }>();
  private primary = false;
  private revokeWindowStartMs = Number.NEGATIVE_INFINITY;
  private revokesInWindow = 0;

  constructor(
    private readonly options: LessorOptions,
    private readonly table: () => LeaseTableView,
  ) {}

  get isPrimary(): boolean {
    return this.primary;
  }

  get trackedCount(): number {
    return this.tracked.size;
  }

  promote(nowMs: number): void {
    this.primary = true;
    this.tracked.clear();
    for (const [id, ttlSeconds] of this.table().entries()) {
      this.tracked.set(id, { deadlineMs: nowMs + this.options.promoteExtendMs + ttlSeconds * 1000, proposedAtMs: Number.NEGATIVE_INFINITY });
    }
  }

  demote(): void {
    this.primary = false;
    this.tracked.clear();
  }

  granted(id: bigint, ttlSeconds: number, nowMs: number): void {
    if (!this.primary) return;
    this.tracked.set(id, { deadlineMs: nowMs + ttlSeconds * 1000, proposedAtMs: Number.NEGATIVE_INFINITY });
  }

  revoked(id: bigint): void {
    this.tracked.delete(id);
  }

  resync(nowMs: number): void {
    if (this.primary) this.promote(nowMs);
  }

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

  remainingMs(id: bigint, nowMs: number): number | undefined {
    if (!this.primary) return undefined;
    const ttlSeconds = this.table().ttlOf(id);
    if (ttlSeconds === undefined) return undefined;
    return this.trackedOf(id, ttlSeconds, nowMs).deadlineMs - nowMs;
  }

  expired(nowMs: number): bigint[] {
    if (!this.primary) return [];
    if (nowMs - this.revokeWindowStartMs >= 1000) {
      this.revokeWindowStartMs = nowMs;
      this.revokesInWindow = 0;
    }
    const room = this.options.maxRevokesPerSecond - this.revokesInWindow;
    if (room <= 0) return [];
    const table = this.table();
    const due: Array<[bigint, { deadlineMs: number; proposedAtMs: number }]> = [];
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

  private trackedOf(id: bigint, ttlSeconds: number, nowMs: number): { deadlineMs: number; proposedAtMs: number } {
    let tracked = this.tracked.get(id);
    if (tracked === undefined) {
      tracked = { deadlineMs: nowMs + ttlSeconds * 1000, proposedAtMs: Number.NEGATIVE_INFINITY };
      this.tracked.set(id, tracked);
    }
    return tracked;
  }
}

/** A replicated lease table stand-in: id → granted TTL. */
export class LeaseTable implements LeaseTableView {
  readonly ttl = new Map<bigint, number>();
  ttlOf(id: bigint): number | undefined {
    return this.ttl.get(id);
  }
  entries(): Array<[bigint, number]> {
    return [...this.ttl.entries()];
  }
}
