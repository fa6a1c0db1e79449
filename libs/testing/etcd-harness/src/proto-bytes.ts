/**
 * Hand-built protobuf bytes for requests the proto serializer refuses to produce (deep nesting)
 * and for deliberately malformed input. Field numbers are etcd's (rpc.proto).
 */

function varint(value: number): number[] {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint: ${value}`);
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

/** A length-delimited field (wire type 2). */
export function lengthDelimited(fieldNumber: number, payload: Uint8Array): Uint8Array {
  const header = [...varint((fieldNumber << 3) | 2), ...varint(payload.length)];
  const out = new Uint8Array(header.length + payload.length);
  out.set(header, 0);
  out.set(payload, header.length);
  return out;
}

const TXN_SUCCESS = 2;
const OP_REQUEST_PUT = 2;
const OP_REQUEST_TXN = 4;
const PUT_KEY = 1;
const PUT_VALUE = 2;

/**
 * A TxnRequest nesting `depth` request_txn levels around one put of `key`: success[0].request_txn
 * .success[0].request_txn ... .success[0].request_put. Sizes are computed inside out first, then
 * the headers are written outside in, so building is linear in the depth.
 */
export function nestedTxnBytes(depth: number, key: string, value: string): Uint8Array {
  if (!Number.isInteger(depth) || depth < 0 || depth > 1_000_000) throw new RangeError(`nestedTxnBytes: depth ${depth}`);
  const encoder = new TextEncoder();
  const put = new Uint8Array([...lengthDelimited(PUT_KEY, encoder.encode(key)), ...lengthDelimited(PUT_VALUE, encoder.encode(value))]);
  const innermost = lengthDelimited(TXN_SUCCESS, lengthDelimited(OP_REQUEST_PUT, put));
  // txnSizes[i]: bytes of the TxnRequest at nesting level i (0 = innermost).
  const txnSizes = [innermost.length];
  const opSizes = [0];
  for (let level = 1; level <= depth; level++) {
    const inner = txnSizes[level - 1] as number;
    const op = 1 + varint(inner).length + inner;
    opSizes.push(op);
    txnSizes.push(1 + varint(op).length + op);
  }
  const out = new Uint8Array(txnSizes[depth] as number);
  let offset = 0;
  const write = (bytes: readonly number[]): void => {
    out.set(bytes, offset);
    offset += bytes.length;
  };
  for (let level = depth; level >= 1; level--) {
    write([(TXN_SUCCESS << 3) | 2, ...varint(opSizes[level] as number)]);
    write([(OP_REQUEST_TXN << 3) | 2, ...varint(txnSizes[level - 1] as number)]);
  }
  out.set(innermost, offset);
  return out;
}
