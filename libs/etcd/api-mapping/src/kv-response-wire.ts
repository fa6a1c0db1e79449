// etcd's KV answers (RangeResponse, PutResponse, DeleteRangeResponse, TxnResponse) straight to
// protobuf wire bytes, written without building the proto object and converting each int64 to a
// string and back as protobufjs's fromObject/encode does (a txn of 128 puts spent more in that
// than in applying them). Sizes are computed first and the bytes written into one exact buffer.
// Zero and empty fields are left out, as Go's encoder (etcd) does; any protobuf decoder reads the
// same message (kv-response-wire.test.ts decodes both encodings with protobufjs and compares).
// Responses nested in a txn carry a header with their revision only, as etcd's.
//
// Field numbers (etcd's rpc.proto and kv.proto):
//   ResponseHeader: cluster_id 1, member_id 2, revision 3, raft_term 4 (varints)
//   KeyValue: key 1, create_revision 2, mod_revision 3, version 4, value 5, lease 6
//   RangeResponse: header 1, kvs 2, more 3, count 4
//   PutResponse: header 1, prev_kv 2
//   DeleteRangeResponse: header 1, deleted 2, prev_kvs 3
//   TxnResponse: header 1, succeeded 2, responses 3
//   ResponseOp: response_range 1, response_put 2, response_delete_range 3, response_txn 4
import type { DeleteRangeResponse, KeyValue, PutResponse, RangeResponse, ResponseOp, TxnResponse } from '@ward/etcd/kv-store';
import { putUvarint, uvarintBytes } from '@ward/shared/binary';
import type { ResponseContext } from './header';

const TWO_64 = 1n << 64n;

/** A varint's value: a non-negative safe integer, or a bigint (negative int64s as two's complement). */
function bigVarint(value: bigint): bigint {
  return value < 0n ? value + TWO_64 : value;
}

const varintSize = uvarintBytes;

function bigVarintSize(value: bigint): number {
  let v = bigVarint(value);
  let size = 1;
  while (v >= 128n) {
    v >>= 7n;
    size++;
  }
  return size;
}

function intSize(value: number | bigint): number {
  if (typeof value === 'bigint') return bigVarintSize(value);
  if (value < 0) return 10;
  return varintSize(value);
}

class WireWriter {
  private offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  varint(value: number): void {
    this.offset = putUvarint(this.bytes, this.offset, value);
  }

  bigVarint(value: bigint): void {
    let v = bigVarint(value);
    const bytes = this.bytes;
    while (v >= 128n) {
      bytes[this.offset++] = Number(v & 127n) | 128;
      v >>= 7n;
    }
    bytes[this.offset++] = Number(v);
  }

  int(value: number | bigint): void {
    if (typeof value === 'bigint') this.bigVarint(value);
    else if (value < 0) this.bigVarint(BigInt(value));
    else this.varint(value);
  }

  raw(data: Uint8Array): void {
    this.bytes.set(data, this.offset);
    this.offset += data.length;
  }

  get length(): number {
    return this.offset;
  }
}

/** A varint field (tag byte + value), left out when zero. */
function intFieldSize(value: number | bigint): number {
  return value === 0 || value === 0n ? 0 : 1 + intSize(value);
}

function writeIntField(w: WireWriter, tag: number, value: number | bigint): void {
  if (value === 0 || value === 0n) return;
  w.varint(tag);
  w.int(value);
}

function bytesFieldSize(data: Uint8Array): number {
  return data.length === 0 ? 0 : 1 + varintSize(data.length) + data.length;
}

function writeBytesField(w: WireWriter, tag: number, data: Uint8Array): void {
  if (data.length === 0) return;
  w.varint(tag);
  w.varint(data.length);
  w.raw(data);
}

/** The answering member's header fields (top level), or none (nested in a txn: revision only). */
type Context = ResponseContext | undefined;

function headerSize(context: Context, revision: number): number {
  if (context === undefined) return intFieldSize(revision);
  return intFieldSize(context.clusterId) + intFieldSize(context.memberId) + intFieldSize(revision) + intFieldSize(context.raftTerm);
}

function writeHeader(w: WireWriter, context: Context, revision: number): void {
  // Field 1, length-delimited: always present (etcd fills every header).
  w.varint(0x0a);
  w.varint(headerSize(context, revision));
  if (context !== undefined) {
    writeIntField(w, 0x08, context.clusterId);
    writeIntField(w, 0x10, context.memberId);
  }
  writeIntField(w, 0x18, revision);
  if (context !== undefined) writeIntField(w, 0x20, context.raftTerm);
}

/** A length-delimited field of a message `size` bytes long. */
function messageFieldSize(size: number): number {
  return 1 + varintSize(size) + size;
}

function keyValueSize(kv: KeyValue): number {
  return (
    bytesFieldSize(kv.key) +
    intFieldSize(kv.createRevision) +
    intFieldSize(kv.modRevision) +
    intFieldSize(kv.version) +
    bytesFieldSize(kv.value) +
    intFieldSize(kv.lease)
  );
}

function keyValuesSize(kvs: readonly KeyValue[]): number {
  let size = 0;
  for (const kv of kvs) size += messageFieldSize(keyValueSize(kv));
  return size;
}

function writeKeyValue(w: WireWriter, tag: number, kv: KeyValue): void {
  w.varint(tag);
  w.varint(keyValueSize(kv));
  writeBytesField(w, 0x0a, kv.key);
  writeIntField(w, 0x10, kv.createRevision);
  writeIntField(w, 0x18, kv.modRevision);
  writeIntField(w, 0x20, kv.version);
  writeBytesField(w, 0x2a, kv.value);
  writeIntField(w, 0x30, kv.lease);
}

// Each message's size is computed once, in the order its bytes are then written (a txn's nested
// responses after it), and taken from `sizes` by the writer in that order.

interface Sizes {
  readonly list: number[];
  next: number;
}

function rangeSize(response: RangeResponse, context: Context, revision: number): number {
  return messageFieldSize(headerSize(context, revision)) + keyValuesSize(response.kvs) + (response.more ? 2 : 0) + intFieldSize(response.count);
}

function writeRange(w: WireWriter, response: RangeResponse, context: Context, revision: number): void {
  writeHeader(w, context, revision);
  for (const kv of response.kvs) writeKeyValue(w, 0x12, kv);
  if (response.more) {
    w.varint(0x18);
    w.varint(1);
  }
  writeIntField(w, 0x20, response.count);
}

function putSize(response: PutResponse, context: Context, revision: number): number {
  const prev = response.prevKv;
  return messageFieldSize(headerSize(context, revision)) + (prev === undefined ? 0 : messageFieldSize(keyValueSize(prev)));
}

function writePut(w: WireWriter, response: PutResponse, context: Context, revision: number): void {
  writeHeader(w, context, revision);
  if (response.prevKv !== undefined) writeKeyValue(w, 0x12, response.prevKv);
}

function deleteRangeSize(response: DeleteRangeResponse, context: Context, revision: number): number {
  return messageFieldSize(headerSize(context, revision)) + intFieldSize(response.deleted) + keyValuesSize(response.prevKvs);
}

function writeDeleteRange(w: WireWriter, response: DeleteRangeResponse, context: Context, revision: number): void {
  writeHeader(w, context, revision);
  writeIntField(w, 0x10, response.deleted);
  for (const kv of response.prevKvs) writeKeyValue(w, 0x1a, kv);
}

function txnSize(response: TxnResponse, context: Context, revision: number, sizes: Sizes): number {
  let size = messageFieldSize(headerSize(context, revision)) + (response.succeeded ? 2 : 0);
  for (const op of response.responses) {
    const slot = sizes.list.length;
    sizes.list.push(0);
    const body = responseOpBodySize(op, sizes);
    sizes.list[slot] = body;
    size += messageFieldSize(messageFieldSize(body));
  }
  return size;
}

/** The size of the response a ResponseOp holds (nested: no context, its own revision). */
function responseOpBodySize(op: ResponseOp, sizes: Sizes): number {
  switch (op.type) {
    case 'range':
      return rangeSize(op.response, undefined, op.response.revision);
    case 'put':
      return putSize(op.response, undefined, op.response.revision);
    case 'deleteRange':
      return deleteRangeSize(op.response, undefined, op.response.revision);
    case 'txn':
      return txnSize(op.response, undefined, op.response.revision, sizes);
  }
}

function writeTxn(w: WireWriter, response: TxnResponse, context: Context, revision: number, sizes: Sizes): void {
  writeHeader(w, context, revision);
  if (response.succeeded) {
    w.varint(0x10);
    w.varint(1);
  }
  for (const op of response.responses) {
    const body = sizes.list[sizes.next++]!;
    w.varint(0x1a);
    w.varint(messageFieldSize(body));
    writeResponseOp(w, op, body, sizes);
  }
}

const RESPONSE_OP_TAGS = { range: 0x0a, put: 0x12, deleteRange: 0x1a, txn: 0x22 } as const;

/** The ResponseOp's one field: the nested response, `body` bytes long. */
function writeResponseOp(w: WireWriter, op: ResponseOp, body: number, sizes: Sizes): void {
  w.varint(RESPONSE_OP_TAGS[op.type]);
  w.varint(body);
  switch (op.type) {
    case 'range':
      return writeRange(w, op.response, undefined, op.response.revision);
    case 'put':
      return writePut(w, op.response, undefined, op.response.revision);
    case 'deleteRange':
      return writeDeleteRange(w, op.response, undefined, op.response.revision);
    case 'txn':
      return writeTxn(w, op.response, undefined, op.response.revision, sizes);
  }
}

/** A message of `size` bytes, written by `write` into one exact buffer. */
function encodeExact(size: number, write: (w: WireWriter) => void): Uint8Array {
  const w = new WireWriter(Buffer.allocUnsafe(size));
  write(w);
  if (w.length !== size) throw new Error(`kv-response-wire: wrote ${w.length} bytes, sized ${size}`);
  return w.bytes;
}

/** etcdserverpb.RangeResponse with its header filled in. */
export function encodeRangeResponseWire(response: RangeResponse, revision: number, context: ResponseContext): Uint8Array {
  return encodeExact(rangeSize(response, context, revision), (w) => writeRange(w, response, context, revision));
}

/** etcdserverpb.PutResponse with its header filled in. */
export function encodePutResponseWire(response: PutResponse, revision: number, context: ResponseContext): Uint8Array {
  return encodeExact(putSize(response, context, revision), (w) => writePut(w, response, context, revision));
}

/** etcdserverpb.DeleteRangeResponse with its header filled in. */
export function encodeDeleteRangeResponseWire(response: DeleteRangeResponse, revision: number, context: ResponseContext): Uint8Array {
  return encodeExact(deleteRangeSize(response, context, revision), (w) => writeDeleteRange(w, response, context, revision));
}

/** etcdserverpb.TxnResponse with its header filled in (nested responses: revision only). */
export function encodeTxnResponseWire(response: TxnResponse, revision: number, context: ResponseContext): Uint8Array {
  const sizes: Sizes = { list: [], next: 0 };
  return encodeExact(txnSize(response, context, revision, sizes), (w) => writeTxn(w, response, context, revision, sizes));
}
