// etcd's Lease service, the cheap part: Grant and Revoke are proposed like any write (the gateway
// draws the lease ID when the client leaves it 0, as etcd's API layer does). Keep-alives and lease
// queries need per-lease state the internal API does not expose yet, so they are not offered.
import { randomBytes } from 'node:crypto';
import { leaseGrantOperation, leaseRevokeOperation } from '@ward/etcd/api-mapping';
import type { LeaseGrantRequest__Output, LeaseRevokeRequest__Output } from '@ward/etcd/proto';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { unimplemented } from './unimplemented';

/** A random positive int64 lease ID (etcd's lessor draws from the same range). */
export function drawLeaseId(): bigint {
  const id = randomBytes(8).readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
  return id === 0n ? 1n : id;
}

export class LeaseApi {
  constructor(private readonly executor: RequestExecutor) {}

  grant(request: LeaseGrantRequest__Output, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.executor.propose(credentials, leaseGrantOperation(request, drawLeaseId), signal);
  }

  revoke(request: LeaseRevokeRequest__Output, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.executor.propose(credentials, leaseRevokeOperation(request), signal);
  }

  timeToLive(): Promise<never> {
    return Promise.reject(unimplemented('LeaseTimeToLive'));
  }

  leases(): Promise<never> {
    return Promise.reject(unimplemented('LeaseLeases'));
  }
}
