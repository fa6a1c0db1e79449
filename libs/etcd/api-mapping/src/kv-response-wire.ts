// RangeResponse and PutResponse straight to protobuf wire bytes: the two answers of the request
// path's hot calls (every read and every put), written without building the proto object and
// converting each int64 to a string and back as protobufjs's fromObject/encode does. Sizes are
// computed first and the bytes written into one exact buffer. Zero and empty fields are left out,
// as Go's encoder (etcd) does; any protobuf decoder reads the same message
// (kv-response-wire.test.ts decodes both encodings with protobufjs and compares).
//
// Field numbers (etcd's rpc.proto and kv.proto):
//   ResponseHeader: cluster_id 1, member_id 2, revision 3, raft_term 4 (varints)
//   KeyValue: key 1, create_revision 2, mod_revision 3, version 4, value 5, lease 6
//   RangeResponse: header 1, kvs 2, more 3, count 4
//   PutResponse: header 1, prev_kv 2
import type { KeyValue, PutResponse, RangeResponse } from '@ward/etcd/kv-store';
import type { ResponseContext } from './header';

const TWO_64 = 1n << 64n;

/** A varint's value: a non-negative safe integer, or a bigint (negative int64s as two's complement). */
function bigVarint(value: bigint): bigint {
  return value < 0n ? value + TWO_64 : value;
}

function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

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
    const bytes = this.bytes;
    let offset = this.offset;
    while (value >= 128) {
      bytes[offset++] = (value % 128) | 128;
      value = Math.floor(value / 128);
    }
    bytes[offset++] = value;
    this.offset = offset;
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

function headerSize(context: ResponseContext, revision: number): number {
  return intFieldSize(context.clusterId) + intFieldSize(context.memberId) + intFieldSize(revision) + intFieldSize(context.raftTerm);
}

function writeHeader(w: WireWriter, size: number, context: ResponseContext, revision: number): void {
  // Field 1, length-delimited: always present (etcd fills every header).
  w.varint(0x0a);
  w.varint(size);
  writeIntField(w, 0x08, context.clusterId);
  writeIntField(w, 0x10, context.memberId);
  writeIntField(w, 0x18, revision);
  writeIntField(w, 0x20, context.raftTerm);
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

function writeKeyValue(w: WireWriter, tag: number, kv: KeyValue, size: number): void {
  w.varint(tag);
  w.varint(size);
  writeBytesField(w, 0x0a, kv.key);
  writeIntField(w, 0x10, kv.createRevision);
  writeIntField(w, 0x18, kv.modRevision);
  writeIntField(w, 0x20, kv.version);
  writeBytesField(w, 0x2a, kv.value);
  writeIntField(w, 0x30, kv.lease);
}

function finish(w: WireWriter, expected: number): Uint8Array {
  if (w.length !== expected) throw new Error(`kv-response-wire: wrote ${w.length} bytes, sized ${expected}`);
  return w.bytes;
}

/** etcdserverpb.RangeResponse with its header filled in. */
export function encodeRangeResponseWire(response: RangeResponse, revision: number, context: ResponseContext): Uint8Array {
  const header = headerSize(context, revision);
  let size = 1 + varintSize(header) + header;
  const kvSizes = new Array<number>(response.kvs.length);
  for (let i = 0; i < response.kvs.length; i++) {
    const kvSize = keyValueSize(response.kvs[i]!);
    kvSizes[i] = kvSize;
    size += 1 + varintSize(kvSize) + kvSize;
  }
  if (response.more) size += 2;
  size += intFieldSize(response.count);
  const w = new WireWriter(Buffer.allocUnsafe(size));
  writeHeader(w, header, context, revision);
  for (let i = 0; i < response.kvs.length; i++) writeKeyValue(w, 0x12, response.kvs[i]!, kvSizes[i]!);
  if (response.more) {
    w.varint(0x18);
    w.varint(1);
  }
  writeIntField(w, 0x20, response.count);
  return finish(w, size);
}

/** etcdserverpb.PutResponse with its header filled in. */
export function encodePutResponseWire(response: PutResponse, revision: number, context: ResponseContext): Uint8Array {
  const header = headerSize(context, revision);
  let size = 1 + varintSize(header) + header;
  const prev = response.prevKv;
  const prevSize = prev === undefined ? 0 : keyValueSize(prev);
  if (prev !== undefined) size += 1 + varintSize(prevSize) + prevSize;
  const w = new WireWriter(Buffer.allocUnsafe(size));
  writeHeader(w, header, context, revision);
  if (prev !== undefined) writeKeyValue(w, 0x12, prev, prevSize);
  return finish(w, size);
}
