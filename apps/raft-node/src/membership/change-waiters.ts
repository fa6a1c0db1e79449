// Membership changes waiting for their entry to be applied, keyed by request id. At most one
// change is proposed at a time by a member (the Raft core takes one pending change), so the
// bound is small.
import type { AppliedMembershipChange } from '../state-machine';

export type ChangeOutcome = { readonly kind: 'applied'; readonly applied: AppliedMembershipChange } | { readonly kind: 'timeout' } | { readonly kind: 'stopped' };

interface Pending {
  readonly resolve: (outcome: ChangeOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

/** Membership changes a member waits for at once. */
export const MAX_PENDING_MEMBERSHIP_CHANGES = 16;

export class ChangeWaiters {
  private readonly pending = new Map<bigint, Pending>();
  private closed = false;

  get size(): number {
    return this.pending.size;
  }

  register(id: bigint, timeoutMs: number): Promise<ChangeOutcome> {
    if (this.closed) return Promise.resolve({ kind: 'stopped' });
    if (this.pending.has(id) || this.pending.size >= MAX_PENDING_MEMBERSHIP_CHANGES) throw new RangeError('too many membership changes waiting');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ kind: 'timeout' });
      }, timeoutMs);
      this.pending.set(id, { resolve, timer });
    });
  }

  cancel(id: bigint): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.pending.delete(id);
  }

  applied(applied: AppliedMembershipChange): void {
    const entry = this.pending.get(applied.requestId);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.pending.delete(applied.requestId);
    entry.resolve({ kind: 'applied', applied });
  }

  close(): void {
    this.closed = true;
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      entry.resolve({ kind: 'stopped' });
    }
    this.pending.clear();
  }
}
