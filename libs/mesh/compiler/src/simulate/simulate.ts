// Simulates one connection (and request) against a compiled virtualInbound listener, the way
// Envoy processes it: listener filters, filter-chain selection, mTLS handshake, then the
// chain's network filters (TCP) or HTTP filters (HCM), reporting stats and the deciding filter.
// The listener is prepared once (engines compiled, stat names precomputed: prepared-listener.ts)
// and the prepared form is kept per listener object, so repeated simulations only evaluate.
import type { Listener } from '@ward/mesh/envoy-api';
import type { WorkloadConfig } from '../compile-workload';
import { ChainSelector, type DetectedConnection } from './filter-chain-match';
import { runExtAuthzFilter, runRbacFilter, type StepContext } from './filter-steps';
import type { LeafMemo } from './rule-program';
import type { DynamicMetadata } from './matchers';
import { prepareListener, type PreparedChain, type PreparedFilters, type PreparedListener, type PreparedTls } from './prepared-listener';
import type { PeerCertificate, RbacAttributes } from './rbac-engine';
import { requestAttributes } from './request-attributes';
import type { Decision, FilterEvaluation, SimulationResult } from './result';
import { clientAlpn, clientCertificate, validateTraffic, type SimulatedTraffic } from './traffic';

const RBAC_DENIED_BODY = 'RBAC: access denied';

/** A listener ready to simulate many requests: compiled once, evaluated cheaply. */
export interface PreparedSimulation {
  readonly prepared: PreparedListener;
  readonly selector: ChainSelector<PreparedChain>;
}

const preparedSimulations = new WeakMap<Listener, PreparedSimulation>();

/**
 * Prepares a compiled workload (or a bare `virtualInbound` listener) for simulation: RBAC
 * engines compiled into predicates, stat names and metadata keys precomputed. `simulate` does
 * this on first use of a listener object and keeps the result (configs are immutable values: a
 * changed listener must be a new object); call it directly to pay the cost up front.
 */
export function prepareSimulation(target: WorkloadConfig | Listener): PreparedSimulation {
  const listener = 'listener' in target ? target.listener : target;
  let simulation = preparedSimulations.get(listener);
  if (simulation === undefined) {
    const prepared = prepareListener(listener);
    simulation = { prepared, selector: new ChainSelector(listener, prepared.chains) };
    preparedSimulations.set(listener, simulation);
  }
  return simulation;
}

interface Handshake {
  readonly ok: boolean;
  readonly peer?: PeerCertificate;
  readonly failureStat?: string;
}

/** The server side of the mTLS handshake: a trusted client certificate with an accepted SAN. */
function handshake(tls: PreparedTls, traffic: SimulatedTraffic): Handshake {
  const certificate = clientCertificate(traffic);
  if (certificate === undefined) return { ok: !tls.requireClientCertificate, failureStat: 'ssl.fail_verify_no_cert' };
  if (!certificate.trusted) return { ok: false, failureStat: 'ssl.fail_verify_error' };
  const sans = [...certificate.uriSans, ...certificate.dnsSans];
  if (tls.sanMatchers.length > 0 && !sans.some((san) => tls.sanMatchers.some((m) => m(san)))) return { ok: false, failureStat: 'ssl.fail_verify_san' };
  return { ok: true, peer: { uriSans: certificate.uriSans, dnsSans: certificate.dnsSans, subject: certificate.subject } };
}

type Partial = Omit<SimulationResult, 'dynamicMetadata' | 'allowed'>;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Completes a result object built by this module (fields are added, never copied: this is the hot path). */
function finish(partial: Partial, metadata: DynamicMetadata): SimulationResult {
  const dynamicMetadata: Record<string, Readonly<Record<string, unknown>>> = {};
  for (const [namespace, fields] of metadata) dynamicMetadata[namespace] = fields;
  const result = partial as Mutable<SimulationResult>;
  result.allowed = partial.outcome === 'allowed';
  result.dynamicMetadata = dynamicMetadata;
  return result;
}

/** The result fields of traffic that reached a chain's filters, in the order results list them. */
function onChain(common: ChainFacts, outcome: SimulationResult['outcome'], filters: readonly FilterEvaluation[], stats: readonly string[], decision: Decision): Mutable<Partial> {
  const { detected, chain, peerPrincipal } = common;
  return peerPrincipal === undefined ? { detected, chain, outcome, filters, stats, decision } : { detected, chain, peerPrincipal, outcome, filters, stats, decision };
}

interface ChainFacts {
  readonly detected: DetectedConnection;
  readonly chain: PreparedChain['info'];
  readonly peerPrincipal: string | undefined;
}

/** The last enforcing filter that let the traffic through, or the absence of one. */
function allowDecision(filters: readonly FilterEvaluation[], target: string): Decision {
  let enforcing: FilterEvaluation | undefined;
  for (let i = filters.length - 1; i >= 0 && enforcing === undefined; i--) {
    const filter = filters[i] as FilterEvaluation;
    if (filter.enforced !== undefined && filter.action !== 'LOG') enforcing = filter;
  }
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

interface FilterRun {
  readonly evaluations: FilterEvaluation[];
  readonly stoppedBy?: FilterEvaluation;
  readonly target: string;
}

/** Runs a chain's prepared network or HTTP filters until one stops the traffic or the terminal filter. */
function runFilters(prepared: PreparedFilters, traffic: SimulatedTraffic, attributes: RbacAttributes, stats: string[], memo: LeafMemo): FilterRun {
  const evaluations: FilterEvaluation[] = [];
  const context: StepContext = { attributes, stats, metadataNamespace: prepared.metadataNamespace, memo };
  for (const filter of prepared.filters) {
    if (filter.kind === 'terminal') return { evaluations, target: filter.target };
    const evaluation = filter.kind === 'rbac' ? runRbacFilter(filter, context) : runExtAuthzFilter(filter, traffic.extAuthz ?? 'allow', context);
    evaluations.push(evaluation);
    if (evaluation.stopped) return { evaluations, stoppedBy: evaluation, target: '' };
  }
  return { evaluations, target: prepared.fallbackTarget };
}

/**
 * Simulates `traffic` against a compiled workload (or a bare `virtualInbound` listener). The
 * listener is prepared on first use (see {@link prepareSimulation}).
 *
 * @example
 * ```ts
 * const result = simulate(config, { port: 8080, transport: 'mtls', sourcePrincipal: 'cluster.local/ns/a/sa/b',
 *   http: { method: 'GET', path: '/admin', host: 'httpbin' } });
 * result.outcome;   // 'denied'
 * result.decision;  // { filterName: 'envoy.filters.http.rbac', action: 'DENY', policy: 'ns[foo]-policy[deny]-rule[0]', ... }
 * ```
 */
export function simulate(target: WorkloadConfig | Listener | PreparedSimulation, traffic: SimulatedTraffic): SimulationResult {
  validateTraffic(traffic);
  const simulation = 'selector' in target ? target : prepareSimulation(target);
  const stats: string[] = [];
  const wire = {
    destinationPort: traffic.port,
    clientSendsTls: traffic.transport !== 'plaintext',
    clientAlpn: clientAlpn(traffic),
    sni: traffic.sni ?? '',
    ...(traffic.http !== undefined ? { plaintextHttp: traffic.http.version === 'h2' ? ('h2c' as const) : ('http/1.1' as const) } : {}),
  };
  const detected = simulation.selector.detect(wire);
  const selected = simulation.selector.select(traffic.port, detected);
  if (selected === undefined) {
    stats.push(`${simulation.prepared.statRoot}no_filter_chain_match`);
    return finish({ outcome: 'reset', detected, filters: [], stats, decision: { reason: `no filter chain matches ${detected.transportProtocol} traffic to port ${traffic.port}; the connection is closed (no_filter_chain_match)` }, connectionTerminationDetails: 'filter_chain_not_found' }, new Map());
  }
  return simulateOnChain(simulation.prepared, selected, traffic, detected, stats);
}

function simulateOnChain(listener: PreparedListener, chain: PreparedChain, traffic: SimulatedTraffic, detected: DetectedConnection, stats: string[]): SimulationResult {
  const chainInfo = chain.info;
  let peer: PeerCertificate | undefined;
  if (chain.tls !== undefined) {
    const result = handshake(chain.tls, traffic);
    if (!result.ok) {
      stats.push(`${listener.statRoot}ssl.connection_error`, `${listener.statRoot}${result.failureStat ?? 'ssl.connection_error'}`);
      return finish({ outcome: 'tls-handshake-failed', detected, chain: chainInfo, filters: [], stats, decision: { reason: `mTLS handshake failed on chain ${chainInfo.name} (${result.failureStat ?? 'error'})` } }, new Map());
    }
    stats.push(`${listener.statRoot}ssl.handshake`);
    peer = result.peer;
  }
  const terminatedTls = chain.tls !== undefined;
  const peerPrincipal = peer?.uriSans[0];
  const common: ChainFacts = { detected, chain: chainInfo, peerPrincipal };
  const http = chain.http;
  if (http === undefined) return finishTcp(chain.network as PreparedFilters, traffic, requestAttributes(traffic, detected, peer, false, terminatedTls), stats, common, listener.compiler.resetMemo());
  const speaksHttp = traffic.http !== undefined && (terminatedTls || traffic.transport === 'plaintext');
  if (!speaksHttp) {
    stats.push(http.protocolErrorStat);
    return finish(onChain(common, 'protocol-error', [], stats, { reason: `chain ${chainInfo.name} runs the HTTP connection manager but the client does not speak HTTP on it` }), new Map());
  }
  const attributes = requestAttributes(traffic, detected, peer, true, terminatedTls);
  const run = runFilters(http, traffic, attributes, stats, listener.compiler.resetMemo());
  if (run.stoppedBy !== undefined) {
    const extAuthz = run.stoppedBy.extAuthz !== undefined;
    const policy = run.stoppedBy.enforced?.matchedPolicy ?? 'none';
    const httpResponse = extAuthz
      ? { status: 403, body: '', responseCodeDetails: 'ext_authz_denied' }
      : { status: 403, body: RBAC_DENIED_BODY, responseCodeDetails: `rbac_access_denied_matched_policy[${policy.replace(/\s/gu, '_')}]` };
    const denied = onChain(common, 'denied', run.evaluations, stats, denyDecision(run.stoppedBy));
    denied.httpResponse = httpResponse;
    return finish(denied, attributes.metadata);
  }
  return finish(onChain(common, 'allowed', run.evaluations, stats, allowDecision(run.evaluations, run.target)), attributes.metadata);
}

function finishTcp(filters: PreparedFilters, traffic: SimulatedTraffic, attributes: RbacAttributes, stats: string[], common: ChainFacts, memo: LeafMemo): SimulationResult {
  const run = runFilters(filters, traffic, attributes, stats, memo);
  if (run.stoppedBy !== undefined) {
    const policy = run.stoppedBy.enforced?.matchedPolicy ?? 'none';
    const details = run.stoppedBy.extAuthz !== undefined ? 'ext_authz_denied' : `rbac_access_denied_matched_policy[${policy.replace(/\s/gu, '_')}]`;
    const denied = onChain(common, 'denied', run.evaluations, stats, denyDecision(run.stoppedBy));
    denied.connectionTerminationDetails = details;
    return finish(denied, attributes.metadata);
  }
  return finish(onChain(common, 'allowed', run.evaluations, stats, allowDecision(run.evaluations, run.target)), attributes.metadata);
}
