// etcd's backend quota (--quota-backend-bytes), checked where etcd checks it: by the member a
// request reaches, before it is proposed. A Put, Txn or LeaseGrant whose cost would take the store
// to the quota is refused with `etcdserver: mvcc: database space exceeded`; deletes and
// compaction are never refused, and free space at once (the measure is the retained records, see
// KVStore.retainedBytes). Proposals still on their way to apply count too, so a burst of writes
// cannot overshoot the quota; only a proposal whose caller timed out before it applied stops
// being counted early (it may still apply).
//
// Whatever the quota (none too), a write is refused the same way when the store could then no
// longer be snapshotted: when the bound of its snapshot (KVStore.snapshotBoundBytes), the pending
// proposals and this one would reach SNAPSHOT_CEILING_BYTES. A state past MAX_SNAPSHOT_BYTES could
// not be snapshotted (nor sent to a follower), and its log would grow for ever.

import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';

/** etcd's default quota (DefaultQuotaBytes). */
export const DEFAULT_QUOTA_BYTES = 2 * 1024 ** 3;
/** The default never exceeds this share of the V8 heap limit: the store lives in the heap. */
export const DEFAULT_QUOTA_HEAP_SHARE = 0.25;

/** Left below the largest snapshot for the state the key space's bound does not cover (auth store, leases, tokens, membership). */
export const SNAPSHOT_HEADROOM_BYTES = 128 * 1024 ** 2;

/** The key space's snapshot bound no write may take the store to. */
export const SNAPSHOT_CEILING_BYTES = MAX_SNAPSHOT_BYTES - SNAPSHOT_HEADROOM_BYTES;

/**
 * The quota in force: `configured` > 0 as given, -1 none, 0 the default (etcd's 2 GiB, or a
 * quarter of the heap limit when that is smaller).
 */
export function effectiveQuotaBytes(configured: number, heapLimitBytes: number): number | undefined {
  if (configured < 0) return undefined;
  if (configured > 0) return configured;
  return Math.min(DEFAULT_QUOTA_BYTES, Math.floor(heapLimitBytes * DEFAULT_QUOTA_HEAP_SHARE));
}

/** What the quota reads from the store, now. */
export interface StoreSize {
  /** The retained records as the quota counts them (key + value + 256 each). */
  readonly retainedBytes: number;
  /** An upper bound of the key space's snapshot (key + value + 64 each). */
  readonly snapshotBoundBytes: number;
}

export class BackendQuota {
  private pendingBytes = 0;

  /** `limitBytes` undefined: no quota. `store` gives the store as it is now (read at every reserve). */
  constructor(
    readonly limitBytes: number | undefined,
    private readonly store: () => StoreSize,
    private readonly snapshotCeilingBytes = SNAPSHOT_CEILING_BYTES,
  ) {
    if (limitBytes !== undefined && (!Number.isSafeInteger(limitBytes) || limitBytes < 1)) throw new TypeError(`BackendQuota: the limit must be a positive integer, got ${limitBytes}`);
    if (!Number.isSafeInteger(snapshotCeilingBytes) || snapshotCeilingBytes < 1) throw new TypeError(`BackendQuota: the snapshot ceiling must be a positive integer, got ${snapshotCeilingBytes}`);
  }

  /** Bytes reserved by proposals not applied yet. */
  get pending(): number {
    return this.pendingBytes;
  }

  /**
   * Reserves `costBytes` for a proposal; false when the store, the pending proposals and this one
   * would reach the quota (etcd admits a request while size + cost < quota), or the snapshot
   * ceiling (the cost, as the quota counts it, is more than the proposal adds to a snapshot).
   */
  reserve(costBytes: number): boolean {
    const store = this.store();
    const after = this.pendingBytes + costBytes;
    if (this.limitBytes !== undefined && store.retainedBytes + after >= this.limitBytes) return false;
    if (store.snapshotBoundBytes + after >= this.snapshotCeilingBytes) return false;
    this.pendingBytes += costBytes;
    return true;
  }

  /** The proposal holding `costBytes` settled (applied, refused, timed out or never sent). */
  release(costBytes: number): void {
    this.pendingBytes = Math.max(0, this.pendingBytes - costBytes);
  }
}
