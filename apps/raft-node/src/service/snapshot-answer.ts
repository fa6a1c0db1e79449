// The answers of a Snapshot stream, encoded by hand: a wardnode.NodeResponse whose `response` is an
// etcdserverpb.SnapshotResponse { header = 1, remaining_bytes = 2, blob = 3 }. The same bytes as
// protobufjs writes for them (every field written, remaining_bytes even when 0), in one buffer
// sized first: the blob is copied once, where protobufjs copied it into the SnapshotResponse and
// again into the NodeResponse, and the header (the same for the whole stream) is encoded once.
import type { ServiceDefinition } from '@grpc/grpc-js';
import { BinaryWriter, uvarintBytes } from '@ward/shared/binary';

/** Protobuf field keys (field number << 3 | wire type): 2 = length-delimited, 0 = varint. */
const NODE_RESPONSE_RESPONSE_KEY = (1 << 3) | 2;
const SNAPSHOT_HEADER_KEY = (1 << 3) | 2;
const SNAPSHOT_REMAINING_BYTES_KEY = (2 << 3) | 0;
const SNAPSHOT_BLOB_KEY = (3 << 3) | 2;

/** An encoded NodeResponse carrying one SnapshotResponse; `header` is an encoded ResponseHeader. */
export function snapshotAnswerBytes(header: Uint8Array, remainingBytes: number, blob: Uint8Array): Buffer {
  const inner =
    1 + uvarintBytes(header.length) + header.length +
    1 + uvarintBytes(remainingBytes) +
    1 + uvarintBytes(blob.length) + blob.length;
  const total = 1 + uvarintBytes(inner) + inner;
  const bytes = new BinaryWriter({ initialCapacityBytes: total })
    .uvarint(NODE_RESPONSE_RESPONSE_KEY).uvarint(inner)
    .uvarint(SNAPSHOT_HEADER_KEY).bytes(header)
    .uvarint(SNAPSHOT_REMAINING_BYTES_KEY).uvarint(remainingBytes)
    .uvarint(SNAPSHOT_BLOB_KEY).bytes(blob)
    .finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The wardnode.Node service definition whose Snapshot method sends a Buffer as it is (an answer
 * {@link snapshotAnswerBytes} encoded) and serializes any other answer as before.
 */
export function withEncodedSnapshotAnswers(definition: ServiceDefinition): ServiceDefinition {
  const method = definition['Snapshot'];
  if (method === undefined) throw new TypeError('withEncodedSnapshotAnswers: the service has no Snapshot method');
  const serialize = method.responseSerialize;
  return {
    ...definition,
    Snapshot: { ...method, responseSerialize: (value: unknown) => (Buffer.isBuffer(value) ? value : serialize(value)) },
  };
}
