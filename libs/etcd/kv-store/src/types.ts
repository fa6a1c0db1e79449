// The public request and response shapes of the key space. They mirror etcd's v3 KV messages
// (api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto) field for field, in camelCase, with domain
// types: keys and values are Uint8Array, revisions are safe integers (`number`), lease IDs are
// exact int64 values (`bigint`). The proto <-> domain translation lives at the gRPC edge.

/** A lease ID: etcd's int64, exact. `0n` means "no lease". */
export type LeaseId = bigint;

/** The lease value meaning "no lease" (etcd's `lease.NoLease`). */
export const NO_LEASE: LeaseId = 0n;

/** One version of a key (etcd's `mvccpb.KeyValue`). */
export interface KeyValue {
  readonly key: Uint8Array;
  /** The revision of the put that created the key's current life (generation). */
  readonly createRevision: number;
  /** The revision of the last put of the key. */
  readonly modRevision: number;
  /** Number of puts since creation: 1 right after creation; a delete resets it. */
  readonly version: number;
  readonly value: Uint8Array;
  /** The lease the key is attached to, `0n` when none. */
  readonly lease: LeaseId;
}

export type SortOrder = 'NONE' | 'ASCEND' | 'DESCEND';
export type SortTarget = 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';

/**
 * etcd's RangeRequest. Key range meanings (etcd-auth spec §3.1):
 * - `rangeEnd` absent or empty: the single key `key`;
 * - `rangeEnd` = `[0x00]`: every key >= `key` (from-key; with `key` = `[0x00]`, every key);
 * - otherwise the half-open interval `[key, rangeEnd)` (empty when `rangeEnd <= key`).
 */
export interface RangeRequest {
  readonly key: Uint8Array;
  readonly rangeEnd?: Uint8Array;
  /** Maximum number of keys returned; 0 or negative means no limit. */
  readonly limit?: number;
  /** Read at this revision; 0 or negative means the current revision. */
  readonly revision?: number;
  readonly sortOrder?: SortOrder;
  readonly sortTarget?: SortTarget;
  /** Linearizability hint for the serving layer; the key space ignores it. */
  readonly serializable?: boolean;
  readonly keysOnly?: boolean;
  readonly countOnly?: boolean;
  /** Filters on the returned keys (0 = no filter). They do not change `count`. */
  readonly minModRevision?: number;
  readonly maxModRevision?: number;
  readonly minCreateRevision?: number;
  readonly maxCreateRevision?: number;
}

export interface RangeResponse {
  /** Header revision: the store's current revision (also for historical reads). */
  readonly revision: number;
  readonly kvs: KeyValue[];
  /** True when `limit` cut the result short. */
  readonly more: boolean;
  /** Number of keys in the range at the read revision, before limit and revision filters. */
  readonly count: number;
}

export interface PutRequest {
  readonly key: Uint8Array;
  readonly value?: Uint8Array;
  readonly lease?: LeaseId;
  readonly prevKv?: boolean;
  /** Keep the current value; `value` must then be empty (else `value is provided`). */
  readonly ignoreValue?: boolean;
  /** Keep the current lease; `lease` must then be 0 (else `lease is provided`). */
  readonly ignoreLease?: boolean;
}

export interface PutResponse {
  readonly revision: number;
  /** The previous version, when `prevKv` was asked for and the key existed. */
  readonly prevKv?: KeyValue;
}

export interface DeleteRangeRequest {
  readonly key: Uint8Array;
  /** Same meanings as RangeRequest.rangeEnd. */
  readonly rangeEnd?: Uint8Array;
  readonly prevKv?: boolean;
}

export interface DeleteRangeResponse {
  readonly revision: number;
  readonly deleted: number;
  /** The deleted versions in key order, when `prevKv` was asked for (else empty). */
  readonly prevKvs: KeyValue[];
}

export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
export type CompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';

interface CompareBase {
  readonly result: CompareResult;
  readonly key: Uint8Array;
  /** Same meanings as RangeRequest.rangeEnd: every key of the range must satisfy the compare. */
  readonly rangeEnd?: Uint8Array;
}

/**
 * etcd's Compare. The target and its operand travel together (etcd's `target_union`), so a
 * compare cannot name one target and carry another's operand.
 */
export type Compare =
  | (CompareBase & { readonly target: 'VERSION'; readonly version: number })
  | (CompareBase & { readonly target: 'CREATE'; readonly createRevision: number })
  | (CompareBase & { readonly target: 'MOD'; readonly modRevision: number })
  | (CompareBase & { readonly target: 'VALUE'; readonly value: Uint8Array })
  | (CompareBase & { readonly target: 'LEASE'; readonly lease: LeaseId });

/** One operation of a Txn branch (etcd's RequestOp). */
export type RequestOp =
  | { readonly type: 'range'; readonly request: RangeRequest }
  | { readonly type: 'put'; readonly request: PutRequest }
  | { readonly type: 'deleteRange'; readonly request: DeleteRangeRequest }
  | { readonly type: 'txn'; readonly request: TxnRequest };

export interface TxnRequest {
  readonly compare: readonly Compare[];
  readonly success: readonly RequestOp[];
  readonly failure: readonly RequestOp[];
}

/** One response of the executed Txn branch, in request order (etcd's ResponseOp). */
export type ResponseOp =
  | { readonly type: 'range'; readonly response: RangeResponse }
  | { readonly type: 'put'; readonly response: PutResponse }
  | { readonly type: 'deleteRange'; readonly response: DeleteRangeResponse }
  | { readonly type: 'txn'; readonly response: TxnResponse };

export interface TxnResponse {
  /**
   * Header revision. For the top-level txn: the store revision after the txn. For a nested txn
   * etcd leaves the header empty, so this is 0 there.
   */
  readonly revision: number;
  readonly succeeded: boolean;
  readonly responses: ResponseOp[];
}

export interface CompactResponse {
  /** Header revision: the store's current revision. */
  readonly revision: number;
}

export type EventType = 'PUT' | 'DELETE';

/**
 * A change, as Watch reports it (etcd's mvccpb.Event). For DELETE, `kv` carries only the key and
 * `modRevision` = the deleting revision (other fields zero, value empty), as etcd sends it.
 */
export interface WatchEvent {
  readonly type: EventType;
  readonly kv: KeyValue;
  /** The version before this change, when asked for and still readable (etcd's rules). */
  readonly prevKv?: KeyValue;
  /** The main revision of the change (= kv.modRevision). */
  readonly revision: number;
  /** The change's position within its revision (etcd's sub-revision), from 0. */
  readonly subRevision: number;
}

export interface ReadEventsRequest {
  /** First revision to return; must be >= `KVStore.oldestEventRevision`. */
  readonly fromRevision: number;
  /** Key filter with RangeRequest.rangeEnd meanings; `[0x00]` + `[0x00]` = every key. */
  readonly key: Uint8Array;
  readonly rangeEnd?: Uint8Array;
  readonly prevKv?: boolean;
  /**
   * Stop after the revision during which this many events were collected (whole revisions only,
   * so a watcher never sees half a transaction).
   */
  readonly maxEvents: number;
}

export interface ReadEventsResponse {
  readonly events: WatchEvent[];
  /** Where the next read continues: one past the last revision scanned. */
  readonly nextRevision: number;
}

/** The lessor's view the key space needs: whether a lease ID is currently granted. */
export interface LeaseLookup {
  leaseExists(lease: LeaseId): boolean;
}

/** Limits and collaborators of a key space. Every field is passed explicitly. */
export interface KVStoreOptions {
  /** etcd's --max-txn-ops: most compares / success ops / failure ops in one txn (etcd: 128). */
  readonly maxTxnOps: number;
  /**
   * Most request operations in one txn counting every nesting level. etcd bounds this only by
   * the request size; nesting can otherwise multiply it (128 x 127 x ...).
   */
  readonly maxTxnOpsTotal: number;
  /** Most events kept for Watch; older whole revisions are dropped first. */
  readonly eventHistoryMaxEvents: number;
  readonly leases: LeaseLookup;
  /**
   * The key-space image format snapshots are written in (default KEY_SPACE_FORMAT_LATEST); every
   * format is read. 1 during a rolling upgrade from a version that reads format 1 only.
   */
  readonly snapshotFormat?: KeySpaceFormat;
}

/**
 * Formats of the key-space image (snapshot.ts): 1 ends with CRC-32C and FNV-1a of the image; 2 with
 * CRC-32C and a reserved zero word (the FNV-1a cost a snapshot more than the rest of its checking).
 */
export type KeySpaceFormat = 1 | 2;
/** The format written unless KVStoreOptions.snapshotFormat says otherwise. */
export const KEY_SPACE_FORMAT_LATEST: KeySpaceFormat = 2;

/** etcd's default --max-txn-ops. */
export const DEFAULT_MAX_TXN_OPS = 128;
/** Default for KVStoreOptions.maxTxnOpsTotal. */
export const DEFAULT_MAX_TXN_OPS_TOTAL = 10_000;
/** Default for KVStoreOptions.eventHistoryMaxEvents. */
export const DEFAULT_EVENT_HISTORY_MAX_EVENTS = 200_000;

/** A LeaseLookup that accepts every lease ID (until a lessor exists; tests and benchmarks). */
export const ANY_LEASE_EXISTS: LeaseLookup = Object.freeze({ leaseExists: () => true });
