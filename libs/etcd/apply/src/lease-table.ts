import type { LeaseId, LeaseLookup } from '@ward/etcd/kv-store';
import { ApplyError } from './errors';

/** etcd's lease.MaxLeaseTTL: 9,000,000,000 seconds. */
export const MAX_LEASE_TTL_SECONDS = 9_000_000_000;

/**
 * The granted leases and their requested TTLs: the replicated part of etcd's lessor. Expiry is
 * time, which a deterministic state machine does not see: the leader's lessor proposes a
 * LeaseRevoke (as the internal root identity) when a lease runs out, as etcd does.
 */
export class LeaseTable implements LeaseLookup {
  private readonly ttlById = new Map<LeaseId, number>();
  readonly maxLeases: number;

  constructor(maxLeases: number) {
    if (!Number.isSafeInteger(maxLeases) || maxLeases < 1) throw new TypeError('maxLeases must be a positive integer');
    this.maxLeases = maxLeases;
  }

  leaseExists(lease: LeaseId): boolean {
    return this.ttlById.has(lease);
  }

  /** The TTL the lease was granted with, or undefined for an unknown lease. */
  ttlOf(lease: LeaseId): number | undefined {
    return this.ttlById.get(lease);
  }

  get size(): number {
    return this.ttlById.size;
  }

  /** etcd's lessor.Grant: a new non-zero ID, a TTL within etcd's maximum. */
  grant(id: LeaseId, ttlSeconds: number): void {
    // etcd's lessor.Grant refuses ID 0 ("no lease") with ErrLeaseNotFound; the gateway assigns IDs.
    if (id === 0n) throw new ApplyError('ERR_APPLY_LEASE_NOT_FOUND', 'requested lease not found', { lease: id });
    if (ttlSeconds > MAX_LEASE_TTL_SECONDS) {
      throw new ApplyError('ERR_APPLY_LEASE_TTL_TOO_LARGE', 'too large lease TTL', { lease: id });
    }
    if (this.ttlById.has(id)) throw new ApplyError('ERR_APPLY_LEASE_EXIST', 'lease already exists', { lease: id });
    if (this.ttlById.size >= this.maxLeases) throw new ApplyError('ERR_APPLY_LEASE_LIMIT', 'lease table is full', { lease: id });
    this.ttlById.set(id, ttlSeconds);
  }

  /** Forgets a lease (its keys are the key space's to delete). */
  revoke(id: LeaseId): void {
    if (!this.ttlById.delete(id)) throw new ApplyError('ERR_APPLY_LEASE_NOT_FOUND', 'requested lease not found', { lease: id });
  }

  /** The lease IDs in no particular order (for a check over all of them: no sort). */
  ids(): IterableIterator<LeaseId> {
    return this.ttlById.keys();
  }

  /** The leases in ascending ID order, for the snapshot and LeaseLeases. */
  entries(): Array<readonly [LeaseId, number]> {
    return [...this.ttlById.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}
