// etcd's Lease service. Grant and Revoke are proposals (the lease table is replicated; the
// leader draws the ID of a grant that asks for 0 and raises a TTL below the minimum);
// TimeToLive, Leases and each keep-alive renewal are answered by the leader's lessor, which alone
// knows deadlines. Every call carries the caller's identity; the permission rules of spec §3.5
// are decided by the raft-node (at apply, or against the current auth store for the queries).
import { leaseGrantOperation, leaseRevokeOperation, int64ToBigInt } from '@ward/etcd/api-mapping';
import type {
  LeaseGrantRequest__Output,
  LeaseKeepAliveRequest__Output,
  LeaseRevokeRequest__Output,
  LeaseTimeToLiveRequest__Output,
  NodeLeaseRequest,
} from '@ward/etcd/proto';
import { identityFields } from '../identity/identity';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import type { Cancellation } from '@ward/platform/grpc-server';

/** The leader's lessor queries (the cluster client's `lease`). */
export type LeaseQueryTransport = (request: Omit<NodeLeaseRequest, 'timeout_ms'>, signal?: Cancellation) => Promise<Buffer>;

export class LeaseApi {
  constructor(
    private readonly executor: RequestExecutor,
    private readonly query: LeaseQueryTransport,
  ) {}

  async grant(request: LeaseGrantRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.executor.propose(credentials, leaseGrantOperation(request), signal);
  }

  revoke(request: LeaseRevokeRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.executor.propose(credentials, leaseRevokeOperation(request), signal);
  }

  timeToLive(request: LeaseTimeToLiveRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    const id = int64ToBigInt(request.ID, 'LeaseTimeToLiveRequest.ID').toString();
    return this.executor.asIdentity(credentials, (identity) => this.query({ ...identityFields(identity), kind: 'TIME_TO_LIVE', id, keys: request.keys }, signal), signal);
  }

  leases(_request: object, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.executor.asIdentity(credentials, (identity) => this.query({ ...identityFields(identity), kind: 'LEASES' }, signal), signal);
  }

  /** One keep-alive renewal (a message of the LeaseKeepAlive stream): the encoded LeaseKeepAliveResponse. */
  keepAlive(request: LeaseKeepAliveRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    const id = int64ToBigInt(request.ID, 'LeaseKeepAliveRequest.ID').toString();
    return this.executor.asIdentity(credentials, (identity) => this.query({ ...identityFields(identity), kind: 'KEEP_ALIVE', id }, signal), signal);
  }
}
