// Key-space requests in the entry format (see entry-codec.ts for the layout). Every field is written,
// defaults included, so decoding yields fully specified requests and re-encoding gives the same
// bytes. Enums use etcd's proto numbering.

import { BinaryDecodeError, type BinaryReader, type BinaryWriter } from '@ward/shared/binary';
import {
  MAX_TXN_NESTING_DEPTH,
  type Compare,
  type CompareResult,
  type CompareTarget,
  type DeleteRangeRequest,
  type PutRequest,
  type RangeRequest,
  type RequestOp,
  type SortOrder,
  type SortTarget,
  type TxnRequest,
} from '@ward/etcd/kv-store';

const SORT_ORDERS: readonly SortOrder[] = ['NONE', 'ASCEND', 'DESCEND'];
const SORT_TARGETS: readonly SortTarget[] = ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'];
const COMPARE_RESULTS: readonly CompareResult[] = ['EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'];
const COMPARE_TARGETS: readonly CompareTarget[] = ['VERSION', 'CREATE', 'MOD', 'VALUE', 'LEASE'];
const OP_TAGS = { range: 1, put: 2, deleteRange: 3, txn: 4 } as const;
const EMPTY = new Uint8Array(0);

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

// ---- shared field helpers ----------------------------------------------------------------------

function enumIndex<T extends string>(values: readonly T[], value: T, what: string): number {
  const index = values.indexOf(value);
  if (index < 0) throw new TypeError(`unknown ${what}: ${String(value)}`);
  return index;
}

function readEnum<T extends string>(reader: BinaryReader, values: readonly T[], what: string): T {
  const at = reader.offset;
  const index = reader.uint8();
  const value = values[index];
  if (value === undefined) throw new BinaryDecodeError('invalid-value', at, `unknown ${what} ${index}`);
  return value;
}

/** A safe integer (etcd int64 revisions, limits, TTLs) as a zigzag varint. */
export function writeInt(writer: BinaryWriter, value: number): void {
  writer.svarint(value);
}

export function readInt(reader: BinaryReader): number {
  return reader.svarint();
}

/** An int64 (lease IDs) as a zigzag varint. */
export function writeInt64(writer: BinaryWriter, value: bigint): void {
  if (typeof value !== 'bigint' || value < INT64_MIN || value > INT64_MAX) throw new TypeError('not an int64');
  writer.svarint64(value);
}

/** Up to three booleans in one byte: bit 0 = `a`, bit 1 = `b`, bit 2 = `c`. */
function writeFlags(writer: BinaryWriter, a: boolean | undefined, b?: boolean, c?: boolean): void {
  writer.uint8((a === true ? 1 : 0) | (b === true ? 2 : 0) | (c === true ? 4 : 0));
}

/** The flag byte of `count` flags; a bit above them is a decode error. */
function readFlags(reader: BinaryReader, count: number): number {
  const at = reader.offset;
  const bits = reader.uint8();
  if (bits >>> count !== 0) throw new BinaryDecodeError('invalid-value', at, 'unknown flag bits');
  return bits;
}

/**
 * Byte strings are bounded by the entry itself (the decoder caps the entry size first). Keys,
 * range ends and values are views of the entry, not copies: the key space turns what it keeps into
 * strings of its own, and a decoded request lives only while it is applied or read. A copy here
 * was a tenth of a member's CPU in a bulk load (fresh memory for every value, garbage soon after).
 */
function readBytes(reader: BinaryReader): Uint8Array {
  return reader.bytesView(reader.remaining);
}

// ---- Range, Put, DeleteRange ---------------------------------------------------------------------

export function writeRange(writer: BinaryWriter, request: RangeRequest): void {
  writer.bytes(request.key).bytes(request.rangeEnd ?? EMPTY);
  writeInt(writer, request.limit ?? 0);
  writeInt(writer, request.revision ?? 0);
  writer.uint8(enumIndex(SORT_ORDERS, request.sortOrder ?? 'NONE', 'sort order'));
  writer.uint8(enumIndex(SORT_TARGETS, request.sortTarget ?? 'KEY', 'sort target'));
  writeFlags(writer, request.serializable, request.keysOnly, request.countOnly);
  writeInt(writer, request.minModRevision ?? 0);
  writeInt(writer, request.maxModRevision ?? 0);
  writeInt(writer, request.minCreateRevision ?? 0);
  writeInt(writer, request.maxCreateRevision ?? 0);
}

export function readRange(reader: BinaryReader): RangeRequest {
  const key = readBytes(reader);
  const rangeEnd = readBytes(reader);
  const limit = readInt(reader);
  const revision = readInt(reader);
  const sortOrder = readEnum(reader, SORT_ORDERS, 'sort order');
  const sortTarget = readEnum(reader, SORT_TARGETS, 'sort target');
  const flags = readFlags(reader, 3);
  const minModRevision = readInt(reader);
  const maxModRevision = readInt(reader);
  const minCreateRevision = readInt(reader);
  const maxCreateRevision = readInt(reader);
  return {
    key,
    rangeEnd,
    limit,
    revision,
    sortOrder,
    sortTarget,
    serializable: (flags & 1) !== 0,
    keysOnly: (flags & 2) !== 0,
    countOnly: (flags & 4) !== 0,
    minModRevision,
    maxModRevision,
    minCreateRevision,
    maxCreateRevision,
  };
}

export function writePut(writer: BinaryWriter, request: PutRequest): void {
  writer.bytes(request.key).bytes(request.value ?? EMPTY);
  writeInt64(writer, request.lease ?? 0n);
  writeFlags(writer, request.prevKv, request.ignoreValue, request.ignoreLease);
}

export function readPut(reader: BinaryReader): PutRequest {
  const key = readBytes(reader);
  const value = readBytes(reader);
  const lease = reader.svarint64();
  const flags = readFlags(reader, 3);
  return { key, value, lease, prevKv: (flags & 1) !== 0, ignoreValue: (flags & 2) !== 0, ignoreLease: (flags & 4) !== 0 };
}

export function writeDeleteRange(writer: BinaryWriter, request: DeleteRangeRequest): void {
  writer.bytes(request.key).bytes(request.rangeEnd ?? EMPTY);
  writeFlags(writer, request.prevKv);
}

export function readDeleteRange(reader: BinaryReader): DeleteRangeRequest {
  const key = readBytes(reader);
  const rangeEnd = readBytes(reader);
  const prevKv = readFlags(reader, 1) === 1;
  return { key, rangeEnd, prevKv };
}

// ---- Txn -----------------------------------------------------------------------------------------

function writeCompare(writer: BinaryWriter, compare: Compare): void {
  writer.uint8(enumIndex(COMPARE_RESULTS, compare.result, 'compare result'));
  writer.uint8(enumIndex(COMPARE_TARGETS, compare.target, 'compare target'));
  writer.bytes(compare.key).bytes(compare.rangeEnd ?? EMPTY);
  switch (compare.target) {
    case 'VERSION':
      return writeInt(writer, compare.version);
    case 'CREATE':
      return writeInt(writer, compare.createRevision);
    case 'MOD':
      return writeInt(writer, compare.modRevision);
    case 'VALUE':
      writer.bytes(compare.value);
      return;
    case 'LEASE':
      return writeInt64(writer, compare.lease);
  }
}

function readCompare(reader: BinaryReader): Compare {
  const result = readEnum(reader, COMPARE_RESULTS, 'compare result');
  const target = readEnum(reader, COMPARE_TARGETS, 'compare target');
  const key = readBytes(reader);
  const rangeEnd = readBytes(reader);
  const base = { result, key, rangeEnd };
  switch (target) {
    case 'VERSION':
      return { ...base, target, version: readInt(reader) };
    case 'CREATE':
      return { ...base, target, createRevision: readInt(reader) };
    case 'MOD':
      return { ...base, target, modRevision: readInt(reader) };
    case 'VALUE':
      return { ...base, target, value: readBytes(reader) };
    case 'LEASE':
      return { ...base, target, lease: reader.svarint64() };
  }
}

/** Room for one field's tag, flags and varints around its bytes (a guess: the writer grows past it). */
const FIELD_ALLOWANCE_BYTES = 24;

/**
 * About the bytes writeTxn writes for `request`: its keys, range ends and values, and an allowance
 * for what surrounds each. An encoder that starts with this much room seldom grows (a 128-put txn
 * of 256-byte values otherwise took nine buffers, doubling from 256 bytes, and a copy at each).
 */
export function txnBytesHint(request: TxnRequest, depth = 1): number {
  if (depth > MAX_TXN_NESTING_DEPTH) return 0;
  let bytes = FIELD_ALLOWANCE_BYTES;
  for (const compare of request.compare) bytes += FIELD_ALLOWANCE_BYTES + compare.key.length + (compare.rangeEnd?.length ?? 0) + (compare.target === 'VALUE' ? compare.value.length : 0);
  for (const branch of [request.success, request.failure]) for (const op of branch) bytes += requestOpBytesHint(op, depth);
  return bytes;
}

/** The bytes of a put's key and value (what makes its encoding large). */
export function putBytesHint(request: PutRequest): number {
  return request.key.length + (request.value?.length ?? 0);
}

function requestOpBytesHint(op: RequestOp, depth: number): number {
  switch (op.type) {
    case 'put':
      return FIELD_ALLOWANCE_BYTES + putBytesHint(op.request);
    case 'range':
    case 'deleteRange':
      return FIELD_ALLOWANCE_BYTES + op.request.key.length + (op.request.rangeEnd?.length ?? 0);
    case 'txn':
      return txnBytesHint(op.request, depth + 1);
    default:
      return FIELD_ALLOWANCE_BYTES;
  }
}

export function writeTxn(writer: BinaryWriter, request: TxnRequest, depth = 1): void {
  if (depth > MAX_TXN_NESTING_DEPTH) throw new TypeError(`txn nested deeper than ${MAX_TXN_NESTING_DEPTH}`);
  writer.uvarint(request.compare.length);
  for (const compare of request.compare) writeCompare(writer, compare);
  for (const branch of [request.success, request.failure]) {
    writer.uvarint(branch.length);
    for (const op of branch) writeRequestOp(writer, op, depth);
  }
}

export function readTxn(reader: BinaryReader, depth = 1): TxnRequest {
  if (depth > MAX_TXN_NESTING_DEPTH) throw new BinaryDecodeError('too-large', reader.offset, 'txn nested too deep');
  const compare: Compare[] = [];
  const compares = reader.count(reader.remaining);
  for (let i = 0; i < compares; i++) compare.push(readCompare(reader));
  const success = readOps(reader, depth);
  const failure = readOps(reader, depth);
  return { compare, success, failure };
}

function readOps(reader: BinaryReader, depth: number): RequestOp[] {
  const ops: RequestOp[] = [];
  const count = reader.count(reader.remaining);
  for (let i = 0; i < count; i++) ops.push(readRequestOp(reader, depth));
  return ops;
}

function writeRequestOp(writer: BinaryWriter, op: RequestOp, depth: number): void {
  switch (op.type) {
    case 'range':
      writer.uint8(OP_TAGS.range);
      return writeRange(writer, op.request);
    case 'put':
      writer.uint8(OP_TAGS.put);
      return writePut(writer, op.request);
    case 'deleteRange':
      writer.uint8(OP_TAGS.deleteRange);
      return writeDeleteRange(writer, op.request);
    case 'txn':
      writer.uint8(OP_TAGS.txn);
      return writeTxn(writer, op.request, depth + 1);
    default:
      throw new TypeError(`unknown txn operation ${String((op as { type: unknown }).type)}`);
  }
}

function readRequestOp(reader: BinaryReader, depth: number): RequestOp {
  const at = reader.offset;
  const tag = reader.uint8();
  switch (tag) {
    case OP_TAGS.range:
      return { type: 'range', request: readRange(reader) };
    case OP_TAGS.put:
      return { type: 'put', request: readPut(reader) };
    case OP_TAGS.deleteRange:
      return { type: 'deleteRange', request: readDeleteRange(reader) };
    case OP_TAGS.txn:
      return { type: 'txn', request: readTxn(reader, depth + 1) };
    default:
      throw new BinaryDecodeError('invalid-value', at, `unknown txn operation tag ${tag}`);
  }
}
