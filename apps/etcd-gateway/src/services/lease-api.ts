// etcd's Lease service is not offered: the raft-nodes replicate a lease table but run no lessor
// (nothing expires a lease or its keys), so granting a lease would promise an expiry that never
// comes. Every Lease RPC answers UNIMPLEMENTED (`ward: <RPC> is not supported`, the same text as
// every RPC ward does not serve); lease-less KV use is unaffected.
import { unimplemented } from './unimplemented';

export class LeaseApi {
  grant(): Promise<never> {
    return Promise.reject(unimplemented('LeaseGrant'));
  }

  revoke(): Promise<never> {
    return Promise.reject(unimplemented('LeaseRevoke'));
  }

  timeToLive(): Promise<never> {
    return Promise.reject(unimplemented('LeaseTimeToLive'));
  }

  leases(): Promise<never> {
    return Promise.reject(unimplemented('LeaseLeases'));
  }
}
