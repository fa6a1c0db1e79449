// The answers of a Snapshot stream, encoded by hand: a wardnode.NodeResponse whose `response` is an
// etcdserverpb.SnapshotResponse { header = 1, remaining_bytes = 2, blob = 3 }, the same bytes as
// protobufjs writes for them (every field written, remaining_bytes even when 0). protobufjs copied
// each blob twice (into the SnapshotResponse, then into the NodeResponse), each time into a new
// buffer; here it is copied once, into one of a few buffers the stream reuses, and the header (the
// same for the whole stream) is encoded once. A new 32 KiB buffer per answer had been 7% of the
// serving member's busy time in a save of 4,000,000 keys (docs/benchmarks.md, Scale).
import type { ServiceDefinition } from '@grpc/grpc-js';
import { putUvarint, uvarintBytes } from '@ward/shared/binary';

/** Protobuf field keys (field number << 3 | wire type): 2 = length-delimited, 0 = varint. */
const NODE_RESPONSE_RESPONSE_KEY = (1 << 3) | 2;
const SNAPSHOT_HEADER_KEY = (1 << 3) | 2;
const SNAPSHOT_REMAINING_BYTES_KEY = (2 << 3) | 0;
const SNAPSHOT_BLOB_KEY = (3 << 3) | 2;

/** Buffers a stream keeps for reuse; more may be lent out at once (the stream's backpressure bounds those). */
const MAX_FREE_ANSWER_BUFFERS = 32;

/** The length of the SnapshotResponse inside the answer. */
function snapshotResponseBytes(headerBytes: number, remainingBytes: number, blobBytes: number): number {
  return 1 + uvarintBytes(headerBytes) + headerBytes + 1 + uvarintBytes(remainingBytes) + 1 + uvarintBytes(blobBytes) + blobBytes;
}

/** Writes the answer into `target` (which has room for it) at 0; returns its length. */
function writeSnapshotAnswer(target: Uint8Array, header: Uint8Array, remainingBytes: number, blob: Uint8Array): number {
  let at = putUvarint(target, 0, NODE_RESPONSE_RESPONSE_KEY);
  at = putUvarint(target, at, snapshotResponseBytes(header.length, remainingBytes, blob.length));
  at = putUvarint(target, at, SNAPSHOT_HEADER_KEY);
  at = putUvarint(target, at, header.length);
  target.set(header, at);
  at = putUvarint(target, at + header.length, SNAPSHOT_REMAINING_BYTES_KEY);
  at = putUvarint(target, at, remainingBytes);
  at = putUvarint(target, at, SNAPSHOT_BLOB_KEY);
  at = putUvarint(target, at, blob.length);
  target.set(blob, at);
  return at + blob.length;
}

/**
 * One encoded answer, written to the stream as it is. Its buffer goes back to the stream's pool
 * when grpc-js serializes it: grpc-js copies the serialized bytes into its own frame before
 * `responseSerialize` returns to it, in the same task (`serializeMessage`), so nothing that could
 * take the buffer again runs before the copy.
 */
export class EncodedSnapshotAnswer {
  constructor(
    private readonly pool: SnapshotAnswers,
    private readonly buffer: Buffer,
    private readonly lengthBytes: number,
  ) {}

  /** The answer's bytes, for the serializer only: the buffer is free again once they are copied. */
  serialize(): Buffer {
    this.pool.give(this.buffer);
    return this.buffer.subarray(0, this.lengthBytes);
  }
}

/** A Snapshot stream's answers: its header encoded once, blobs of at most `maxBlobBytes`. */
export class SnapshotAnswers {
  private readonly free: Buffer[] = [];
  private readonly capacityBytes: number;

  constructor(
    private readonly header: Uint8Array,
    private readonly maxBlobBytes: number,
  ) {
    const inner = snapshotResponseBytes(header.length, Number.MAX_SAFE_INTEGER, maxBlobBytes);
    this.capacityBytes = 1 + uvarintBytes(inner) + inner;
  }

  /** The answer carrying `blob` (copied: its buffer may be reused once this returns). */
  encode(remainingBytes: number, blob: Uint8Array): EncodedSnapshotAnswer {
    if (blob.length > this.maxBlobBytes) throw new RangeError(`snapshot answer: a blob of ${blob.length} bytes is over ${this.maxBlobBytes}`);
    const buffer = this.free.pop() ?? Buffer.allocUnsafe(this.capacityBytes);
    return new EncodedSnapshotAnswer(this, buffer, writeSnapshotAnswer(buffer, this.header, remainingBytes, blob));
  }

  give(buffer: Buffer): void {
    if (this.free.length < MAX_FREE_ANSWER_BUFFERS) this.free.push(buffer);
  }
}

/**
 * The wardnode.Node service definition whose Snapshot method sends an {@link EncodedSnapshotAnswer}
 * as its bytes and serializes any other answer as before.
 */
export function withEncodedSnapshotAnswers(definition: ServiceDefinition): ServiceDefinition {
  const method = definition['Snapshot'];
  if (method === undefined) throw new TypeError('withEncodedSnapshotAnswers: the service has no Snapshot method');
  const serialize = method.responseSerialize;
  return {
    ...definition,
    Snapshot: { ...method, responseSerialize: (value: unknown) => (value instanceof EncodedSnapshotAnswer ? value.serialize() : serialize(value)) },
  };
}
