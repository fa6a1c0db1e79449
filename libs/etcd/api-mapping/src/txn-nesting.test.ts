import { describe, expect, it } from 'vitest';
import { Applier, decodeApplyRequest, encodeApplyRequest, type ApplyRequest } from '@ward/etcd/apply';
import { MAX_TXN_NESTING_DEPTH, type TxnRequest } from '@ward/etcd/kv-store';
import type { TxnRequest__Output, TxnResponse__Output } from '@ward/etcd/proto';
import { decodeApplyResponse, encodeApplyResponse } from './apply-response';
import type { ResponseContext } from './header';
import { txnRequestFromProto } from './kv-request';
import { decodeEtcdMessage, encodeEtcdMessage } from './proto-codec';
import { guardTxnNesting, txnRequestBytesTooDeep } from './txn-nesting';

const context: ResponseContext = { clusterId: 1n, memberId: 2n, raftTerm: 3 };
const bytes = (text: string): Buffer => Buffer.from(text);
type Op = Record<string, unknown>;

/** `levels` TxnRequests, each the one op of its parent's `branch`, the innermost holding `innermost`. */
function nested(levels: number, innermost: readonly Op[], branch: 'success' | 'failure' = 'success'): Record<string, unknown> {
  let txn: Record<string, unknown> = { [branch]: innermost };
  for (let level = 1; level < levels; level++) txn = { [branch]: [{ request_txn: txn }] };
  return txn;
}

const encodeTxn = (txn: Record<string, unknown>): Buffer => Buffer.from(encodeEtcdMessage('etcdserverpb.TxnRequest', txn));
const put = (key: string, value = 'v'): Op => ({ request_put: { key: bytes(key), value: bytes(value), prev_kv: true } });

/** A TxnRequest nesting `levels` empty levels, built in linear time (no encoder that could refuse the depth). */
function deepBytes(levels: number): Buffer {
  const varint = (value: number): number[] => {
    const out: number[] = [];
    let rest = value;
    for (; rest >= 0x80; rest = Math.floor(rest / 128)) out.push((rest & 0x7f) | 0x80);
    out.push(rest);
    return out;
  };
  // Sizes inside out (txnSizes[0]: the innermost, empty TxnRequest), then headers outside in.
  const txnSizes = [0];
  const opSizes = [0];
  for (let level = 1; level < levels; level++) {
    const op = 1 + varint(txnSizes[level - 1]!).length + txnSizes[level - 1]!;
    opSizes.push(op);
    txnSizes.push(1 + varint(op).length + op);
  }
  const out: number[] = [];
  for (let level = levels - 1; level >= 1; level--) out.push(0x12, ...varint(opSizes[level]!), 0x22, ...varint(txnSizes[level - 1]!));
  return Buffer.from(out);
}

describe('txnRequestBytesTooDeep (the nesting bound on the wire bytes)', () => {
  it('is etcd 3.4.23’s default: 128 levels are within, 129 past', () => {
    expect(MAX_TXN_NESTING_DEPTH).toBe(128);
    expect(txnRequestBytesTooDeep(encodeTxn(nested(MAX_TXN_NESTING_DEPTH, [put('k')])))).toBe(false);
    expect(txnRequestBytesTooDeep(encodeTxn(nested(MAX_TXN_NESTING_DEPTH + 1, [put('k')])))).toBe(true);
  });

  it('follows both branches and every op, past compares and other fields', () => {
    const compare = { key: bytes('c'), target: 'VALUE', result: 'EQUAL', value: bytes('x') };
    expect(txnRequestBytesTooDeep(encodeTxn(nested(4, [put('k')], 'failure')), 3)).toBe(true);
    expect(txnRequestBytesTooDeep(encodeTxn(nested(3, [put('k')], 'failure')), 3)).toBe(false);
    const deepSecond = { compare: [compare], success: [put('a'), { request_txn: nested(3, [put('k')]) }], failure: [{ request_range: { key: bytes('r'), limit: 5 } }] };
    expect(txnRequestBytesTooDeep(encodeTxn(deepSecond), 3)).toBe(true);
    expect(txnRequestBytesTooDeep(encodeTxn(deepSecond), 4)).toBe(false);
    // Wide is not deep: 128 sibling txns of one level each.
    const wide = { success: Array.from({ length: 128 }, (_, i) => ({ request_txn: { success: [put(`k${i}`)] } })) };
    expect(txnRequestBytesTooDeep(encodeTxn(wide), 2)).toBe(false);
  });

  it('stops at the first level past the bound, however deep the bytes go (no recursion)', () => {
    expect(txnRequestBytesTooDeep(deepBytes(100_000))).toBe(true);
    expect(txnRequestBytesTooDeep(deepBytes(MAX_TXN_NESTING_DEPTH))).toBe(false);
  });

  it('leaves bytes that are not a well-formed message to the decoder', () => {
    const deep = deepBytes(MAX_TXN_NESTING_DEPTH + 10);
    for (const broken of [Buffer.from([0x12, 0xff]), Buffer.from([0x12, 0x05, 0x22]), Buffer.from([0xff, 0xff, 0xff]), Buffer.from([0x0b, 0x00]), deep.subarray(0, 100)]) {
      expect(txnRequestBytesTooDeep(broken)).toBe(false);
    }
  });
});

describe('guardTxnNesting', () => {
  it('decodes a txn within the bound; one past it is never decoded and is refused with etcd’s error', () => {
    let decodes = 0;
    const deserialize = guardTxnNesting((raw: Buffer) => {
      decodes++;
      return decodeEtcdMessage<TxnRequest__Output>('etcdserverpb.TxnRequest', raw);
    });
    const within = deserialize(encodeTxn(nested(MAX_TXN_NESTING_DEPTH, [put('k')])));
    expect(decodes).toBe(1);
    expect(txnRequestFromProto(within).success).toHaveLength(1);
    for (const past of [encodeTxn(nested(MAX_TXN_NESTING_DEPTH + 1, [put('k')])), deepBytes(100_000)]) {
      const placeholder = deserialize(past);
      expect(decodes).toBe(1);
      expect(() => txnRequestFromProto(placeholder)).toThrow(
        expect.objectContaining({ grpcCode: 3, message: 'etcdserver: too many operations in txn request' }),
      );
    }
  });

  it('a decoded object past the bound (not through the guard) gets the same refusal from the mapper', () => {
    let txn: TxnRequest__Output = { compare: [], success: [], failure: [] };
    for (let level = 1; level <= MAX_TXN_NESTING_DEPTH; level++) {
      txn = { compare: [], success: [{ request: 'request_txn', request_txn: txn } as never], failure: [] };
    }
    expect(() => txnRequestFromProto(txn)).toThrow(expect.objectContaining({ grpcCode: 3, message: 'etcdserver: too many operations in txn request' }));
  });
});

describe('a txn at the bound is carried by every codec on its way (the member answers what it applies)', () => {
  it('gRPC bytes -> mapping -> log entry -> apply -> encoded answer -> decoded answer, deepest KeyValues included', () => {
    const applier = Applier.create({ kv: { maxTxnOps: 1024, maxTxnOpsTotal: 100_000 } });
    let index = 1;
    const run = (txn: Record<string, unknown>): TxnResponse__Output => {
      const request = txnRequestFromProto(decodeEtcdMessage<TxnRequest__Output>('etcdserverpb.TxnRequest', encodeTxn(txn)));
      const entry: ApplyRequest = decodeApplyRequest(encodeApplyRequest({ header: { id: BigInt(index), username: '', authRevision: 0 }, operation: { type: 'txn', request } }));
      const result = applier.apply(index++, entry);
      if (!result.ok) throw new Error(result.error.message);
      const answer = encodeApplyResponse(result.result, result.header.revision, context);
      expect(decodeApplyResponse('txn', answer).response.type).toBe('txn');
      return decodeEtcdMessage<TxnResponse__Output>('etcdserverpb.TxnResponse', answer);
    };
    const innermost = (response: TxnResponse__Output): Record<string, unknown> => {
      let txn = response;
      for (let level = 1; level < MAX_TXN_NESTING_DEPTH; level++) txn = txn.responses[0]!.response_txn!;
      return txn.responses[0] as unknown as Record<string, unknown>;
    };
    run(nested(MAX_TXN_NESTING_DEPTH, [put('k', 'one')]));
    // The second put answers with its prev_kv, a KeyValue below the deepest level.
    const second = innermost(run(nested(MAX_TXN_NESTING_DEPTH, [put('k', 'two')])));
    expect((second['response_put'] as { prev_kv: { value: Buffer } }).prev_kv.value.toString()).toBe('one');
    const read = innermost(run(nested(MAX_TXN_NESTING_DEPTH, [{ request_range: { key: bytes('k') } }])));
    expect((read['response_range'] as { kvs: Array<{ value: Buffer }> }).kvs.map((kv) => kv.value.toString())).toEqual(['two']);
    const deleted = innermost(run(nested(MAX_TXN_NESTING_DEPTH, [{ request_delete_range: { key: bytes('k'), prev_kv: true } }])));
    expect((deleted['response_delete_range'] as { prev_kvs: Array<{ value: Buffer }> }).prev_kvs.map((kv) => kv.value.toString())).toEqual(['two']);
  });

  it('the log entry codec holds the same bound: one level past it is neither encoded nor decoded', () => {
    const operation = (levels: number): ApplyRequest['operation'] => {
      let request: TxnRequest = { compare: [], success: [], failure: [] };
      for (let level = 1; level < levels; level++) request = { compare: [], success: [{ type: 'txn', request }], failure: [] };
      return { type: 'txn', request };
    };
    const header = { id: 1n, username: '', authRevision: 0 };
    expect(decodeApplyRequest(encodeApplyRequest({ header, operation: operation(MAX_TXN_NESTING_DEPTH) })).operation.type).toBe('txn');
    expect(() => encodeApplyRequest({ header, operation: operation(MAX_TXN_NESTING_DEPTH + 1) })).toThrow(TypeError);
  });
});
