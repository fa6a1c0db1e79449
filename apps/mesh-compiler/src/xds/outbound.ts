/**
 * The resources istiod's gRPC generator (`pilot/pkg/networking/grpcgen`: lds.go, rds.go, cds.go,
 * and EDS) serves an xDS *client* for a service, built here from the services declared to ward-mesh:
 *
 * - LDS `<host>:<port>` (as requested; `<name>`, `<name>.<ns>` and `<name>.<ns>.svc` in the
 *   client's namespace expand to `<name>.<ns>.svc.cluster.local`; without a port, every port):
 *   address `<clusterIP>:<port>`, an `api_listener` HttpConnectionManager with the fault and
 *   router filters and RDS over ADS for route `outbound|<port>||<fqdn>`;
 * - RDS `outbound|<port>||<fqdn>`: one virtual host `<fqdn>:<port>` whose domains are the names a
 *   client may dial it by, one route `default` (prefix `/`) to the cluster of the same name;
 * - CDS `outbound|<port>||<fqdn>`: an EDS cluster reading its endpoints over ADS (no
 *   DestinationRule: subset clusters, TLS and other load balancing are not served);
 * - EDS `outbound|<port>||<fqdn>`: the declared endpoints, one locality, each weight 1.
 *
 * Pure functions of the declared services: no I/O.
 */
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';
import { DNS_DOMAIN, type MeshService, type ServicePort } from './services';

const SUFFIX = `.svc.${DNS_DOMAIN}`;

/** `outbound|<port>|<subset>|<host>` (istiod's subset key), or undefined. */
export function parseClusterKey(name: string): { port: number; subset: string; host: string } | undefined {
  const match = /^outbound\|(\d{1,5})\|([^|]*)\|([^|]+)$/.exec(name);
  if (match === null) return undefined;
  const port = Number(match[1]);
  if (port < 1 || port > 65535) return undefined;
  return { port, subset: match[2] ?? '', host: match[3] ?? '' };
}

export function clusterKey(host: string, port: number): string {
  return `outbound|${port}||${host}`;
}

/** The FQDN a requested host stands for from a client in `namespace` (istiod's tryFindFQDN). */
export function fqdnOf(host: string, namespace: string): string {
  if (!host.includes('.')) return `${host}.${namespace}${SUFFIX}`;
  for (const suffix of [`.${namespace}`, `.${namespace}.svc`]) {
    if (host.endsWith(suffix) && host.length > suffix.length) return `${host.slice(0, -suffix.length)}.${namespace}${SUFFIX}`;
  }
  return host;
}

/** `host[:port]` → host and port (undefined: every port); undefined when the port is malformed. */
export function splitListenerName(name: string): { host: string; port?: number } | undefined {
  const colon = name.lastIndexOf(':');
  if (colon < 0 || name.includes(']')) return name === '' ? undefined : { host: name };
  const portText = name.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port < 1 || port > 65535 || colon === 0) return undefined;
  return { host: name.slice(0, colon), port };
}

function findService(services: readonly MeshService[], host: string): MeshService | undefined {
  return services.find((s) => s.hostname === host);
}

function portOf(service: MeshService, port: number): ServicePort | undefined {
  return service.ports.find((p) => p.port === port);
}

/** The outbound listeners for one requested LDS name (grpcgen serves one per port when the name has none). */
export function outboundListeners(name: string, namespace: string, services: readonly MeshService[]): Array<{ name: string; json: object }> {
  const split = splitListenerName(name);
  if (split === undefined) return [];
  const service = findService(services, fqdnOf(split.host, namespace));
  if (service === undefined) return [];
  const ports = split.port === undefined ? service.ports : service.ports.filter((p) => p.port === split.port);
  // Named `host:port` as grpcgen names them, so a request without a port gets listeners under
  // other names than it asked for (a client must dial with the port).
  return ports.map((p) => {
    const listenerName = `${split.host}:${p.port}`;
    return {
      name: listenerName,
      json: {
        name: listenerName,
        address: { socketAddress: { address: service.address, portValue: p.port } },
        apiListener: {
          apiListener: {
            '@type': TYPE_URLS.httpConnectionManager,
            httpFilters: [
              { name: FILTER_NAMES.httpFault, typedConfig: { '@type': TYPE_URLS.httpFault } },
              { name: FILTER_NAMES.router, typedConfig: { '@type': TYPE_URLS.router } },
            ],
            rds: { configSource: { ads: {} }, routeConfigName: clusterKey(service.hostname, p.port) },
          },
        },
      },
    };
  });
}

/** Names a client in `namespace` may dial the service port by (the virtual host's domains). */
function domainsOf(service: MeshService, port: number, namespace: string): string[] {
  const hosts = [service.hostname, `${service.name}.${service.namespace}.svc`, `${service.name}.${service.namespace}`];
  if (service.namespace === namespace) hosts.push(service.name);
  if (service.address !== '0.0.0.0') hosts.push(service.address);
  return hosts.flatMap((h) => [h, `${h}:${port}`]);
}

export function outboundRoute(name: string, namespace: string, services: readonly MeshService[]): object | undefined {
  const key = parseClusterKey(name);
  if (key === undefined || key.subset !== '') return undefined;
  const service = findService(services, key.host);
  if (service === undefined || portOf(service, key.port) === undefined) return undefined;
  return {
    name,
    virtualHosts: [
      {
        name: `${service.hostname}:${key.port}`,
        domains: domainsOf(service, key.port, namespace),
        routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: clusterKey(service.hostname, key.port) } }],
      },
    ],
  };
}

export function outboundCluster(name: string, services: readonly MeshService[]): object | undefined {
  const key = parseClusterKey(name);
  if (key === undefined || key.subset !== '') return undefined;
  const service = findService(services, key.host);
  if (service === undefined || portOf(service, key.port) === undefined) return undefined;
  return { name, type: 'EDS', edsClusterConfig: { serviceName: name, edsConfig: { ads: {} } } };
}

export function outboundEndpoints(name: string, services: readonly MeshService[]): object | undefined {
  const key = parseClusterKey(name);
  if (key === undefined || key.subset !== '') return undefined;
  const service = findService(services, key.host);
  if (service === undefined || portOf(service, key.port) === undefined) return undefined;
  const endpoints = service.endpoints.get(key.port) ?? [];
  if (endpoints.length === 0) return { clusterName: name };
  return {
    clusterName: name,
    endpoints: [
      {
        locality: {},
        lbEndpoints: endpoints.map((e) => ({ endpoint: { address: { socketAddress: { address: e.ip, portValue: e.port } } }, healthStatus: 'HEALTHY', loadBalancingWeight: 1 })),
        loadBalancingWeight: endpoints.length,
      },
    ],
  };
}
