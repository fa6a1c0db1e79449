// The two flags of an encoded etcd WatchResponse that watcher accounting needs (created, canceled),
// read from the top-level protobuf fields without decoding the header or the events: the relay
// passes responses through as bytes and must not pay for a decode of every event batch.

/** WatchResponse field numbers (etcd's rpc.proto). */
const CREATED_FIELD = 3;
const CANCELED_FIELD = 4;

export interface WatchResponseFlags {
  readonly created: boolean;
  readonly canceled: boolean;
}

const NONE: WatchResponseFlags = Object.freeze({ created: false, canceled: false });

/**
 * created and canceled of an encoded WatchResponse. Bytes that are not a well-formed message read
 * as neither (the accounting then keeps the watcher until the stream ends, never less).
 */
export function watchResponseFlags(bytes: Uint8Array): WatchResponseFlags {
  let created = false;
  let canceled = false;
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (at >= bytes.length) return undefined;
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    return undefined;
  };
  while (at < bytes.length) {
    const tag = varint();
    if (tag === undefined) return NONE;
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (wireType === 0) {
      const value = varint();
      if (value === undefined) return NONE;
      if (field === CREATED_FIELD) created = value !== 0;
      if (field === CANCELED_FIELD) canceled = value !== 0;
    } else if (wireType === 2) {
      const length = varint();
      if (length === undefined || at + length > bytes.length) return NONE;
      at += length;
    } else if (wireType === 1) {
      at += 8;
    } else if (wireType === 5) {
      at += 4;
    } else {
      return NONE;
    }
  }
  return at === bytes.length ? { created, canceled } : NONE;
}
