// etcd's Lease service is not offered: the raft-nodes replicate a lease table but run no lessor
// (nothing expires a lease or its keys), so granting a lease would promise an expiry that never
// comes. Every Lease RPC says so honestly; lease-less KV use is unaffected.
import { unimplemented } from './unimplemented';

const WHY = 'no lessor expires leases yet';

export class LeaseApi {
  grant(): Promise<never> {
    return Promise.reject(unimplemented('LeaseGrant', WHY));
  }

  revoke(): Promise<never> {
    return Promise.reject(unimplemented('LeaseRevoke', WHY));
  }

  timeToLive(): Promise<never> {
    return Promise.reject(unimplemented('LeaseTimeToLive', WHY));
  }

  leases(): Promise<never> {
    return Promise.reject(unimplemented('LeaseLeases', WHY));
  }
}
