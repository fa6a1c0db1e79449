// etcd's Cluster service: MemberList from the raft-nodes, with every member's client URL set to
// the gateway's advertised URL (clients reach the cluster only through gateways). Membership
// changes are not offered through the etcd API.
import type { MemberListResponse, NodeMemberListResponse__Output, NodeStatusResponse__Output } from '@ward/etcd/proto';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { requireAuthenticated, type AuthEnabledCheck } from './authenticated';
import { unimplemented } from './unimplemented';

export interface ClusterApiOptions {
  readonly executor: RequestExecutor;
  readonly authEnabled: AuthEnabledCheck;
  readonly status: (signal?: AbortSignal) => Promise<NodeStatusResponse__Output>;
  readonly memberList: (signal?: AbortSignal) => Promise<NodeMemberListResponse__Output>;
  /** Reported as every member's client URL. */
  readonly advertisedClientUrl: () => string;
}

export class ClusterApi {
  constructor(private readonly options: ClusterApiOptions) {}

  async memberList(_request: object, credentials: Credentials, signal?: AbortSignal): Promise<MemberListResponse> {
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    const [list, status] = await Promise.all([this.options.memberList(signal), this.options.status(signal)]);
    const clientUrl = this.options.advertisedClientUrl();
    return {
      header: { cluster_id: list.cluster_id, member_id: list.member_id, raft_term: list.raft_term, revision: status.revision },
      members: list.members.map((member) => ({
        ID: member.id,
        name: member.name,
        peerURLs: member.peer_urls,
        clientURLs: [clientUrl],
        isLearner: member.is_learner,
      })),
    };
  }

  memberAdd(): Promise<never> {
    return Promise.reject(unimplemented('MemberAdd'));
  }

  memberRemove(): Promise<never> {
    return Promise.reject(unimplemented('MemberRemove'));
  }

  memberUpdate(): Promise<never> {
    return Promise.reject(unimplemented('MemberUpdate'));
  }

  memberPromote(): Promise<never> {
    return Promise.reject(unimplemented('MemberPromote'));
  }
}
