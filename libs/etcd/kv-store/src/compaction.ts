import { assert } from '@ward/shared/errors';
import type { ByteString } from './byte-string';
import { KVCompactedError, KVFutureRevisionError } from './errors';
import type { KeyRecord } from './key-record';
import type { KeySpace } from './key-space';

/**
 * Keys whose chains one compaction step cuts unless the caller says otherwise (about a millisecond
 * at a million keys alone on the machine: 10,000 took 6 ms).
 */
export const COMPACTION_DEFAULT_STEP = 2_000;

/**
 * Compacts the key space at `revision` (etcd's store.Compact + keyIndex.compact):
 * - `revision` <= the last compaction: compacted error; > the current revision: future error;
 * - in every key's chain, the newest record at or below `revision` is kept and everything older
 *   goes; when that record is a tombstone below `revision` it goes too, and a key left with no
 *   record leaves the index (a tombstone exactly at `revision` stays, as in etcd);
 * - records exactly at `revision` all stay (see compactChain);
 * - the Watch log drops changes below `revision`.
 * Reads at any revision >= `revision` answer exactly as before.
 *
 * The compaction is whole from here on for everything the store answers (reads below `revision`
 * are refused, the Watch log is cut, snapshots and hashes hold only what it keeps), but the
 * records it drops are cut from their chains by compactionStep, a bounded number of keys at a
 * time, so that a large key space is not walked in one stall (etcd deletes a compaction's
 * revisions from its database in batches too). Until they are cut, the dropped records are never
 * reached by a read at or after `revision` (each sits below a record that read sees, or below the
 * tombstone that makes its key absent), and every writer of the whole state (snapshot, HashKV,
 * digest) finishes the cutting first. A second compaction before the first is cut through starts
 * the cutting over at its own revision (it drops everything the first did, and more).
 */
export function compactKeySpace(space: KeySpace, revision: number): void {
  if (revision <= space.compactRevision) throw new KVCompactedError(revision, space.compactRevision);
  if (revision > space.currentRevision) throw new KVFutureRevisionError(revision, space.currentRevision);
  space.compactRevision = revision;
  space.history.compact(revision);
  space.compaction = { revision, cursor: '' };
}

/**
 * Cuts the chains of up to `budget` keys (at least 1) of the compaction in progress; true when none
 * is (left) in progress.
 */
export function compactionStep(space: KeySpace, budget: number = COMPACTION_DEFAULT_STEP): boolean {
  assert(Number.isSafeInteger(budget) && budget > 0, 'compaction: the step budget must be a positive integer');
  const pending = space.compaction;
  if (pending === null) return true;
  const { revision } = pending;
  const emptied: ByteString[] = [];
  let visited = 0;
  let next: ByteString | null = null;
  space.index.scan(pending.cursor, null, (key, latest) => {
    if (visited === budget) {
      next = key;
      return false;
    }
    visited++;
    const dropped = compactChain(latest, revision);
    if (dropped === null) return true;
    space.digest.removeChain(key, dropped);
    if (dropped === latest) emptied.push(key);
    return true;
  });
  for (const key of emptied) space.index.delete(key);
  space.keysCompactedAway += emptied.length;
  if (next === null) {
    space.compaction = null;
    return true;
  }
  pending.cursor = next;
  return false;
}

/**
 * True when a compaction at `revision` drops the whole key whose newest record is `latest` (its
 * newest record is a tombstone below `revision`: compactChain returns `latest`), so that the key is
 * gone for every answer before its chain is cut.
 */
export function dropsWholeKey(latest: KeyRecord, revision: number): boolean {
  return latest.modRevision < revision && latest.value === null;
}

/** Cuts whatever the compaction in progress has left, at once (O(keys)). */
export function finishCompaction(space: KeySpace): void {
  while (!compactionStep(space, Number.MAX_SAFE_INTEGER));
}

/**
 * Cuts one chain at `revision`; returns the first record dropped (the rest of the dropped chain
 * hangs from it), null when nothing is dropped, the newest record when the whole key goes.
 *
 * Every record at `revision` or later stays: reads need the newest of them, and the Watch log
 * (complete from the compact revision on) may hold several changes of one key in one revision (a
 * put and a from-key delete of the same txn). Below `revision`, only the newest record stays,
 * and only when no record sits exactly at `revision` and it is a put.
 */
function compactChain(latest: KeyRecord, revision: number): KeyRecord | null {
  let newer: KeyRecord | null = null;
  let record: KeyRecord | null = latest;
  while (record !== null && record.modRevision >= revision) {
    newer = record;
    record = record.prev;
  }
  if (record === null) return null;
  const keepOlder = (newer === null || newer.modRevision > revision) && record.value !== null;
  if (keepOlder) {
    const dropped = record.prev;
    record.prev = null;
    return dropped;
  }
  if (newer === null) return latest;
  newer.prev = null;
  return record;
}
