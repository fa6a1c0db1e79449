import type { ByteString } from './byte-string';
import { KVCompactedError, KVFutureRevisionError } from './errors';
import type { KeyRecord } from './key-record';
import type { KeySpace } from './key-space';

/**
 * Compacts the key space at `revision` (etcd's store.Compact + keyIndex.compact):
 * - `revision` <= the last compaction: compacted error; > the current revision: future error;
 * - in every key's chain, the newest record at or below `revision` is kept and everything older
 *   goes; when that record is a tombstone below `revision` it goes too, and a key left with no
 *   record leaves the index (a tombstone exactly at `revision` stays, as in etcd);
 * - records exactly at `revision` all stay (see compactChain);
 * - the Watch log drops changes below `revision`.
 * Reads at any revision >= `revision` answer exactly as before.
 */
export function compactKeySpace(space: KeySpace, revision: number): void {
  if (revision <= space.compactRevision) throw new KVCompactedError(revision, space.compactRevision);
  if (revision > space.currentRevision) throw new KVFutureRevisionError(revision, space.currentRevision);
  space.compactRevision = revision;
  const emptied: ByteString[] = [];
  space.index.scan('', null, (key, latest) => {
    const dropped = compactChain(latest, revision);
    if (dropped === null) return;
    space.digest.removeChain(key, dropped);
    if (dropped === latest) emptied.push(key);
  });
  for (const key of emptied) space.index.delete(key);
  space.history.compact(revision);
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
