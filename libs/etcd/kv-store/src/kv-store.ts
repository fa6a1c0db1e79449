import { HashKvTask } from './hash-kv';
import { EMPTY_BYTE_STRING, fromByteString, toByteString } from './byte-string';
import { COMPACTION_DEFAULT_STEP, compactKeySpace, compactionStep, dropsWholeKey, finishCompaction } from './compaction';
import { KVCompactedError } from './errors';
import { KeySpace } from './key-space';
import type { KeyRecord } from './key-record';
import { toKeySpan } from './key-span';
import { executeRange } from './range-read';
import {
  validateDeleteRangeRequest,
  validatePutRequest,
  validateRangeRequest,
  validateTxnRequest,
} from './request-validate';
import { KeySpaceDecoder, KeySpaceSnapshotTask, decodeKeySpace, encodeKeySpace, encodeKeySpaceChunks, hashKeySpace, type KeySpaceDecoding, type SnapshotStreamOptions } from './snapshot';
import { checkPlan, executePlan, planTxn } from './txn';
import type {
  CompactResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  KeySpaceFormat,
  KVStoreOptions,
  LeaseId,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  ReadEventsRequest,
  ReadEventsResponse,
  TxnRequest,
  TxnResponse,
} from './types';
import { KEY_SPACE_FORMAT_LATEST, NO_LEASE } from './types';
import { WriteContext } from './write-context';
import { checkPut, executeDeleteRange, executePut } from './write-ops';

/** A KVStore decoded from snapshot bytes pushed in pieces (KVStore.decoder). */
export interface KVStoreDecoder {
  push(piece: Uint8Array): void;
  finish(): KVStore;
}

/** Upper bounds of the options (a bound on every bound). */
const MAX_TXN_OPS_LIMIT = 1_000_000;
const MAX_EVENT_HISTORY_LIMIT = 100_000_000;

function checkOptions(options: KVStoreOptions): KVStoreOptions {
  const { maxTxnOps, maxTxnOpsTotal, eventHistoryMaxEvents, leases } = options;
  if (!Number.isSafeInteger(maxTxnOps) || maxTxnOps < 1 || maxTxnOps > MAX_TXN_OPS_LIMIT) {
    throw new TypeError(`KVStore: maxTxnOps must be an integer in [1, ${MAX_TXN_OPS_LIMIT}], got ${maxTxnOps}`);
  }
  if (!Number.isSafeInteger(maxTxnOpsTotal) || maxTxnOpsTotal < maxTxnOps || maxTxnOpsTotal > MAX_TXN_OPS_LIMIT) {
    throw new TypeError(`KVStore: maxTxnOpsTotal must be an integer in [maxTxnOps, ${MAX_TXN_OPS_LIMIT}], got ${maxTxnOpsTotal}`);
  }
  if (!Number.isSafeInteger(eventHistoryMaxEvents) || eventHistoryMaxEvents < 1 || eventHistoryMaxEvents > MAX_EVENT_HISTORY_LIMIT) {
    throw new TypeError(`KVStore: eventHistoryMaxEvents must be an integer in [1, ${MAX_EVENT_HISTORY_LIMIT}], got ${eventHistoryMaxEvents}`);
  }
  if (typeof leases?.leaseExists !== 'function') throw new TypeError('KVStore: leases must provide leaseExists(lease)');
  const snapshotFormat = options.snapshotFormat ?? KEY_SPACE_FORMAT_LATEST;
  if (snapshotFormat !== 1 && snapshotFormat !== 2) throw new TypeError(`KVStore: snapshotFormat must be 1 or 2, got ${String(snapshotFormat)}`);
  return Object.freeze({ maxTxnOps, maxTxnOpsTotal, eventHistoryMaxEvents, leases, snapshotFormat });
}

/**
 * etcd's MVCC key space. Every method is synchronous, deterministic and either applies whole or
 * throws a KVError before changing anything (TypeError / AssertionFailure mean a caller bug).
 */
export class KVStore {
  private readonly space: KeySpace;
  readonly options: KVStoreOptions;

  private constructor(space: KeySpace, options: KVStoreOptions) {
    this.space = space;
    this.options = options;
  }

  /** An empty key space at revision 1 (etcd's first change makes revision 2). */
  static create(options: KVStoreOptions): KVStore {
    return new KVStore(KeySpace.empty(), checkOptions(options));
  }

  /**
   * A key space from `snapshot()` bytes: same state, same hash, same behaviour. Malformed bytes
   * raise KVSnapshotInvalidError.
   */
  static restore(snapshot: Uint8Array, options: KVStoreOptions): KVStore {
    return KVStore.ofRestored(decodeKeySpace(snapshot), checkOptions(options));
  }

  /** A store over a decoded key space, its Watch log trimmed to the options' bound. */
  private static ofRestored(space: KeySpace, checked: KVStoreOptions): KVStore {
    space.history.trim(checked.eventHistoryMaxEvents);
    return new KVStore(space, checked);
  }

  /**
   * A key space decoded from `snapshot()` bytes that arrive in pieces (see KeySpaceDecoder): push
   * them in order, then `finish`. Malformed bytes raise KVSnapshotInvalidError. `checksumChecked`:
   * the caller checks a checksum of its own over these bytes before it uses the store (a backup's
   * SHA-256), so the image's CRC-32C is not taken.
   */
  static decoder(totalBytes: number, options: KVStoreOptions, decoding: KeySpaceDecoding = {}): KVStoreDecoder {
    const checked = checkOptions(options);
    const decoder = new KeySpaceDecoder(totalBytes, decoding);
    return { push: (piece) => decoder.push(piece), finish: () => KVStore.ofRestored(decoder.finish(), checked) };
  }

  /** Revision of the last change (1 for an empty store). */
  get currentRevision(): number {
    return this.space.currentRevision;
  }

  /** Revision of the last compaction; -1 before any (etcd's compactMainRev). */
  get compactRevision(): number {
    return this.space.compactRevision;
  }

  /** Smallest revision `readEvents` can start from. */
  get oldestEventRevision(): number {
    return this.space.history.floorRevision;
  }

  /** Number of live keys. */
  get keyCount(): number {
    return this.space.liveKeys;
  }

  /**
   * Bytes the retained records hold, as the backend quota counts them: key + value + 256 per
   * record (current and historical versions and tombstones until compaction drops them).
   */
  get retainedBytes(): number {
    return this.space.digest.retainedBytes;
  }

  /** An upper bound of the bytes the key space's snapshot takes (its head aside), kept in step like `retainedBytes`. */
  get snapshotBoundBytes(): number {
    return this.space.digest.snapshotBoundBytes;
  }

  /** Number of events the Watch log holds. */
  get eventCount(): number {
    return this.space.history.size;
  }

  /** etcd Range (unary: count over the whole range). */
  range(request: RangeRequest): RangeResponse {
    validateRangeRequest(request);
    return executeRange(this.space, request, this.space.currentRevision);
  }

  /** etcd Put. */
  put(request: PutRequest): PutResponse {
    validatePutRequest(request);
    checkPut(this.space, request, this.space.currentRevision, this.options.leases, () => false);
    const context = new WriteContext(this.space);
    const response = executePut(context, request);
    context.end(this.options.eventHistoryMaxEvents);
    return response;
  }

  /** etcd DeleteRange. Deleting nothing does not create a revision. */
  deleteRange(request: DeleteRangeRequest): DeleteRangeResponse {
    validateDeleteRangeRequest(request);
    const context = new WriteContext(this.space);
    const response = executeDeleteRange(context, this.space, request);
    context.end(this.options.eventHistoryMaxEvents);
    return response;
  }

  /** etcd Txn: all compares first, then the chosen branch on one revision. */
  txn(request: TxnRequest): TxnResponse {
    validateTxnRequest(request, this.options);
    return this.txnValidated(request);
  }

  /**
   * Txn for a request that already passed validateTxnRequest with this store's options (the
   * applier validates before its permission checks, so that an invalid request is refused as
   * invalid first, as etcd's API does): the same, without checking every key a second time.
   */
  txnValidated(request: TxnRequest): TxnResponse {
    const revision = this.space.currentRevision;
    const plan = planTxn(this.space, request, revision);
    checkPlan(this.space, plan, revision, this.options.leases);
    const context = new WriteContext(this.space);
    const response = executePlan(context, this.space, plan, true);
    context.end(this.options.eventHistoryMaxEvents);
    return response;
  }

  /** etcd Compact: keeps what reads at `revision` and later need. */
  compact(revision: number): CompactResponse {
    compactKeySpace(this.space, revision);
    return { revision: this.space.currentRevision };
  }

  /**
   * True while the last compaction's dropped records are still being cut from their chains (see
   * compactKeySpace): the store answers as compacted already, but holds their memory until
   * compactionStep has gone through every key.
   */
  get compactionPending(): boolean {
    return this.space.compaction !== null;
  }

  /** Cuts the chains of up to `budget` keys of the compaction in progress; true when none is left in progress. */
  compactionStep(budget: number = COMPACTION_DEFAULT_STEP): boolean {
    return compactionStep(this.space, budget);
  }

  /**
   * Changes from `fromRevision` on, for Watch. Below `oldestEventRevision` the history is gone:
   * KVCompactedError carries that revision as `compactRevision` (where a watcher may resume).
   */
  readEvents(request: ReadEventsRequest): ReadEventsResponse {
    if (!Number.isSafeInteger(request.maxEvents) || request.maxEvents < 1) {
      throw new TypeError(`KVStore.readEvents: maxEvents must be a positive integer, got ${request.maxEvents}`);
    }
    if (!Number.isSafeInteger(request.fromRevision) || request.fromRevision < 1) {
      // etcd's start_revision 0 ("from now") is the watch layer's to resolve: currentRevision + 1.
      throw new TypeError(`KVStore.readEvents: fromRevision must be an integer >= 1, got ${request.fromRevision}`);
    }
    const history = this.space.history;
    if (request.fromRevision < history.floorRevision) {
      throw new KVCompactedError(request.fromRevision, history.floorRevision);
    }
    return history.read(
      request.fromRevision,
      toKeySpan(request.key, request.rangeEnd),
      request.prevKv === true,
      request.maxEvents,
      this.space.currentRevision,
      this.space.compactRevision,
    );
  }

  /** The keys attached to `lease`, ascending (what revoking it deletes). */
  leaseKeys(lease: LeaseId): Uint8Array[] {
    return this.space.leases.keysOf(lease).map(fromByteString);
  }

  /**
   * Visits the keys attached to `lease` without sorting them, until `visit` returns false: the
   * cheap form of `leaseKeys` for order-independent checks (the apply layer's "WRITE on every key
   * attached to the lease"). The order is unspecified and may differ between replicas.
   */
  forEachLeaseKey(lease: LeaseId, visit: (key: Uint8Array) => boolean | void): void {
    this.space.leases.forEachKeyOf(lease, (key) => visit(fromByteString(key)));
  }

  /** Number of keys attached to `lease`. */
  leaseKeyCount(lease: LeaseId): number {
    return this.space.leases.countOf(lease);
  }

  /**
   * Deletes every key attached to `lease` in one revision, in ascending key order (etcd's
   * lessor.Revoke). Whether the lease existed is the lessor's business; no keys, no revision.
   */
  revokeLeaseKeys(lease: LeaseId): DeleteRangeResponse {
    if (lease === NO_LEASE) throw new TypeError('KVStore.revokeLeaseKeys: lease 0 is no lease');
    const keys = this.space.leases.keysOf(lease);
    const context = new WriteContext(this.space);
    for (const key of keys) context.delete(key, this.space.index.get(key)!);
    const revision = context.end(this.options.eventHistoryMaxEvents);
    return { revision, deleted: keys.length, prevKvs: [] };
  }

  /** The canonical snapshot bytes (see snapshot.ts for the format). */
  snapshot(): Uint8Array {
    return encodeKeySpace(this.space, this.snapshotFormat);
  }

  /** The same bytes as `snapshot()`, as chunks in order, without joining them (large states). */
  snapshotChunks(): Uint8Array[] {
    return encodeKeySpaceChunks(this.space, this.snapshotFormat);
  }

  /**
   * The same bytes, of the key space as it is now, written in steps between which it may go on
   * changing (see KeySpaceSnapshotTask: a compaction before it is done makes it stale).
   */
  snapshotTask(stream?: SnapshotStreamOptions): KeySpaceSnapshotTask {
    return new KeySpaceSnapshotTask(this.space, stream, this.snapshotFormat);
  }

  /** The image format this store's snapshots are written in (KVStoreOptions.snapshotFormat). */
  get snapshotFormat(): KeySpaceFormat {
    return this.options.snapshotFormat ?? KEY_SPACE_FORMAT_LATEST;
  }

  /** A 16-hex-digit hash of the state, identical on every replica that applied the same changes. */
  hash(): string {
    return hashKeySpace(this.space);
  }

  /**
   * An incremental 16-hex-digit digest of the state, O(1) to read and kept up to date by every
   * change: identical on every replica that applied the same changes, cheap enough to compare
   * after every entry (the first read sums it from the state, O(state), once: until then no change
   * pays for it).
   * `hash()` is the exact one (over the canonical snapshot), O(state).
   */
  digest(): string {
    const space = this.space;
    finishCompaction(space);
    space.digest.sumLanes((visit) =>
      space.index.scan(EMPTY_BYTE_STRING, null, (key, newest) => {
        for (let record: KeyRecord | null = newest; record !== null; record = record.prev) visit(key, record);
      }),
    );
    return space.digest.hex(space.currentRevision, space.compactRevision, space.history.floorRevision);
  }

  /**
   * etcd's HashKV at `revision` (≤ 0: the current one), as a task to run in steps; throws etcd's
   * compacted / future-revision errors for a revision it cannot hash. See hash-kv.ts.
   */
  hashKv(revision: number): HashKvTask {
    return new HashKvTask(this.space, revision);
  }

  /** True when `key` has any retained history (live or tombstoned); for tests and diagnostics. */
  hasHistory(key: Uint8Array): boolean {
    const latest = this.space.index.get(toByteString(key));
    if (latest === undefined) return false;
    // A key the compaction still being cut drops whole is gone already.
    const pending = this.space.compaction;
    return pending === null || !dropsWholeKey(latest, pending.revision);
  }
}
