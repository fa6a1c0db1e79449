// Test helpers (not exported from index.ts): short builders for keys, stores and requests.
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { KVStore } from './kv-store';
import type { KVStoreOptions, KeyValue, LeaseId, LeaseLookup } from './types';
import { ANY_LEASE_EXISTS, DEFAULT_MAX_TXN_OPS, DEFAULT_MAX_TXN_OPS_TOTAL } from './types';

/** UTF-8 bytes of a string (keys, values, range ends). */
export const b = (text: string): Uint8Array => utf8(text);

/** The range end etcd reads as "to the end of the key space". */
export const FROM_KEY = new Uint8Array([0]);

export function testOptions(overrides: Partial<KVStoreOptions> = {}): KVStoreOptions {
  return {
    maxTxnOps: DEFAULT_MAX_TXN_OPS,
    maxTxnOpsTotal: DEFAULT_MAX_TXN_OPS_TOTAL,
    eventHistoryMaxEvents: 10_000,
    leases: ANY_LEASE_EXISTS,
    ...overrides,
  };
}

export function newStore(overrides: Partial<KVStoreOptions> = {}): KVStore {
  return KVStore.create(testOptions(overrides));
}

/** A lessor stand-in holding an explicit set of granted leases. */
export class LeaseSet implements LeaseLookup {
  readonly granted = new Set<LeaseId>();
  leaseExists(lease: LeaseId): boolean {
    return this.granted.has(lease);
  }
}

/** Puts each key with value "bar" (or the given value), in order. */
export function putAll(store: KVStore, keys: readonly string[], value = 'bar'): void {
  for (const key of keys) store.put({ key: b(key), value: b(value) });
}

/** The keys of a response as strings. */
export function keysOf(kvs: readonly KeyValue[]): string[] {
  return kvs.map((kv) => fromUtf8(kv.key));
}

/** A KeyValue as plain comparable data (strings for bytes). */
export function plain(kv: KeyValue | undefined): Record<string, unknown> | undefined {
  if (kv === undefined) return undefined;
  return {
    key: fromUtf8(kv.key),
    value: fromUtf8(kv.value),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
    lease: kv.lease,
  };
}

/** A JSON form of responses for equality checks (bigint and bytes spelled out). */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'bigint') return `${item}n`;
    if (item instanceof Uint8Array) return `bytes:${[...item].join(',')}`;
    return item;
  });
}
