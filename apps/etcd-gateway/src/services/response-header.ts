import type { NodeStatusResponse__Output, ResponseHeader } from '@ward/etcd/proto';

/** An etcd ResponseHeader for answers the gateway builds itself, from a member's status. */
export function responseHeaderOf(status: NodeStatusResponse__Output): ResponseHeader {
  return {
    cluster_id: status.cluster_id,
    member_id: status.member_id,
    revision: status.revision,
    raft_term: status.raft_term,
  };
}
