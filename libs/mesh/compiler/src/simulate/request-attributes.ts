// What the RBAC filters of a chain see for one connection or request: addresses, SNI, the peer
// certificate and, for HTTP, the headers as the inbound HCM hands them to filters (normalized
// path, pseudo-headers), the URL path and the JWT metadata RequestAuthentication would write.
import { parseIp, type IpAddress } from '../authz/cidr';
import { SimulatorError } from './errors';
import type { DetectedConnection } from './filter-chain-match';
import type { DynamicMetadata } from './matchers';
import { normalizeRequestPath, pathWithoutQuery } from './path-normalization';
import type { PeerCertificate, RbacAttributes } from './rbac-engine';
import { DEFAULT_TRAFFIC_ADDRESSES, type SimulatedHttpRequest, type SimulatedTraffic } from './traffic';

/** Addresses parsed recently (traffic repeats a few addresses); bounded, cleared when full. */
const MAX_CACHED_ADDRESSES = 1_024;
const addresses = new Map<string, IpAddress>();

/** Parses an address given in traffic; throws a coded error for an unreadable one. */
export function requireIp(text: string, field: string): IpAddress {
  const cached = addresses.get(text);
  if (cached !== undefined) return cached;
  const parsed = parseIp(text);
  if (parsed === undefined) throw new SimulatorError('ERR_MESH_SIM_INVALID_TRAFFIC', `${field} is not an IP address`, text);
  if (addresses.size >= MAX_CACHED_ADDRESSES) addresses.clear();
  addresses.set(text, parsed);
  return parsed;
}

function requestHeaders(request: SimulatedHttpRequest, path: string, tls: boolean): Map<string, string[]> {
  const headers = new Map<string, string[]>();
  const given = request.headers;
  if (given !== undefined) {
    for (const name of Object.keys(given)) {
      const value = given[name] as string | readonly string[];
      const key = name.toLowerCase();
      const values = headers.get(key);
      if (values === undefined) headers.set(key, typeof value === 'string' ? [value] : [...value]);
      else if (typeof value === 'string') values.push(value);
      else values.push(...value);
    }
  }
  headers.set(':authority', [request.host]);
  headers.set(':method', [request.method]);
  headers.set(':path', [path]);
  headers.set(':scheme', [tls ? 'https' : 'http']);
  return headers;
}

function jwtMetadata(request: SimulatedHttpRequest): DynamicMetadata {
  const metadata: DynamicMetadata = new Map();
  if (request.requestPrincipal !== undefined || request.jwtClaims !== undefined) {
    const slash = request.requestPrincipal?.lastIndexOf('/') ?? -1;
    const principal = request.requestPrincipal === undefined ? {} : slash < 0 ? { iss: request.requestPrincipal } : { iss: request.requestPrincipal.slice(0, slash), sub: request.requestPrincipal.slice(slash + 1) };
    metadata.set('envoy.filters.http.jwt_authn', { payload: { ...(request.jwtClaims ?? {}), ...principal } });
  }
  return metadata;
}

/**
 * The inbound HCM has use_remote_address false and no trusted hops: the downstream remote
 * address is the rightmost x-forwarded-for entry when there is one (unless `remoteIp` is given).
 */
function httpRemoteIp(fallback: IpAddress, traffic: SimulatedTraffic, headers: ReadonlyMap<string, readonly string[]>): IpAddress {
  if (traffic.remoteIp !== undefined) return fallback;
  const forwarded = headers.get('x-forwarded-for');
  if (forwarded === undefined) return fallback;
  const entries = forwarded.join(',').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const last = entries.at(-1);
  return (last === undefined ? undefined : parseIp(last)) ?? fallback;
}

/**
 * The attributes of `traffic` on a chosen chain: `peer` is the verified client certificate when
 * the chain terminated mTLS; `http` is true on an HTTP connection manager (`tls`: the HCM saw TLS).
 */
export function requestAttributes(traffic: SimulatedTraffic, detected: DetectedConnection, peer: PeerCertificate | undefined, http: boolean, tls: boolean): RbacAttributes {
  const sourceIp = traffic.sourceIp ?? DEFAULT_TRAFFIC_ADDRESSES.sourceIp;
  const destinationIp = requireIp(traffic.destinationIp ?? DEFAULT_TRAFFIC_ADDRESSES.destinationIp, 'destinationIp');
  const directRemoteIp = requireIp(sourceIp, 'sourceIp');
  const remoteIp = requireIp(traffic.remoteIp ?? sourceIp, 'remoteIp');
  const identity = peer !== undefined ? { peerCertificate: peer, peerPrincipalFilterState: peer.uriSans[0] ?? '' } : {};
  const request = traffic.http;
  if (!http || request === undefined) {
    return { destinationIp, destinationPort: traffic.port, directRemoteIp, remoteIp, requestedServerName: detected.sni, ...identity, headers: new Map(), metadata: new Map() };
  }
  const path = normalizeRequestPath(request.path);
  const headers = requestHeaders(request, path, tls);
  return {
    destinationIp,
    destinationPort: traffic.port,
    directRemoteIp,
    remoteIp: httpRemoteIp(remoteIp, traffic, headers),
    requestedServerName: detected.sni,
    ...identity,
    headers,
    urlPath: pathWithoutQuery(path),
    metadata: jwtMetadata(request),
  };
}
