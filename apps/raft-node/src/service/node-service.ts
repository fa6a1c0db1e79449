// The wardnode.Node handlers (libs/etcd/proto/ward/node.proto is their spec).
import type { ServerDuplexStream, ServerWritableStream } from '@grpc/grpc-js';
import type {
  AuthCheckRequest__Output,
  ExchangeAnswers,
  ExchangeCalls__Output,
  FollowMessage,
  FollowRequest__Output,
  NodeLeaseRequest__Output,
  NodeMaintainRequest__Output,
  NodeMemberChangeRequest__Output,
  NodeResponse,
  NodeSnapshotRequest__Output,
  NodeWatchRequest__Output,
  NodeWatchResponse,
  ProposeRequest__Output,
  ReadRequest__Output,
  ResolveTokenRequest__Output,
} from '@ward/etcd/proto';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { GrpcStatusError, type CallContext, type ServiceHandlers } from '@ward/platform/grpc-server';
import { authCheck, resolveToken } from './auth';
import { serveExchange } from './exchange';
import { maintain } from './maintain';
import { memberChange } from './member-change';
import type { NodeCore } from './node-core';
import { lease } from './lease';
import type { LeaderWatchCall } from './leader-watch';
import { propose } from './propose';
import { read } from './read';
import { SnapshotStreams } from './snapshot';
import { memberList, nodeStatus } from './status';

/** What a removed member answers to every call (UNAVAILABLE: gateways go to another member). */
export const MEMBER_REMOVED_MESSAGE = 'etcdserver: the member has been permanently removed from the cluster';

export function nodeServiceHandlers(core: NodeCore): ServiceHandlers {
  const handlers = memberHandlers(core);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const guard = (handler: (...args: any[]) => Promise<unknown>) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    (...args: any[]): Promise<unknown> => (core.removed ? Promise.reject(new GrpcStatusError(GrpcStatus.UNAVAILABLE, MEMBER_REMOVED_MESSAGE)) : handler(...args));
  return Object.fromEntries(Object.entries(handlers).map(([name, handler]) => [name, guard(handler)])) as ServiceHandlers;
}

function memberHandlers(core: NodeCore): ServiceHandlers {
  const snapshots = new SnapshotStreams(core);
  return {
    Propose: (request: ProposeRequest__Output) => propose(core, request),
    Read: (request: ReadRequest__Output) => read(core, request),
    Exchange: (call: ServerDuplexStream<ExchangeCalls__Output, ExchangeAnswers>, context: CallContext) => serveExchange(core, call, context),
    Watch: (call: ServerDuplexStream<NodeWatchRequest__Output, NodeWatchResponse>) => core.watches.serve(call),
    AuthCheck: (request: AuthCheckRequest__Output) => authCheck(core, request),
    ResolveToken: (request: ResolveTokenRequest__Output) => resolveToken(core, request),
    Status: async () => nodeStatus(core),
    MemberList: async () => memberList(core),
    MemberChange: (request: NodeMemberChangeRequest__Output) => memberChange(core, request),
    Lease: (request: NodeLeaseRequest__Output) => lease(core, request),
    Maintain: (request: NodeMaintainRequest__Output) => maintain(core, request),
    Snapshot: (request: NodeSnapshotRequest__Output, call: ServerWritableStream<NodeSnapshotRequest__Output, NodeResponse>) => snapshots.serve(request, call),
    Follow: (_request: FollowRequest__Output, call: ServerWritableStream<FollowRequest__Output, FollowMessage>) => core.follows.serve(core, call),
    WatchLeader: (_request: unknown, call: LeaderWatchCall) => core.leaderWatches.serve(call),
  };
}
