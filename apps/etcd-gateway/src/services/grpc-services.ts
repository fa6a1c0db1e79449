// Registers etcd's six gRPC services on the gateway's server from the RPC table, plus the
// streaming RPCs: Watch (relayed), Snapshot (relayed from the leader) and LeaseKeepAlive (not offered).
import type { CallContext, GrpcServer, ServerStreamHandler, ServiceHandlers } from '@ward/platform/grpc-server';
import type { EtcdServiceName } from '@ward/etcd/proto';
import { tokenFromMetadata } from '../identity/token-extraction';
import { passThroughDefinition, watchRelayDefinition } from './pass-through';
import type { MaintenanceApi } from './maintenance-api';
import type { UnaryRpc } from './rpc-table';
import { unimplemented } from './unimplemented';
import type { WatchRelay } from './watch-relay';

const SERVICES: readonly EtcdServiceName[] = ['KV', 'Auth', 'Maintenance', 'Cluster', 'Lease'];

function unaryHandlers(service: EtcdServiceName, table: readonly UnaryRpc[]): ServiceHandlers {
  const handlers: ServiceHandlers = {};
  for (const entry of table) {
    if (entry.service !== service) continue;
    handlers[entry.method] = (request: unknown, context: CallContext) => entry.call(request, { token: tokenFromMetadata(context.metadata) }, context.signal);
  }
  return handlers;
}

/** The server-streaming methods: Snapshot is relayed, LeaseKeepAlive refused honestly. */
function streamingHandlers(service: EtcdServiceName, maintenance: MaintenanceApi): ServiceHandlers {
  if (service === 'Lease') return { LeaseKeepAlive: () => Promise.reject(unimplemented('LeaseKeepAlive')) };
  if (service === 'Maintenance') {
    const snapshot: ServerStreamHandler<unknown, Buffer> = (_request, call, context) => maintenance.snapshot(call, { token: tokenFromMetadata(context.metadata) }, context.signal);
    return { Snapshot: snapshot };
  }
  return {};
}

export function registerEtcdServices(server: GrpcServer, table: readonly UnaryRpc[], watch: WatchRelay, maintenance: MaintenanceApi): void {
  for (const service of SERVICES) {
    server.addService(passThroughDefinition(service), { ...unaryHandlers(service, table), ...streamingHandlers(service, maintenance) });
  }
  server.addService(watchRelayDefinition(), { Watch: (call: unknown, context: CallContext) => watch.handle(call as never, context) });
}
