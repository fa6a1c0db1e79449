import { describe, expect, it } from 'vitest';
import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';
import { BackendQuota, DEFAULT_QUOTA_BYTES, MAX_QUOTA_BYTES, SNAPSHOT_HEADROOM_BYTES, effectiveQuotaBytes } from './backend-quota';

describe('effectiveQuotaBytes', () => {
  it('takes a positive setting as given, -1 as none, and 0 as etcd 2 GiB capped at a quarter of the heap', () => {
    expect(effectiveQuotaBytes(1000, 4e9)).toBe(1000);
    expect(effectiveQuotaBytes(-1, 4e9)).toBeUndefined();
    expect(effectiveQuotaBytes(0, 6 * 1024 ** 3)).toBe(1.5 * 1024 ** 3);
    expect(effectiveQuotaBytes(0, 4_000_000_000)).toBe(1_000_000_000);
  });

  it('never goes above what a snapshot holds, less the headroom for the state it does not measure', () => {
    expect(MAX_QUOTA_BYTES).toBe(MAX_SNAPSHOT_BYTES - SNAPSHOT_HEADROOM_BYTES);
    expect(effectiveQuotaBytes(8 * 1024 ** 3, 16 * 1024 ** 3)).toBe(MAX_QUOTA_BYTES);
    expect(effectiveQuotaBytes(MAX_QUOTA_BYTES - 1, 16 * 1024 ** 3)).toBe(MAX_QUOTA_BYTES - 1);
    expect(effectiveQuotaBytes(0, 64 * 1024 ** 3)).toBe(Math.min(DEFAULT_QUOTA_BYTES, MAX_QUOTA_BYTES));
  });
});

describe('BackendQuota', () => {
  it('admits while store + pending + cost stays below the limit, and counts proposals until they settle', () => {
    let stored = 600;
    const quota = new BackendQuota(1000, () => stored);
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

  it('admits everything without a limit and refuses a nonsensical one', () => {
    const quota = new BackendQuota(undefined, () => Number.MAX_SAFE_INTEGER);
    expect(quota.reserve(1e9)).toBe(true);
    expect(() => new BackendQuota(0, () => 0)).toThrow(TypeError);
  });
});
