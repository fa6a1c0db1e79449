import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import type { LeaseId } from './types';
import { NO_LEASE } from './types';

/**
 * Which keys are attached to which lease (etcd's lessor `itemSet`, kept here so that lease
 * revocation and the apply layer's lease permission checks find every attached key).
 * Derived state: rebuilt from the live records on restore, never serialized.
 */
export class LeaseIndex {
  private readonly keysByLease = new Map<LeaseId, Set<ByteString>>();

  attach(lease: LeaseId, key: ByteString): void {
    assert(lease !== NO_LEASE, 'lease-index: attach without a lease');
    let keys = this.keysByLease.get(lease);
    if (keys === undefined) {
      keys = new Set();
      this.keysByLease.set(lease, keys);
    }
    keys.add(key);
  }

  detach(lease: LeaseId, key: ByteString): void {
    assert(lease !== NO_LEASE, 'lease-index: detach without a lease');
    const keys = this.keysByLease.get(lease);
    assert(keys !== undefined && keys.has(key), 'lease-index: detaching a key that is not attached');
    keys.delete(key);
    if (keys.size === 0) this.keysByLease.delete(lease);
  }

  /** The keys attached to `lease`, in ascending key order (etcd's revoke order). */
  keysOf(lease: LeaseId): ByteString[] {
    const keys = this.keysByLease.get(lease);
    if (keys === undefined) return [];
    return [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Visits the keys attached to `lease` in an unspecified order (no sorting, no copy) until
   * `visit` returns false. Only for order-independent questions, such as "may this user write
   * every one of them": the order differs between a replica and its restored copy.
   */
  forEachKeyOf(lease: LeaseId, visit: (key: ByteString) => boolean | void): void {
    const keys = this.keysByLease.get(lease);
    if (keys === undefined) return;
    for (const key of keys) if (visit(key) === false) return;
  }

  /** Number of keys attached to `lease`. */
  countOf(lease: LeaseId): number {
    return this.keysByLease.get(lease)?.size ?? 0;
  }

  /** Number of leases with at least one key. */
  get leaseCount(): number {
    return this.keysByLease.size;
  }
}
