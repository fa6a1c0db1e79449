// The shapes of wardnode.Node answers.
import type { NodeResponse } from '@ward/etcd/proto';
import { WIRE_ERRORS, type EtcdWireError, type WireErrorName } from '@ward/etcd/wire-errors';
import { leaderMember, type NodeCore } from './node-core';

export function wireErrorAnswer(name: WireErrorName): NodeResponse {
  const spec = WIRE_ERRORS[name];
  return { error: { code: spec.code, message: spec.message } };
}

export function errorAnswer(error: EtcdWireError): NodeResponse {
  return { error: { code: error.grpcCode, message: error.message } };
}

/** A follower's answer to Propose: who leads, and where its internal API is (empty when unknown). */
export function notLeaderAnswer(core: NodeCore): NodeResponse {
  return { not_leader: { leader_id: core.driver.leader.toString(), leader_address: leaderMember(core)?.apiAddress ?? '' } };
}

export function responseAnswer(bytes: Uint8Array): NodeResponse {
  return { response: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
