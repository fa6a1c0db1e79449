// etcd's KV service. Requests are mapped and validated by @ward/etcd/api-mapping (etcd's API-layer
// checks: empty key, sort options, txn limits), then read or proposed as the caller. Answers are
// the raft-node's encoded responses, passed through.
import {
  compactionRequestFromProto,
  deleteRangeRequestFromProto,
  putRequestFromProto,
  rangeRequestFromProto,
  txnRequestFromProto,
  type KvRequestLimits,
} from '@ward/etcd/api-mapping';
import { isTxnReadOnly } from '@ward/etcd/kv-store';
import type {
  CompactionRequest__Output,
  DeleteRangeRequest__Output,
  PutRequest__Output,
  RangeRequest__Output,
  TxnRequest__Output,
} from '@ward/etcd/proto';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { isTxnSerializable } from '../requests/txn-serializable';
import type { Cancellation } from '@ward/platform/grpc-server';

export class KvApi {
  constructor(
    private readonly executor: RequestExecutor,
    private readonly limits: KvRequestLimits,
  ) {}

  /** Linearizable (ReadIndex at the cluster) unless the request asks for serializable. */
  range(request: RangeRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    const range = rangeRequestFromProto(request);
    return this.executor.read(credentials, { type: 'range', request: range }, range.serializable === true, signal);
  }

  put(request: PutRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.executor.propose(credentials, { type: 'put', request: putRequestFromProto(request) }, signal);
  }

  deleteRange(request: DeleteRangeRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.executor.propose(credentials, { type: 'deleteRange', request: deleteRangeRequestFromProto(request) }, signal);
  }

  /** A txn of Ranges only is a read (etcd serves it without the log); any write makes it a proposal. */
  txn(request: TxnRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    const txn = txnRequestFromProto(request, this.limits);
    if (isTxnReadOnly(txn)) return this.executor.read(credentials, { type: 'txn', request: txn }, isTxnSerializable(txn), signal);
    return this.executor.propose(credentials, { type: 'txn', request: txn }, signal);
  }

  compact(request: CompactionRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.executor.propose(credentials, { type: 'compact', request: compactionRequestFromProto(request) }, signal);
  }
}
