import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { KeyRecord } from './key-record';
import type { KeySpace } from './key-space';
import type { LeaseId } from './types';
import { NO_LEASE } from './types';

/**
 * One write transaction (etcd's storeTxnWrite): every change it makes gets main revision
 * `beginRevision + 1` and the next sub-revision, is visible to later reads of the same
 * transaction at once, and becomes the store's revision when the transaction ends with at least
 * one change. Callers check everything that can fail before the first change.
 */
export class WriteContext {
  readonly beginRevision: number;
  private changeCount = 0;
  private ended = false;

  constructor(private readonly space: KeySpace) {
    this.beginRevision = space.currentRevision;
    assert(this.beginRevision < Number.MAX_SAFE_INTEGER, 'write-context: revision space exhausted');
  }

  /** Revision of this transaction's changes. */
  get writeRevision(): number {
    return this.beginRevision + 1;
  }

  /** The revision reads inside the transaction see (etcd: beginRev, +1 once it changed something). */
  get readRevision(): number {
    return this.changeCount > 0 ? this.beginRevision + 1 : this.beginRevision;
  }

  get changes(): number {
    return this.changeCount;
  }

  /**
   * Puts under `key` (etcd's storeTxnWrite.put) in one index descent: `value` / `lease` null keep
   * the current live version's (the caller has checked that it exists). Returns the live version
   * the put replaced, or null.
   */
  put(key: ByteString, value: ByteString | null, lease: LeaseId | null): KeyRecord | null {
    assert(!this.ended, 'write-context: put after end');
    const space = this.space;
    const revision = this.writeRevision;
    const sub = this.changeCount;
    let live: KeyRecord | null = null;
    const record = space.index.upsert(key, (previous) => {
      live = previous !== undefined && previous.value !== null ? previous : null;
      return new KeyRecord(
        value ?? live!.value,
        revision,
        sub,
        live === null ? revision : live.createRevision,
        live === null ? 1 : live.version + 1,
        lease ?? live!.lease,
        previous ?? null,
      );
    });
    assert(record.value !== null, 'write-context: put without a value');
    const replaced = live as KeyRecord | null;
    if (replaced === null) space.liveKeys += 1;
    const oldLease = replaced === null ? NO_LEASE : replaced.lease;
    if (oldLease !== record.lease) {
      if (oldLease !== NO_LEASE) space.leases.detach(oldLease, key);
      if (record.lease !== NO_LEASE) space.leases.attach(record.lease, key);
    }
    space.history.append(key, record);
    space.digest.add(key, record);
    this.changeCount += 1;
    return replaced;
  }

  /** Deletes a live key (etcd's storeTxnWrite.delete): appends a tombstone, detaches its lease. */
  delete(key: ByteString, live: KeyRecord): KeyRecord {
    assert(!this.ended, 'write-context: delete after end');
    assert(live.value !== null, 'write-context: deleting a key that is not live');
    const space = this.space;
    const tombstone = new KeyRecord(null, this.writeRevision, this.changeCount, 0, 0, NO_LEASE, live);
    space.index.upsert(key, (previous) => {
      assert(previous === live, 'write-context: deleting a stale record');
      return tombstone;
    });
    space.liveKeys -= 1;
    if (live.lease !== NO_LEASE) space.leases.detach(live.lease, key);
    space.history.append(key, tombstone);
    space.digest.add(key, tombstone);
    this.changeCount += 1;
    return tombstone;
  }

  /**
   * Deletes every live key of [start, end) (`end` null: to the last key) in one index pass, in
   * key order; `onDeleted` sees each deleted live version first. Returns the number deleted.
   */
  deleteRange(start: ByteString, end: ByteString | null, onDeleted: (key: ByteString, live: KeyRecord) => void): number {
    assert(!this.ended, 'write-context: delete after end');
    const space = this.space;
    const revision = this.writeRevision;
    let deleted = 0;
    space.index.scanReplace(start, end, (key, latest) => {
      // Inside a write transaction the newest record is what its reads see (readRevision).
      if (latest.value === null) return latest;
      onDeleted(key, latest);
      const tombstone = new KeyRecord(null, revision, this.changeCount, 0, 0, NO_LEASE, latest);
      if (latest.lease !== NO_LEASE) space.leases.detach(latest.lease, key);
      space.history.append(key, tombstone);
      space.digest.add(key, tombstone);
      this.changeCount += 1;
      deleted += 1;
      return tombstone;
    });
    space.liveKeys -= deleted;
    return deleted;
  }

  /**
   * Ends the transaction: with changes, the store moves to the write revision and the Watch log
   * is trimmed to its bound. Returns the store revision after the transaction.
   */
  end(eventHistoryMaxEvents: number): number {
    assert(!this.ended, 'write-context: ended twice');
    this.ended = true;
    if (this.changeCount === 0) return this.beginRevision;
    assert(this.space.currentRevision === this.beginRevision, 'write-context: concurrent write');
    this.space.currentRevision = this.beginRevision + 1;
    this.space.history.trim(eventHistoryMaxEvents);
    return this.space.currentRevision;
  }
}
