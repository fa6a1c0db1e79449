// The txn nesting bound applied to a TxnRequest's wire bytes, before any decoding. etcd decodes a
// txn of any depth and refuses more than its --max-txn-ops levels with `too many operations in
// txn request`; protobuf decoders here recurse once per message, so a request deeper than ward's
// bound (kv-store's MAX_TXN_NESTING_DEPTH) is recognised by a flat scan of its bytes and answered
// with that same error, never handed to a decoder it could exhaust.
import { KVTooManyOpsError, MAX_TXN_NESTING_DEPTH, toWireError } from '@ward/etcd/kv-store';
import type { TxnRequest__Output } from '@ward/etcd/proto';

// Field numbers of etcd's rpc.proto that lead from a txn to the txn nested in it.
const TXN_SUCCESS = 2;
const TXN_FAILURE = 3;
const OP_REQUEST_TXN = 4;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

/** Longest varint protobuf writes (a 64-bit value). */
const MAX_VARINT_BYTES = 10;

/** What an open message is: a TxnRequest, or a RequestOp of one. */
const TXN_FRAME = 0;
const OP_FRAME = 1;

/**
 * True when the encoded TxnRequest nests txns deeper than `maxDepth` levels (the outer txn is
 * level 1), following success/failure ops into their request_txn and skipping every other field.
 * Linear in the bytes, no recursion, and it stops at the first level past the bound. Bytes that
 * are not well-formed protobuf give false: the decoder refuses them as it would anyway.
 */
export function txnRequestBytesTooDeep(bytes: Uint8Array, maxDepth: number = MAX_TXN_NESTING_DEPTH): boolean {
  // One entry per open message: where it ends, what it is, and its txn level.
  const ends: number[] = [bytes.length];
  const kinds: number[] = [TXN_FRAME];
  const levels: number[] = [1];
  let position = 0;
  const readVarint = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < MAX_VARINT_BYTES && position < bytes.length; i++) {
      const byte = bytes[position++]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    return undefined;
  };
  while (ends.length > 0) {
    const top = ends.length - 1;
    const end = ends[top]!;
    if (position === end) {
      ends.pop();
      kinds.pop();
      levels.pop();
      continue;
    }
    const tag = readVarint();
    if (tag === undefined || position > end) return false;
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    let next: number;
    switch (wireType) {
      case WIRE_VARINT:
        if (readVarint() === undefined) return false;
        next = position;
        break;
      case WIRE_FIXED64:
        next = position + 8;
        break;
      case WIRE_FIXED32:
        next = position + 4;
        break;
      case WIRE_LENGTH_DELIMITED: {
        const length = readVarint();
        if (length === undefined) return false;
        next = position + length;
        if (next > end) return false;
        const kind = kinds[top]!;
        const level = levels[top]!;
        if (kind === TXN_FRAME && (field === TXN_SUCCESS || field === TXN_FAILURE)) {
          ends.push(next);
          kinds.push(OP_FRAME);
          levels.push(level);
          continue;
        }
        if (kind === OP_FRAME && field === OP_REQUEST_TXN) {
          if (level + 1 > maxDepth) return true;
          ends.push(next);
          kinds.push(TXN_FRAME);
          levels.push(level + 1);
          continue;
        }
        break;
      }
      default:
        // Groups (3, 4) and unknown wire types: not etcd's; left to the decoder.
        return false;
    }
    if (next > end) return false;
    position = next;
  }
  return false;
}

const TOO_DEEP = Symbol('txn nested past the bound');

/** What the guarded deserializer hands on for a txn past the bound: an empty txn, marked. */
const TOO_DEEP_TXN: TxnRequest__Output = Object.freeze({ compare: [], success: [], failure: [], [TOO_DEEP]: true }) as TxnRequest__Output;

/**
 * A TxnRequest deserializer that scans the bytes first: a txn past the bound is not decoded but
 * handed on as a marked placeholder, which `txnRequestFromProto` refuses with etcd's
 * `too many operations in txn request` (InvalidArgument). A deserializer cannot answer with a
 * status of its own (gRPC turns its errors into INTERNAL), so the refusal happens in the handler,
 * before anything is proposed.
 */
export function guardTxnNesting<T>(deserialize: (bytes: Buffer) => T): (bytes: Buffer) => T {
  return (bytes) => (txnRequestBytesTooDeep(bytes) ? (TOO_DEEP_TXN as T) : deserialize(bytes));
}

/** Throws etcd's wire error when `proto` stands for a txn the guard found past the bound. */
export function refuseTooDeepTxn(proto: TxnRequest__Output): void {
  if ((proto as { [TOO_DEEP]?: true })[TOO_DEEP] === true) {
    throw toWireError(new KVTooManyOpsError(MAX_TXN_NESTING_DEPTH + 1, MAX_TXN_NESTING_DEPTH))!;
  }
}
