// Proposals waiting for their entry to be applied, keyed by request id.
import type { ApplyResult } from '@ward/etcd/apply';

/** How a proposal ended for its caller. */
export type ProposalOutcome =
  | { readonly kind: 'applied'; readonly result: ApplyResult }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'stopped' };

interface Pending {
  readonly resolve: (outcome: ProposalOutcome) => void;
  readonly timer: NodeJS.Timeout;
}

export class ProposalWaiters {
  private readonly pending = new Map<bigint, Pending>();
  private closed = false;

  constructor(private readonly maxPending: number) {
    if (!Number.isSafeInteger(maxPending) || maxPending < 1) throw new TypeError('ProposalWaiters: maxPending must be a positive integer');
  }

  get size(): number {
    return this.pending.size;
  }

  hasRoom(): boolean {
    return !this.closed && this.pending.size < this.maxPending;
  }

  /** Registers request `id`; the promise settles on apply, at the deadline, or at stop. */
  register(id: bigint, timeoutMs: number): Promise<ProposalOutcome> {
    if (this.pending.has(id)) throw new TypeError(`proposal ${id} is already pending`);
    if (this.closed) return Promise.resolve({ kind: 'stopped' });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ kind: 'timeout' });
      }, timeoutMs);
      this.pending.set(id, { resolve, timer });
    });
  }

  /** Withdraws a registration whose proposal never reached the log. */
  cancel(id: bigint): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.pending.delete(id);
  }

  /** The entry of request `id` was applied (on this member, which proposed it). */
  applied(id: bigint, result: ApplyResult): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.pending.delete(id);
    entry.resolve({ kind: 'applied', result });
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
