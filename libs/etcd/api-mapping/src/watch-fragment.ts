// etcd's sendFragments (v3rpc/watch.go): a watcher created with `fragment` gets a response whose
// encoded size reaches the limit split into several, every part but the last marked `fragment`.
import type { WatchResponse__Output } from '@ward/etcd/proto';
import { encodeEtcdMessage } from './proto-codec';

const WATCH_RESPONSE = 'etcdserverpb.WatchResponse';
const EVENT = 'mvccpb.Event';

function varintBytes(value: number): number {
  let bytes = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) bytes++;
  return bytes;
}

/** Encoded size of one event as a repeated field of WatchResponse (tag, length, body). */
function eventFieldBytes(event: WatchResponse__Output['events'][number]): number {
  const body = encodeEtcdMessage(EVENT, event).length;
  return 1 + varintBytes(body) + body;
}

/**
 * The responses to send for `response`: itself when its encoded size is below `maxBytes` or it
 * has fewer than two events; otherwise parts of as many events as fit below `maxBytes` (at least
 * one each), all with `fragment: true` except the last. Sizes are of the encoded message, as etcd's.
 */
export function fragmentWatchResponse(response: WatchResponse__Output, maxBytes: number): WatchResponse__Output[] {
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new TypeError('fragmentWatchResponse: maxBytes must be a positive integer');
  const events = response.events;
  if (events.length < 2) return [response];
  const sizes = events.map(eventFieldBytes);
  const baseBytes = encodeEtcdMessage(WATCH_RESPONSE, { ...response, events: [], fragment: true }).length;
  const total = encodeEtcdMessage(WATCH_RESPONSE, response).length;
  if (total < maxBytes) return [response];
  const parts: WatchResponse__Output[] = [];
  let index = 0;
  while (index < events.length) {
    const start = index;
    let bytes = baseBytes;
    while (index < events.length) {
      const next = bytes + sizes[index]!;
      if (index > start && next >= maxBytes) break;
      bytes = next;
      index++;
    }
    parts.push({ ...response, events: events.slice(start, index), fragment: index < events.length });
  }
  return parts;
}
