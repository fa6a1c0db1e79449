// etcd's Cluster service: MemberList from the raft-nodes, with every started member's client URL
// set to the gateway's advertised URL (clients reach the cluster only through gateways; a member
// added but not started yet has none, as in etcd). MemberAdd / MemberRemove / MemberUpdate /
// MemberPromote go to the leader, which decides the admin check (etcd 3.7: admin only), etcd's
// refusals and the strict reconfiguration check, and answers once the change applied.
import { decodeEtcdMessage } from '@ward/etcd/api-mapping';
import type {
  MemberAddRequest__Output,
  MemberListResponse,
  MemberPromoteRequest__Output,
  MemberRemoveRequest__Output,
  MemberUpdateRequest__Output,
  NodeMemberChangeRequest,
  NodeMemberListResponse__Output,
  NodeStatusResponse__Output,
} from '@ward/etcd/proto';
import { identityFields } from '../identity/identity';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { requireAuthenticated, type AuthEnabledCheck } from './authenticated';
import type { Cancellation } from '@ward/platform/grpc-server';

export interface ClusterApiOptions {
  readonly executor: RequestExecutor;
  readonly authEnabled: AuthEnabledCheck;
  readonly status: (signal?: Cancellation) => Promise<NodeStatusResponse__Output>;
  readonly memberList: (signal?: Cancellation) => Promise<NodeMemberListResponse__Output>;
  /** Sends a membership change to the leader; resolves to the encoded etcd response. */
  readonly memberChange: (request: Omit<NodeMemberChangeRequest, 'timeout_ms'>, signal?: Cancellation) => Promise<Buffer>;
  /** Reported as every started member's client URL. */
  readonly advertisedClientUrl: () => string;
}

interface EtcdMember {
  ID?: string;
  name?: string;
  peerURLs?: string[];
  clientURLs?: string[];
  isLearner?: boolean;
}

type Kind = NodeMemberChangeRequest['kind'] & string;

export class ClusterApi {
  constructor(private readonly options: ClusterApiOptions) {}

  async memberList(_request: object, credentials: Credentials, signal?: Cancellation): Promise<MemberListResponse> {
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    const [list, status] = await Promise.all([this.options.memberList(signal), this.options.status(signal)]);
    const clientUrl = this.options.advertisedClientUrl();
    return {
      header: { cluster_id: list.cluster_id, member_id: list.member_id, raft_term: list.raft_term, revision: status.revision },
      members: list.members.map((member) => ({
        ID: member.id,
        name: member.name,
        peerURLs: member.peer_urls,
        clientURLs: member.name === '' ? [] : [clientUrl],
        isLearner: member.is_learner,
      })),
    };
  }

  memberAdd(request: MemberAddRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<object> {
    return this.change('ADD', 'etcdserverpb.MemberAddResponse', { peer_urls: request.peerURLs ?? [], is_learner: request.isLearner === true }, credentials, signal);
  }

  memberRemove(request: MemberRemoveRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<object> {
    return this.change('REMOVE', 'etcdserverpb.MemberRemoveResponse', { id: request.ID ?? '0' }, credentials, signal);
  }

  memberUpdate(request: MemberUpdateRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<object> {
    return this.change('UPDATE', 'etcdserverpb.MemberUpdateResponse', { id: request.ID ?? '0', peer_urls: request.peerURLs ?? [] }, credentials, signal);
  }

  memberPromote(request: MemberPromoteRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<object> {
    return this.change('PROMOTE', 'etcdserverpb.MemberPromoteResponse', { id: request.ID ?? '0' }, credentials, signal);
  }

  /** Who is asking, then the leader decides; client URLs are the gateway's, as in MemberList. */
  private async change(kind: Kind, typeName: string, fields: Omit<NodeMemberChangeRequest, 'kind' | 'username' | 'auth_revision'>, credentials: Credentials, signal?: Cancellation): Promise<object> {
    const encoded = await this.options.executor.asIdentity(credentials, (identity) => this.options.memberChange({ ...identityFields(identity), kind, ...fields }, signal), signal);
    const response = decodeEtcdMessage<{ header?: object; member?: EtcdMember; members?: EtcdMember[] }>(typeName, encoded);
    const clientUrl = this.options.advertisedClientUrl();
    const withUrl = (m: EtcdMember): EtcdMember => ({ ...m, clientURLs: (m.name ?? '') === '' ? [] : [clientUrl] });
    return {
      ...response,
      ...(response.member === undefined || response.member === null ? {} : { member: withUrl(response.member) }),
      members: (response.members ?? []).map(withUrl),
    };
  }
}
