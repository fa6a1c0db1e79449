import type { WatchFilter } from '@ward/etcd/api-mapping';

/** One watcher of a stream: its range, filters and where its next read starts. */
export interface Watcher {
  readonly id: bigint;
  readonly key: Uint8Array;
  /** kv-store meanings: empty = the key alone, [0x00] = to the end. */
  readonly rangeEnd: Uint8Array;
  readonly noPut: boolean;
  readonly noDelete: boolean;
  readonly prevKv: boolean;
  readonly fragment: boolean;
  readonly progressNotify: boolean;
  /** First revision not yet delivered. */
  nextRevision: number;
  /** etcd's progress flag: a periodic progress notification is due unless events went out. */
  progressDue: boolean;
}

export function watcherFilters(filters: readonly WatchFilter[]): { noPut: boolean; noDelete: boolean } {
  return { noPut: filters.includes('NOPUT'), noDelete: filters.includes('NODELETE') };
}
