// etcd's backend quota (--quota-backend-bytes), checked where etcd checks it: by the member a
// request reaches, before it is proposed. A Put, Txn or LeaseGrant whose cost would take the store
// to the quota is refused with `etcdserver: mvcc: database space exceeded`; deletes and
// compaction are never refused, and free space at once (the measure is the retained records, see
// KVStore.retainedBytes). Proposals still on their way to apply count too, so a burst of writes
// cannot overshoot the quota; only a proposal whose caller timed out before it applied stops
// being counted early (it may still apply).

import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';

/** etcd's default quota (DefaultQuotaBytes). */
export const DEFAULT_QUOTA_BYTES = 2 * 1024 ** 3;
/** The default never exceeds this share of the V8 heap limit: the store lives in the heap. */
export const DEFAULT_QUOTA_HEAP_SHARE = 0.25;

/**
 * What a quota leaves below the largest snapshot for the state it does not measure (the auth
 * store, leases, tokens, membership). The records it measures encode to fewer bytes in a snapshot
 * than it counts for them (key + value + a few varints, against key + value + 256).
 */
export const SNAPSHOT_HEADROOM_BYTES = 128 * 1024 ** 2;

/** The highest quota in force: a store within it always fits a snapshot (MAX_SNAPSHOT_BYTES). */
export const MAX_QUOTA_BYTES = MAX_SNAPSHOT_BYTES - SNAPSHOT_HEADROOM_BYTES;

/**
 * The quota in force: `configured` > 0 as given, -1 none, 0 the default (etcd's 2 GiB, or a
 * quarter of the heap limit when that is smaller); never above MAX_QUOTA_BYTES, so the state a
 * member admits can always be snapshotted (a member with a state it cannot snapshot keeps its whole
 * log, in memory and in its restart's replay).
 */
export function effectiveQuotaBytes(configured: number, heapLimitBytes: number): number | undefined {
  if (configured < 0) return undefined;
  if (configured > 0) return Math.min(configured, MAX_QUOTA_BYTES);
  return Math.min(DEFAULT_QUOTA_BYTES, Math.floor(heapLimitBytes * DEFAULT_QUOTA_HEAP_SHARE), MAX_QUOTA_BYTES);
}

export class BackendQuota {
  private pendingBytes = 0;

  /** `limitBytes` undefined: no quota. `retainedBytes` reads the store's size now. */
  constructor(
    readonly limitBytes: number | undefined,
    private readonly retainedBytes: () => number,
  ) {
    if (limitBytes !== undefined && (!Number.isSafeInteger(limitBytes) || limitBytes < 1)) throw new TypeError(`BackendQuota: the limit must be a positive integer, got ${limitBytes}`);
  }

  /** Bytes reserved by proposals not applied yet. */
  get pending(): number {
    return this.pendingBytes;
  }

  /**
   * Reserves `costBytes` for a proposal; false when the store, the pending proposals and this one
   * would reach the quota (etcd admits a request while size + cost < quota).
   */
  reserve(costBytes: number): boolean {
    if (this.limitBytes === undefined) return true;
    if (this.retainedBytes() + this.pendingBytes + costBytes >= this.limitBytes) return false;
    this.pendingBytes += costBytes;
    return true;
  }

  /** The proposal holding `costBytes` settled (applied, refused, timed out or never sent). */
  release(costBytes: number): void {
    this.pendingBytes = Math.max(0, this.pendingBytes - costBytes);
  }
}
