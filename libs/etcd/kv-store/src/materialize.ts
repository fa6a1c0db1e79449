import type { ByteString } from './byte-string';
import { writeByteString } from './byte-string';
import type { KeyRecord, KeyValueShape } from './key-record';
import { toKeyValue } from './key-record';
import type { KeyValue } from './types';

/**
 * Below this many results each key and value gets its own array: small arrays live in V8's heap
 * and are cheap, while one shared buffer costs an off-heap allocation that only pays off in bulk.
 */
const SHARED_BUFFER_MIN_RESULTS = 16;

/**
 * The response KeyValues of `records[order[i]]`, in `order`. In bulk, all keys and values of one
 * call are views into one freshly allocated buffer (one allocation instead of two per key); each
 * view is the caller's to keep or change, and views never overlap.
 */
export function materializeKeyValues(
  keys: readonly ByteString[],
  records: readonly KeyRecord[],
  order: readonly number[],
  shape: KeyValueShape,
): KeyValue[] {
  if (order.length < SHARED_BUFFER_MIN_RESULTS) {
    return order.map((position) => toKeyValue(keys[position]!, records[position]!, shape));
  }
  const withValue = shape === 'full';
  let totalBytes = 0;
  for (let i = 0; i < order.length; i++) {
    const position = order[i]!;
    totalBytes += keys[position]!.length;
    if (withValue) totalBytes += records[position]!.value!.length;
  }
  const slab = new Uint8Array(totalBytes);
  const out: KeyValue[] = new Array<KeyValue>(order.length);
  let offset = 0;
  for (let i = 0; i < order.length; i++) {
    const position = order[i]!;
    const record = records[position]!;
    const keyStart = offset;
    offset = writeByteString(keys[position]!, slab, offset);
    const valueStart = offset;
    if (withValue) offset = writeByteString(record.value!, slab, offset);
    out[i] = {
      key: slab.subarray(keyStart, valueStart),
      createRevision: record.createRevision,
      modRevision: record.modRevision,
      version: record.version,
      value: slab.subarray(valueStart, offset),
      lease: record.lease,
    };
  }
  return out;
}
