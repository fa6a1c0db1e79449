// A promise-based client of one member's internal API (wardnode.Node), for tests and benchmarks.
import { credentials, type ChannelCredentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { decodeApplyResponse, encodeProposal } from '@ward/etcd/api-mapping';
import type { ApplyRequest, ApplyResponse } from '@ward/etcd/apply';
import { wardNodeGrpc, type NodeMemberListResponse__Output, type NodeResponse__Output, type NodeStatusResponse__Output } from '@ward/etcd/proto';

/** What a Propose or Read came back with. */
export type NodeAnswer =
  | { readonly kind: 'ok'; readonly response: ApplyResponse; readonly revision: number; readonly raftTerm: number; readonly memberId: bigint }
  | { readonly kind: 'error'; readonly code: number; readonly message: string }
  | { readonly kind: 'notLeader'; readonly leaderId: bigint; readonly leaderAddress: string };

type Unary<Req, Res> = (request: Req, options: { deadline: Date }, callback: (error: ServiceError | null, response?: Res) => void) => void;

interface RawNodeClient extends Client {
  Propose: Unary<object, NodeResponse__Output>;
  Read: Unary<object, NodeResponse__Output>;
  Status: Unary<object, NodeStatusResponse__Output>;
  MemberList: Unary<object, NodeMemberListResponse__Output>;
  MemberChange: Unary<object, NodeResponse__Output>;
  Maintain: Unary<object, NodeResponse__Output>;
  ResolveToken: Unary<object, { valid: boolean; username: string; auth_revision: string }>;
  AuthCheck: Unary<object, unknown>;
}

export class NodeApiClient {
  private readonly client: RawNodeClient;

  /** `channelCredentials`: TLS with a client certificate for members that take only mutual TLS. */
  constructor(
    readonly address: string,
    channelCredentials: ChannelCredentials = credentials.createInsecure(),
  ) {
    const Node = wardNodeGrpc().Node as unknown as new (address: string, creds: ChannelCredentials, options: object) => RawNodeClient;
    this.client = new Node(address, channelCredentials, { 'grpc.max_receive_message_length': 256 * 1024 * 1024, 'grpc.enable_retries': 0 });
  }

  /** Proposes `request`; `deadlineMs` bounds the RPC (the member waits `timeoutMs` for apply). */
  propose(request: ApplyRequest, timeoutMs: number, deadlineMs = timeoutMs + 2000): Promise<NodeAnswer> {
    return this.call<NodeResponse__Output>('Propose', { entry: Buffer.from(encodeProposal(request)), timeout_ms: timeoutMs }, deadlineMs).then((r) => answerOf(request, r));
  }

  read(request: ApplyRequest, serializable: boolean, timeoutMs: number, deadlineMs = timeoutMs + 2000): Promise<NodeAnswer> {
    return this.call<NodeResponse__Output>('Read', { entry: Buffer.from(encodeProposal(request)), serializable, timeout_ms: timeoutMs }, deadlineMs).then((r) => answerOf(request, r));
  }

  status(deadlineMs = 2000): Promise<NodeStatusResponse__Output> {
    return this.call('Status', {}, deadlineMs);
  }

  memberList(deadlineMs = 2000): Promise<NodeMemberListResponse__Output> {
    return this.call('MemberList', {}, deadlineMs);
  }

  /** Hands leadership to `target` (wardnode Maintain MOVE_LEADER; auth off): the raw answer. */
  moveLeader(target: bigint, timeoutMs = 5000): Promise<NodeResponse__Output> {
    return this.call('Maintain', { kind: 'MOVE_LEADER', target_id: target.toString(), timeout_ms: timeoutMs }, timeoutMs + 2000);
  }

  /** A membership change (wardnode MemberChange): the raw answer (an etcd Member*Response in `response`). */
  memberChange(request: { kind: 'ADD' | 'REMOVE' | 'UPDATE' | 'PROMOTE'; id?: bigint; peer_urls?: string[]; is_learner?: boolean; username?: string; timeout_ms?: number }, deadlineMs = 10_000): Promise<NodeResponse__Output> {
    return this.call('MemberChange', { ...request, id: (request.id ?? 0n).toString() }, deadlineMs);
  }

  resolveToken(token: string, timeoutMs: number): Promise<{ valid: boolean; username: string; auth_revision: string; leader_address: string }> {
    return this.call('ResolveToken', { token, timeout_ms: timeoutMs }, timeoutMs + 2000);
  }

  authCheck(name: string, deadlineMs = 7000): Promise<unknown> {
    return this.call('AuthCheck', { name }, deadlineMs);
  }

  /** The raw grpc-js client (for Watch streams). */
  get raw(): Client {
    return this.client;
  }

  close(): void {
    this.client.close();
  }

  private call<Res>(method: 'Propose' | 'Read' | 'Status' | 'MemberList' | 'MemberChange' | 'Maintain' | 'ResolveToken' | 'AuthCheck', request: object, deadlineMs: number): Promise<Res> {
    return new Promise((resolve, reject) => {
      const fn = this.client[method] as unknown as Unary<object, Res>;
      fn.call(this.client, request, { deadline: new Date(Date.now() + deadlineMs) }, (error, response) => {
        if (error) reject(error);
        else resolve(response as Res);
      });
    });
  }
}

function answerOf(request: ApplyRequest, response: NodeResponse__Output): NodeAnswer {
  switch (response.result) {
    case 'response': {
      const decoded = decodeApplyResponse(request.operation.type, response.response!);
      return { kind: 'ok', response: decoded.response, revision: decoded.header.revision, raftTerm: decoded.header.raftTerm, memberId: decoded.header.memberId };
    }
    case 'error':
      return { kind: 'error', code: response.error!.code, message: response.error!.message };
    case 'not_leader':
      return { kind: 'notLeader', leaderId: BigInt(response.not_leader!.leader_id), leaderAddress: response.not_leader!.leader_address };
    default:
      throw new Error('NodeResponse without a result');
  }
}
