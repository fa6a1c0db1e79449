// The wardnode.Node handlers (libs/etcd/proto/ward/node.proto is their spec).
import type { ServerDuplexStream, ServerWritableStream } from '@grpc/grpc-js';
import type {
  AuthCheckRequest__Output,
  ExchangeAnswers,
  ExchangeCalls__Output,
  NodeLeaseRequest__Output,
  NodeMaintainRequest__Output,
  NodeResponse,
  NodeSnapshotRequest__Output,
  NodeWatchRequest__Output,
  NodeWatchResponse,
  ProposeRequest__Output,
  ReadRequest__Output,
  ResolveTokenRequest__Output,
} from '@ward/etcd/proto';
import type { CallContext, ServiceHandlers } from '@ward/platform/grpc-server';
import { authCheck, resolveToken } from './auth';
import { serveExchange } from './exchange';
import { maintain } from './maintain';
import type { NodeCore } from './node-core';
import { lease } from './lease';
import { propose } from './propose';
import { read } from './read';
import { SnapshotStreams } from './snapshot';
import { memberList, nodeStatus } from './status';

export function nodeServiceHandlers(core: NodeCore): ServiceHandlers {
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
    Lease: (request: NodeLeaseRequest__Output) => lease(core, request),
    Maintain: (request: NodeMaintainRequest__Output) => maintain(core, request),
    Snapshot: (request: NodeSnapshotRequest__Output, call: ServerWritableStream<NodeSnapshotRequest__Output, NodeResponse>) => snapshots.serve(request, call),
  };
}
