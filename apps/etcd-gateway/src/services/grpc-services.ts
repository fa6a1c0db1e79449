// Registers etcd's six gRPC services on the gateway's server from the RPC table, plus the
// streaming RPCs: Watch (relayed), LeaseKeepAlive (renewals at the leader) and Snapshot (relayed
// from the leader).
import type { CallContext, GrpcServer, ServerStreamHandler, ServiceHandlers } from '@ward/platform/grpc-server';
import type { EtcdServiceName } from '@ward/etcd/proto';
import { grpcCredentials } from '../identity/token-extraction';
import type { KeepAliveRelay } from './lease-keep-alive';
import { passThroughDefinition, watchRelayDefinition } from './pass-through';
import type { MaintenanceApi } from './maintenance-api';
import type { UnaryRpc } from './rpc-table';
import type { WatchRelay } from './watch-relay';

const SERVICES: readonly EtcdServiceName[] = ['KV', 'Auth', 'Maintenance', 'Cluster', 'Lease'];

function unaryHandlers(service: EtcdServiceName, table: readonly UnaryRpc[]): ServiceHandlers {
  const handlers: ServiceHandlers = {};
  for (const entry of table) {
    if (entry.service !== service || entry.httpStream) continue;
    handlers[entry.method] = (request: unknown, context: CallContext) => entry.call(request, grpcCredentials(context), context.cancellation);
  }
  return handlers;
}

/** The streaming methods of the five services: LeaseKeepAlive, and Snapshot relayed from the leader. */
function streamingHandlers(service: EtcdServiceName, keepAlive: KeepAliveRelay, maintenance: MaintenanceApi): ServiceHandlers {
  if (service === 'Lease') return { LeaseKeepAlive: (call: unknown, context: CallContext) => keepAlive.handle(call as never, context) };
  if (service === 'Maintenance') {
    const snapshot: ServerStreamHandler<unknown, Buffer> = (_request, call, context) => maintenance.snapshot(call, grpcCredentials(context), context.signal);
    return { Snapshot: snapshot };
  }
  return {};
}

export function registerEtcdServices(server: GrpcServer, table: readonly UnaryRpc[], watch: WatchRelay, keepAlive: KeepAliveRelay, maintenance: MaintenanceApi): void {
  for (const service of SERVICES) {
    server.addService(passThroughDefinition(service), { ...unaryHandlers(service, table), ...streamingHandlers(service, keepAlive, maintenance) });
  }
  server.addService(watchRelayDefinition(), { Watch: (call: unknown, context: CallContext) => watch.handle(call as never, context) });
}
