// Simulates one connection (and request) against a compiled virtualInbound listener, the way
// Envoy processes it: listener filters, filter-chain selection, mTLS handshake, then the
// chain's network filters (TCP) or HTTP filters (HCM), reporting stats and the deciding filter.
import type { DownstreamTlsContext, FilterChain, HttpConnectionManager, Listener, MetadataMatcher, NetworkFilter } from '@ward/mesh/envoy-api';
import { FILTER_NAMES } from '@ward/mesh/envoy-api';
import { parseIp } from '../authz/cidr';
import type { WorkloadConfig } from '../compile-workload';
import { detectConnection, selectFilterChain, type DetectedConnection } from './filter-chain-match';
import { runExtAuthzFilter, runRbacFilter, type RbacFilterConfig, type StepContext } from './filter-steps';
import { matchString, type DynamicMetadata } from './matchers';
import { normalizeRequestPath, pathWithoutQuery } from './path-normalization';
import { requireIp, type PeerCertificate, type RbacAttributes } from './rbac-engine';
import type { Decision, FilterEvaluation, SelectedChain, SimulationResult } from './result';
import { DEFAULT_TRAFFIC_ADDRESSES, clientAlpn, clientCertificate, validateTraffic, type SimulatedTraffic } from './traffic';

const RBAC_DENIED_BODY = 'RBAC: access denied';

type ExtAuthzConfig = { readonly filterEnabledMetadata?: MetadataMatcher };

function listenerStatRoot(listener: Listener): string {
  const address = listener.address?.socketAddress;
  return `listener.${address?.address ?? '0.0.0.0'}_${address?.portValue ?? 0}.`;
}

function tlsContextOf(chain: FilterChain): DownstreamTlsContext | undefined {
  const socket = chain.transportSocket;
  return socket?.name === FILTER_NAMES.tlsTransportSocket ? (socket.typedConfig as DownstreamTlsContext | undefined) : undefined;
}

function hcmOf(chain: FilterChain): HttpConnectionManager | undefined {
  const filter = (chain.filters ?? []).find((f) => f.name === FILTER_NAMES.httpConnectionManager);
  return filter?.typedConfig as HttpConnectionManager | undefined;
}

function describeChain(index: number, chain: FilterChain): SelectedChain {
  const match = chain.filterChainMatch ?? {};
  return {
    index,
    name: chain.name ?? '',
    ...(match.destinationPort !== undefined ? { destinationPort: match.destinationPort } : {}),
    ...(match.transportProtocol !== undefined ? { transportProtocol: match.transportProtocol } : {}),
    applicationProtocols: match.applicationProtocols ?? [],
    mtls: tlsContextOf(chain) !== undefined,
    kind: hcmOf(chain) !== undefined ? 'HTTP' : 'TCP',
  };
}

interface Handshake {
  readonly ok: boolean;
  readonly peer?: PeerCertificate;
  readonly failureStat?: string;
}

/** The server side of the mTLS handshake: a trusted client certificate with an accepted SAN. */
function handshake(context: DownstreamTlsContext, traffic: SimulatedTraffic): Handshake {
  const certificate = clientCertificate(traffic);
  if (certificate === undefined) return { ok: context.requireClientCertificate !== true, failureStat: 'ssl.fail_verify_no_cert' };
  if (!certificate.trusted) return { ok: false, failureStat: 'ssl.fail_verify_error' };
  const matchers = context.commonTlsContext?.combinedValidationContext?.defaultValidationContext?.matchSubjectAltNames ?? [];
  const sans = [...certificate.uriSans, ...certificate.dnsSans];
  if (matchers.length > 0 && !sans.some((san) => matchers.some((m) => matchString(m, san)))) return { ok: false, failureStat: 'ssl.fail_verify_san' };
  return { ok: true, peer: { uriSans: certificate.uriSans, dnsSans: certificate.dnsSans, subject: certificate.subject } };
}

function baseAttributes(traffic: SimulatedTraffic, detected: DetectedConnection, peer: PeerCertificate | undefined): RbacAttributes {
  const sourceIp = traffic.sourceIp ?? DEFAULT_TRAFFIC_ADDRESSES.sourceIp;
  return {
    destinationIp: requireIp(traffic.destinationIp ?? DEFAULT_TRAFFIC_ADDRESSES.destinationIp, 'destinationIp'),
    destinationPort: traffic.port,
    directRemoteIp: requireIp(sourceIp, 'sourceIp'),
    remoteIp: requireIp(traffic.remoteIp ?? sourceIp, 'remoteIp'),
    requestedServerName: detected.sni,
    ...(peer !== undefined ? { peerCertificate: peer, peerPrincipalFilterState: peer.uriSans[0] ?? '' } : {}),
    headers: new Map(),
    metadata: new Map(),
  };
}

function httpAttributes(base: RbacAttributes, traffic: SimulatedTraffic, tls: boolean): RbacAttributes {
  const request = traffic.http;
  if (request === undefined) return base;
  const headers = new Map<string, string[]>();
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const key = name.toLowerCase();
    headers.set(key, [...(headers.get(key) ?? []), ...(typeof value === 'string' ? [value] : value)]);
  }
  const path = normalizeRequestPath(request.path);
  headers.set(':authority', [request.host]);
  headers.set(':method', [request.method]);
  headers.set(':path', [path]);
  headers.set(':scheme', [tls ? 'https' : 'http']);
  const metadata: DynamicMetadata = new Map();
  if (request.requestPrincipal !== undefined || request.jwtClaims !== undefined) {
    const slash = request.requestPrincipal?.lastIndexOf('/') ?? -1;
    const principal = request.requestPrincipal === undefined ? {} : slash < 0 ? { iss: request.requestPrincipal } : { iss: request.requestPrincipal.slice(0, slash), sub: request.requestPrincipal.slice(slash + 1) };
    metadata.set('envoy.filters.http.jwt_authn', { payload: { ...(request.jwtClaims ?? {}), ...principal } });
  }
  return { ...base, remoteIp: httpRemoteIp(base, traffic, headers), headers, urlPath: pathWithoutQuery(path), metadata };
}

/**
 * The inbound HCM has use_remote_address false and no trusted hops: the downstream remote
 * address is the rightmost x-forwarded-for entry when there is one (unless `remoteIp` is given).
 */
function httpRemoteIp(base: RbacAttributes, traffic: SimulatedTraffic, headers: ReadonlyMap<string, readonly string[]>): RbacAttributes['remoteIp'] {
  if (traffic.remoteIp !== undefined) return base.remoteIp;
  const forwarded = (headers.get('x-forwarded-for') ?? []).join(',').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  const last = forwarded.at(-1);
  return (last === undefined ? undefined : parseIp(last)) ?? base.remoteIp;
}

function finish(partial: Omit<SimulationResult, 'dynamicMetadata' | 'allowed'>, metadata: DynamicMetadata): SimulationResult {
  return { ...partial, allowed: partial.outcome === 'allowed', dynamicMetadata: Object.fromEntries(metadata) };
}

/** The last enforcing filter that let the traffic through, or the absence of one. */
function allowDecision(filters: readonly FilterEvaluation[], target: string): Decision {
  const enforcing = [...filters].reverse().find((f) => f.enforced !== undefined && f.action !== 'LOG');
  if (enforcing === undefined) return { reason: `no enforcing authorization filter; forwarded to ${target}` };
  const policy = enforcing.enforced?.matchedPolicy;
  const why = enforcing.action === 'ALLOW' ? `ALLOW policy ${policy ?? '?'} matched` : 'no DENY policy matched';
  return { filterIndex: enforcing.index, filterName: enforcing.name, ...(enforcing.action !== undefined ? { action: enforcing.action } : {}), ...(policy !== undefined ? { policy } : {}), reason: `${why}; forwarded to ${target}` };
}

function denyDecision(filter: FilterEvaluation): Decision {
  if (filter.extAuthz !== undefined) return { filterIndex: filter.index, filterName: filter.name, reason: 'the external authorizer denied the request' };
  const policy = filter.enforced?.matchedPolicy;
  const reason = filter.action === 'DENY' ? `DENY policy ${policy ?? '?'} matched` : 'no ALLOW policy matched';
  return { filterIndex: filter.index, filterName: filter.name, ...(filter.action !== undefined ? { action: filter.action } : {}), ...(policy !== undefined ? { policy } : {}), reason };
}

function runNetworkFilters(filters: readonly NetworkFilter[], traffic: SimulatedTraffic, attributes: RbacAttributes, stats: string[]): { evaluations: FilterEvaluation[]; stoppedBy?: FilterEvaluation; target: string } {
  const evaluations: FilterEvaluation[] = [];
  for (const [index, filter] of filters.entries()) {
    const config = (filter.typedConfig ?? {}) as RbacFilterConfig & { cluster?: string };
    const context: StepContext = { attributes, stats, statRoot: config.statPrefix ?? '', metadataNamespace: FILTER_NAMES.networkRbac };
    let evaluation: FilterEvaluation | undefined;
    if (filter.name === FILTER_NAMES.networkRbac) evaluation = runRbacFilter(index, filter.name, config, context);
    else if (filter.name === FILTER_NAMES.networkExtAuthz) evaluation = runExtAuthzFilter(index, filter.name, (filter.typedConfig ?? {}) as ExtAuthzConfig, traffic.extAuthz ?? 'allow', context);
    else if (filter.name === FILTER_NAMES.tcpProxy) return { evaluations, target: `cluster ${config.cluster ?? '?'}` };
    if (evaluation === undefined) continue;
    evaluations.push(evaluation);
    if (evaluation.stopped) return { evaluations, stoppedBy: evaluation, target: '' };
  }
  return { evaluations, target: 'no upstream (no tcp_proxy)' };
}

function runHttpFilters(hcm: HttpConnectionManager, traffic: SimulatedTraffic, attributes: RbacAttributes, stats: string[]): { evaluations: FilterEvaluation[]; stoppedBy?: FilterEvaluation; target: string } {
  const evaluations: FilterEvaluation[] = [];
  const statRoot = `http.${hcm.statPrefix ?? ''}.`;
  const cluster = hcm.routeConfig?.virtualHosts?.[0]?.routes?.[0]?.route?.cluster ?? '?';
  for (const [index, filter] of (hcm.httpFilters ?? []).entries()) {
    const context: StepContext = { attributes, stats, statRoot, metadataNamespace: FILTER_NAMES.httpRbac };
    let evaluation: FilterEvaluation | undefined;
    if (filter.name === FILTER_NAMES.httpRbac) evaluation = runRbacFilter(index, filter.name, (filter.typedConfig ?? {}) as RbacFilterConfig, context);
    else if (filter.name === FILTER_NAMES.httpExtAuthz) evaluation = runExtAuthzFilter(index, filter.name, (filter.typedConfig ?? {}) as ExtAuthzConfig, traffic.extAuthz ?? 'allow', context);
    else if (filter.name === FILTER_NAMES.router) return { evaluations, target: `cluster ${cluster}` };
    if (evaluation === undefined) continue;
    evaluations.push(evaluation);
    if (evaluation.stopped) return { evaluations, stoppedBy: evaluation, target: '' };
  }
  return { evaluations, target: 'no upstream (no router)' };
}

/**
 * Simulates `traffic` against a compiled workload (or a bare `virtualInbound` listener).
 *
 * @example
 * ```ts
 * const result = simulate(config, { port: 8080, transport: 'mtls', sourcePrincipal: 'cluster.local/ns/a/sa/b',
 *   http: { method: 'GET', path: '/admin', host: 'httpbin' } });
 * result.outcome;   // 'denied'
 * result.decision;  // { filterName: 'envoy.filters.http.rbac', action: 'DENY', policy: 'ns[foo]-policy[deny]-rule[0]', ... }
 * ```
 */
export function simulate(target: WorkloadConfig | Listener, traffic: SimulatedTraffic): SimulationResult {
  validateTraffic(traffic);
  const listener = 'listener' in target ? target.listener : target;
  const stats: string[] = [];
  const wire = {
    destinationPort: traffic.port,
    clientSendsTls: traffic.transport !== 'plaintext',
    clientAlpn: clientAlpn(traffic),
    sni: traffic.sni ?? '',
    ...(traffic.http !== undefined ? { plaintextHttp: traffic.http.version === 'h2' ? ('h2c' as const) : ('http/1.1' as const) } : {}),
  };
  const detected = detectConnection(listener, wire);
  const selected = selectFilterChain(listener, traffic.port, detected);
  const metadata: DynamicMetadata = new Map();
  if (selected === undefined) {
    stats.push(`${listenerStatRoot(listener)}no_filter_chain_match`);
    return finish({ outcome: 'reset', detected, filters: [], stats, decision: { reason: `no filter chain matches ${detected.transportProtocol} traffic to port ${traffic.port}; the connection is closed (no_filter_chain_match)` }, connectionTerminationDetails: 'filter_chain_not_found' }, metadata);
  }
  return simulateOnChain(listener, selected.index, selected.chain, traffic, detected, stats);
}

function simulateOnChain(listener: Listener, index: number, chain: FilterChain, traffic: SimulatedTraffic, detected: DetectedConnection, stats: string[]): SimulationResult {
  const chainInfo = describeChain(index, chain);
  const tlsContext = tlsContextOf(chain);
  const emptyMetadata: DynamicMetadata = new Map();
  let peer: PeerCertificate | undefined;
  if (tlsContext !== undefined) {
    const result = handshake(tlsContext, traffic);
    if (!result.ok) {
      stats.push(`${listenerStatRoot(listener)}ssl.connection_error`, `${listenerStatRoot(listener)}${result.failureStat ?? 'ssl.connection_error'}`);
      return finish({ outcome: 'tls-handshake-failed', detected, chain: chainInfo, filters: [], stats, decision: { reason: `mTLS handshake failed on chain ${chainInfo.name} (${result.failureStat ?? 'error'})` } }, emptyMetadata);
    }
    stats.push(`${listenerStatRoot(listener)}ssl.handshake`);
    peer = result.peer;
  }
  const terminatedTls = tlsContext !== undefined;
  const hcm = hcmOf(chain);
  const base = baseAttributes(traffic, detected, peer);
  const peerPrincipal = peer?.uriSans[0];
  const common = { detected, chain: chainInfo, ...(peerPrincipal !== undefined ? { peerPrincipal } : {}) };
  if (hcm === undefined) return finishTcp(chain, traffic, base, stats, common);
  const speaksHttp = traffic.http !== undefined && (terminatedTls || traffic.transport === 'plaintext');
  if (!speaksHttp) {
    stats.push(`http.${hcm.statPrefix ?? ''}.downstream_cx_protocol_error`);
    return finish({ ...common, outcome: 'protocol-error', filters: [], stats, decision: { reason: `chain ${chainInfo.name} runs the HTTP connection manager but the client does not speak HTTP on it` } }, emptyMetadata);
  }
  const attributes = httpAttributes(base, traffic, terminatedTls);
  const run = runHttpFilters(hcm, traffic, attributes, stats);
  if (run.stoppedBy !== undefined) {
    const extAuthz = run.stoppedBy.extAuthz !== undefined;
    const policy = run.stoppedBy.enforced?.matchedPolicy ?? 'none';
    const httpResponse = extAuthz
      ? { status: 403, body: '', responseCodeDetails: 'ext_authz_denied' }
      : { status: 403, body: RBAC_DENIED_BODY, responseCodeDetails: `rbac_access_denied_matched_policy[${policy.replace(/\s/gu, '_')}]` };
    return finish({ ...common, outcome: 'denied', filters: run.evaluations, stats, decision: denyDecision(run.stoppedBy), httpResponse }, attributes.metadata);
  }
  return finish({ ...common, outcome: 'allowed', filters: run.evaluations, stats, decision: allowDecision(run.evaluations, run.target) }, attributes.metadata);
}

function finishTcp(chain: FilterChain, traffic: SimulatedTraffic, attributes: RbacAttributes, stats: string[], common: Pick<SimulationResult, 'detected' | 'chain' | 'peerPrincipal'>): SimulationResult {
  const run = runNetworkFilters(chain.filters ?? [], traffic, attributes, stats);
  if (run.stoppedBy !== undefined) {
    const policy = run.stoppedBy.enforced?.matchedPolicy ?? 'none';
    const details = run.stoppedBy.extAuthz !== undefined ? 'ext_authz_denied' : `rbac_access_denied_matched_policy[${policy.replace(/\s/gu, '_')}]`;
    return finish({ ...common, outcome: 'denied', filters: run.evaluations, stats, decision: denyDecision(run.stoppedBy), connectionTerminationDetails: details }, attributes.metadata);
  }
  return finish({ ...common, outcome: 'allowed', filters: run.evaluations, stats, decision: allowDecision(run.evaluations, run.target) }, attributes.metadata);
}
