import { describe, expect, it } from 'vitest';
import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';
import { BackendQuota, DEFAULT_QUOTA_BYTES, SNAPSHOT_CEILING_BYTES, SNAPSHOT_HEADROOM_BYTES, effectiveQuotaBytes } from './backend-quota';

describe('effectiveQuotaBytes', () => {
  it('takes a positive setting as given, -1 as none, and 0 as etcd 2 GiB capped at a quarter of the heap', () => {
    expect(effectiveQuotaBytes(1000, 4e9)).toBe(1000);
    expect(effectiveQuotaBytes(8 * 1024 ** 3, 4e9)).toBe(8 * 1024 ** 3);
    expect(effectiveQuotaBytes(-1, 4e9)).toBeUndefined();
    expect(effectiveQuotaBytes(0, 16 * 1024 ** 3)).toBe(DEFAULT_QUOTA_BYTES);
    expect(effectiveQuotaBytes(0, 4_000_000_000)).toBe(1_000_000_000);
  });
});

describe('BackendQuota', () => {
  const sized = (retainedBytes: number, snapshotBoundBytes = 0) => ({ retainedBytes, snapshotBoundBytes });

  it('admits while store + pending + cost stays below the limit, and counts proposals until they settle', () => {
    let stored = 600;
    const quota = new BackendQuota(1000, () => sized(stored));
    expect(quota.reserve(300)).toBe(true); // 600 + 0 + 300 < 1000
    expect(quota.reserve(100)).toBe(false); // 600 + 300 + 100 reaches it
    expect(quota.reserve(0)).toBe(true); // a txn that writes nothing, still below
    quota.release(300);
    stored = 900; // the proposal applied
    expect(quota.pending).toBe(0);
    expect(quota.reserve(99)).toBe(true);
    quota.release(99);
    stored = 1000;
    expect(quota.reserve(0)).toBe(false); // at the quota even an empty txn is refused, as in etcd 3.4
  });

  it('admits everything below the snapshot ceiling without a limit, and refuses a nonsensical one', () => {
    const quota = new BackendQuota(undefined, () => sized(Number.MAX_SAFE_INTEGER));
    expect(quota.reserve(1e9)).toBe(true);
    expect(() => new BackendQuota(0, () => sized(0))).toThrow(TypeError);
  });

  it('refuses, quota or none, a write that would take the snapshot bound to the ceiling', () => {
    expect(SNAPSHOT_CEILING_BYTES).toBe(MAX_SNAPSHOT_BYTES - SNAPSHOT_HEADROOM_BYTES);
    let bound = 700;
    for (const limit of [undefined, 10_000]) {
      const quota = new BackendQuota(limit, () => sized(900, bound), 1000);
      expect(quota.reserve(200)).toBe(true); // 700 + 0 + 200 < 1000
      expect(quota.reserve(100)).toBe(false); // 700 + 200 + 100 reaches it
      quota.release(200);
      bound = 999;
      expect(quota.reserve(0)).toBe(true);
      bound = 1000;
      expect(quota.reserve(0)).toBe(false);
      bound = 700;
    }
    // The default ceiling (a 4 GiB snapshot bound): a store of 256-byte values reaches it near
    // 12.4 million keys (not 6 as with a 2 GiB bound, nor 3.8 as before the quota counted it).
    const quota = new BackendQuota(8 * 1024 ** 3, () => sized(12_000_000 * 527, 12_000_000 * 335));
    expect(quota.reserve(527)).toBe(true);
    const full = new BackendQuota(8 * 1024 ** 3, () => sized(12_500_000 * 527, 12_500_000 * 335));
    expect(full.reserve(527)).toBe(false);
  });
});
