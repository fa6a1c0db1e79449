import type { Entry } from './types';
import { ENTRY_HEADER_BYTES } from './types';

/**
 * The longest prefix of `entries` whose encoded size is at most `maxBytes`, but never fewer than
 * one entry (a single entry larger than the limit still has to travel). Returns `entries` itself
 * when nothing is cut.
 */
export function limitSize(entries: Entry[], maxBytes: number): Entry[] {
  if (entries.length <= 1) return entries;
  let size = ENTRY_HEADER_BYTES + entries[0]!.data.length;
  let count = 1;
  for (; count < entries.length; count++) {
    size += ENTRY_HEADER_BYTES + entries[count]!.data.length;
    if (size > maxBytes) break;
  }
  return count === entries.length ? entries : entries.slice(0, count);
}
