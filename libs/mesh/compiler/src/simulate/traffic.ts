// What a simulated client does: which port it connects to, whether it speaks mesh mTLS, its own
// TLS or plaintext, who it is, and (for HTTP) the request it sends.
import { SPIFFE_PREFIX } from '../authz/string-matchers';
import { SimulatorError } from './errors';
import type { PeerCertificate } from './rbac-engine';

/** How the client's bytes start: a sidecar's mTLS, the application's own TLS, or plaintext. */
export type ClientTransport = 'mtls' | 'tls' | 'plaintext';

/** A client certificate as the server sees it. `trusted: false` = not signed by the mesh root. */
export interface SimulatedCertificate {
  readonly uriSans?: readonly string[];
  readonly dnsSans?: readonly string[];
  readonly subject?: string;
  readonly trusted?: boolean;
}

/** An HTTP request (absent: the client speaks a non-HTTP protocol). */
export interface SimulatedHttpRequest {
  readonly method: string;
  /** Path with optional query, e.g. `/admin/x?y=1`. */
  readonly path: string;
  /** Host / `:authority`. */
  readonly host: string;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly version?: 'http/1.1' | 'h2';
  /** A validated JWT's `iss/sub` (what RequestAuthentication would establish). */
  readonly requestPrincipal?: string;
  /** Further validated JWT claims (`aud`, `azp`, `groups`, ...). */
  readonly jwtClaims?: Readonly<Record<string, unknown>>;
}

/** One connection (and optionally one request on it) to the workload. */
export interface SimulatedTraffic {
  /** Container port the client reaches (after iptables redirection to 15006). */
  readonly port: number;
  readonly transport: ClientTransport;
  /** Caller identity for mTLS, `cluster.local/ns/a/sa/b` or a full `spiffe://` URI. */
  readonly sourcePrincipal?: string;
  /** Explicit client certificate; `null` sends none. Overrides `sourcePrincipal`. */
  readonly peerCertificate?: SimulatedCertificate | null;
  readonly sourceIp?: string;
  /** Original client address; defaults to the rightmost x-forwarded-for entry (HTTP), else `sourceIp`. */
  readonly remoteIp?: string;
  readonly destinationIp?: string;
  readonly sni?: string;
  /** ALPN offered in the ClientHello; defaults follow Istio's client sidecar. */
  readonly alpn?: readonly string[];
  readonly http?: SimulatedHttpRequest;
  /** What an external authorizer answers when a CUSTOM rule sends the request to it. */
  readonly extAuthz?: 'allow' | 'deny';
}

/** Defaults for addresses not given. */
export const DEFAULT_TRAFFIC_ADDRESSES = Object.freeze({ sourceIp: '10.0.0.2', destinationIp: '10.0.0.1' });

/** Default identity of a mesh client when none is given. */
export const DEFAULT_SOURCE_PRINCIPAL = 'cluster.local/ns/default/sa/default';

/** `cluster.local/ns/a/sa/b` → `spiffe://cluster.local/ns/a/sa/b` (a URI is kept). */
export function spiffeUri(principal: string): string {
  return principal.startsWith(SPIFFE_PREFIX) ? principal : `${SPIFFE_PREFIX}${principal}`;
}

/** The certificate the client presents, or undefined for none. */
export function clientCertificate(traffic: SimulatedTraffic): (PeerCertificate & { trusted: boolean }) | undefined {
  if (traffic.peerCertificate === null) return undefined;
  if (traffic.peerCertificate !== undefined) {
    return {
      uriSans: traffic.peerCertificate.uriSans ?? [],
      dnsSans: traffic.peerCertificate.dnsSans ?? [],
      subject: traffic.peerCertificate.subject ?? '',
      trusted: traffic.peerCertificate.trusted ?? true,
    };
  }
  if (traffic.transport !== 'mtls') return undefined;
  return { uriSans: [spiffeUri(traffic.sourcePrincipal ?? DEFAULT_SOURCE_PRINCIPAL)], dnsSans: [], subject: '', trusted: true };
}

/** ALPN the client offers in its ClientHello. */
export function clientAlpn(traffic: SimulatedTraffic): readonly string[] {
  if (traffic.alpn !== undefined) return traffic.alpn;
  if (traffic.transport === 'mtls') {
    if (traffic.http === undefined) return ['istio-peer-exchange', 'istio'];
    return traffic.http.version === 'h2' ? ['istio-h2'] : ['istio-http/1.1'];
  }
  if (traffic.transport === 'tls' && traffic.http !== undefined) return traffic.http.version === 'h2' ? ['h2'] : ['http/1.1'];
  return [];
}

const MAX_HEADERS = 256;
const MAX_TEXT = 64 * 1024;

/** Rejects traffic the simulator cannot represent (clear error, never a guess). */
export function validateTraffic(traffic: SimulatedTraffic): void {
  const bad = (message: string, detail: string): never => {
    throw new SimulatorError('ERR_MESH_SIM_INVALID_TRAFFIC', message, detail);
  };
  if (!Number.isInteger(traffic.port) || traffic.port < 1 || traffic.port > 65535) bad('port must be in 1..65535', String(traffic.port));
  if (!['mtls', 'tls', 'plaintext'].includes(traffic.transport)) bad('transport must be mtls, tls or plaintext', String(traffic.transport));
  const http = traffic.http;
  if (http === undefined) return;
  if (Object.keys(http.headers ?? {}).length > MAX_HEADERS) bad('too many headers', String(Object.keys(http.headers ?? {}).length));
  for (const text of [http.method, http.path, http.host]) if (typeof text !== 'string' || text.length > MAX_TEXT) bad('method, path and host must be strings within 64 KiB', String(text));
  if (!http.path.startsWith('/')) bad('path must start with /', http.path);
}
