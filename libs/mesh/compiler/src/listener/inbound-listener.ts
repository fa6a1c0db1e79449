// The sidecar's `virtualInbound` listener (spec §4.4-4.5): blackhole chain for the listener's own
// port, catch-all passthrough chains, per-port passthrough chains for port-level mTLS on
// undeclared ports, then one group of chains per workload port, sorted by port. Authorization
// filters go into every chain except the blackhole. The network and HTTP filter lists carry what
// decides access (authz, TLS, routing to the inbound cluster); istiod's metadata-exchange,
// telemetry and fault/cors filters are not emitted.
import type { FilterChain, HttpConnectionManager, HttpFilter, Listener, NetworkFilter } from '@ward/mesh/envoy-api';
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';
import { mtlsModeForPort, type EffectiveMtls, type MtlsMode } from '../authn/peer-authentication';
import type { DiagnosticSink } from '../diagnostics';
import { protocolClass, type MeshSettings, type ProtocolClass, type Workload } from '../input';
import { chainOptions, type ChainOption } from './filter-chain-options';
import { inboundListenerFilters } from './listener-filters';
import { inboundTlsContext, tlsTransportSocket } from './tls-context';

/** Names istiod gives the inbound listener and its fixed chains and clusters. */
export const INBOUND_NAMES = Object.freeze({
  listener: 'virtualInbound',
  catchAllHttpChain: 'virtualInbound-catchall-http',
  blackholeChain: 'virtualInbound-blackhole',
  passthroughCluster: 'InboundPassthroughCluster',
  blackholeCluster: 'BlackHoleCluster',
});

const BIND = '0.0.0.0';

/** One port's chain group before it becomes filter chains. */
export interface ChainConfig {
  /** Container port; 0 for the catch-all passthrough group. */
  readonly port: number;
  readonly passthrough: boolean;
  readonly protocol: ProtocolClass;
  readonly mode: MtlsMode;
}

/** The authorization filters placed in chains. */
export interface ChainAuthz {
  readonly http: readonly HttpFilter[];
  readonly tcp: readonly NetworkFilter[];
}

/** Name of a chain: fixed names for passthrough, `<bind>_<port>` otherwise. */
export function chainName(config: ChainConfig, chainClass: 'HTTP' | 'TCP'): string {
  if (config.passthrough) return chainClass === 'HTTP' ? INBOUND_NAMES.catchAllHttpChain : INBOUND_NAMES.listener;
  return `${BIND}_${config.port}`;
}

/** Cluster a chain forwards to. */
export function chainCluster(config: ChainConfig): string {
  return config.passthrough ? INBOUND_NAMES.passthroughCluster : `inbound|${config.port}||`;
}

/** The HTTP connection manager's stat prefix (istiod appends the `;` delimiter). */
export function httpStatPrefix(config: ChainConfig): string {
  return config.passthrough ? `${INBOUND_NAMES.passthroughCluster};` : `inbound_${BIND}_${config.port};`;
}

function connectionManager(config: ChainConfig, authz: ChainAuthz): HttpConnectionManager {
  const cluster = chainCluster(config);
  return {
    statPrefix: httpStatPrefix(config),
    codecType: 'AUTO',
    routeConfig: {
      name: cluster,
      validateClusters: false,
      virtualHosts: [
        {
          name: `inbound|http|${config.port}`,
          domains: ['*'],
          routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster, timeout: '0s' } }],
        },
      ],
    },
    httpFilters: [...authz.http, { name: FILTER_NAMES.router, typedConfig: { '@type': TYPE_URLS.router } }],
    useRemoteAddress: false,
    normalizePath: true,
    pathWithEscapedSlashesAction: 'KEEP_UNCHANGED',
    forwardClientCertDetails: 'APPEND_FORWARD',
    setCurrentClientCertDetails: { subject: true, dns: true, uri: true },
    upgradeConfigs: [{ upgradeType: 'websocket' }],
    streamIdleTimeout: '0s',
  };
}

function networkFilters(config: ChainConfig, option: ChainOption, authz: ChainAuthz): NetworkFilter[] {
  if (option.chainClass === 'HTTP') {
    return [{ name: FILTER_NAMES.httpConnectionManager, typedConfig: { '@type': TYPE_URLS.httpConnectionManager, ...connectionManager(config, authz) } }];
  }
  const cluster = chainCluster(config);
  return [...authz.tcp, { name: FILTER_NAMES.tcpProxy, typedConfig: { '@type': TYPE_URLS.tcpProxy, statPrefix: cluster, cluster } }];
}

function chainsFor(config: ChainConfig, mesh: MeshSettings, authz: ChainAuthz): FilterChain[] {
  return chainOptions(config.mode, config.protocol).map((option) => ({
    name: chainName(config, option.chainClass),
    filterChainMatch: {
      ...(config.port > 0 ? { destinationPort: config.port } : {}),
      transportProtocol: option.transportProtocol,
      ...(option.applicationProtocols !== undefined ? { applicationProtocols: [...option.applicationProtocols] } : {}),
    },
    filters: networkFilters(config, option, authz),
    ...(option.mtls ? { transportSocket: tlsTransportSocket(inboundTlsContext(option.chainClass, mesh)) } : {}),
  }));
}

function blackholeChain(mesh: MeshSettings): FilterChain {
  return {
    name: INBOUND_NAMES.blackholeChain,
    filterChainMatch: { destinationPort: mesh.inboundListenPort },
    filters: [{ name: FILTER_NAMES.tcpProxy, typedConfig: { '@type': TYPE_URLS.tcpProxy, statPrefix: INBOUND_NAMES.blackholeCluster, cluster: INBOUND_NAMES.blackholeCluster } }],
  };
}

/** The chain groups in listener order: catch-all, per-port passthrough, then workload ports. */
export function inboundChainConfigs(workload: Workload, mtls: EffectiveMtls, sink: DiagnosticSink): ChainConfig[] {
  const servicePorts = new Map<number, ChainConfig>();
  for (const port of workload.ports) {
    if (servicePorts.has(port.port)) {
      sink.push({ code: 'COMPILE_PORT_CONFLICT', severity: 'info', resource: { kind: 'Workload', namespace: workload.namespace, name: workload.name ?? '' }, path: 'workload.ports', message: `port ${port.port} is declared more than once; the first declaration is used` });
      continue;
    }
    servicePorts.set(port.port, { port: port.port, passthrough: false, protocol: protocolClass(port.protocol), mode: mtlsModeForPort(mtls, port.port) });
  }
  const passthrough: ChainConfig[] = [{ port: 0, passthrough: true, protocol: 'auto', mode: mtls.mode }];
  for (const [port, mode] of mtls.perPort) {
    if (servicePorts.has(port)) continue;
    sink.push({ code: 'COMPILE_PORT_MTLS_PASSTHROUGH', severity: 'info', resource: { kind: 'PeerAuthentication', namespace: mtls.workloadPolicy?.namespace ?? '', name: mtls.workloadPolicy?.name ?? '' }, path: `spec.portLevelMtls[${port}]`, message: `port ${port} is not a workload port: it gets its own passthrough chains in ${mode} mode` });
    passthrough.push({ port, passthrough: true, protocol: 'auto', mode });
  }
  return [...passthrough, ...[...servicePorts.values()].sort((a, b) => a.port - b.port)];
}

/** Builds `virtualInbound`. */
export function buildInboundListener(workload: Workload, mesh: MeshSettings, mtls: EffectiveMtls, authz: ChainAuthz, sink: DiagnosticSink): Listener {
  const chains = [blackholeChain(mesh), ...inboundChainConfigs(workload, mtls, sink).flatMap((config) => chainsFor(config, mesh, authz))];
  return {
    name: INBOUND_NAMES.listener,
    address: { socketAddress: { address: BIND, portValue: mesh.inboundListenPort } },
    trafficDirection: 'INBOUND',
    continueOnListenerFiltersTimeout: true,
    listenerFiltersTimeout: mesh.protocolDetectionTimeout,
    listenerFilters: inboundListenerFilters(chains),
    filterChains: chains,
  };
}
