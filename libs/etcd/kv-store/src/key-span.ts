import type { ByteString } from './byte-string';
import { toByteString } from './byte-string';

/**
 * A request's key selection in etcd's meanings (etcd-auth spec §3.1, mvcc `mkGteRange`):
 * `end === undefined` selects the single key `start`; `end === null` every key >= `start`
 * (range_end `"\x00"`); otherwise the half-open interval [start, end), empty when end <= start.
 */
export interface KeySpan {
  readonly start: ByteString;
  readonly end: ByteString | null | undefined;
}

/** Range-end byte etcd reads as "to the end of the key space". */
const FROM_KEY_END = 0x00;

/** The span of a (key, range_end) pair. */
export function toKeySpan(key: Uint8Array, rangeEnd: Uint8Array | undefined): KeySpan {
  const start = toByteString(key);
  if (rangeEnd === undefined || rangeEnd.length === 0) return { start, end: undefined };
  if (rangeEnd.length === 1 && rangeEnd[0] === FROM_KEY_END) return { start, end: null };
  return { start, end: toByteString(rangeEnd) };
}

/** True when the span selects `key`. */
export function spanContains(span: KeySpan, key: ByteString): boolean {
  if (span.end === undefined) return key === span.start;
  return key >= span.start && (span.end === null || key < span.end);
}
