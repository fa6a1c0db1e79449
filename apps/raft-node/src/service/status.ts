import type { NodeMemberListResponse, NodeStatusResponse } from '@ward/etcd/proto';
import { leaderMember, memberView, type NodeCore } from './node-core';

/** The etcd API version members report in Status (what etcd clients gate features on). */
export const ETCD_API_VERSION = '3.5.0';

export function nodeStatus(core: NodeCore): NodeStatusResponse {
  const kv = core.stateMachine.applier.keySpaceView;
  const { commit, last } = core.raftIndexes();
  return {
    cluster_id: core.config.clusterId.toString(),
    member_id: core.config.memberId.toString(),
    leader_id: core.driver.leader.toString(),
    raft_term: String(core.driver.currentTerm),
    raft_index: String(last),
    commit_index: String(commit),
    applied_index: String(core.stateMachine.appliedIndex),
    revision: String(kv.currentRevision),
    compact_revision: String(kv.compactRevision),
    db_size_bytes: String(core.snapshotBytes),
    version: ETCD_API_VERSION,
    errors: [],
    is_learner: core.stateMachine.members.get(core.config.memberId)?.isLearner ?? false,
    leader_address: leaderMember(core)?.apiAddress ?? '',
  };
}

export function memberList(core: NodeCore): NodeMemberListResponse {
  return {
    cluster_id: core.config.clusterId.toString(),
    member_id: core.config.memberId.toString(),
    raft_term: String(core.driver.currentTerm),
    members: core.stateMachine.members.members
      .map((record) => memberView(core, record.id)!)
      .map((m) => ({ id: m.id.toString(), name: m.name, peer_urls: m.peerAddress === '' ? [] : [`http://${m.peerAddress}`], api_address: m.apiAddress, is_learner: m.isLearner })),
    initial_member_ids: core.config.initialMemberIds.map((id) => id.toString()),
  };
}
