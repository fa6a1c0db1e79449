// A virtualInbound listener prepared for simulation once: each chain's description, mTLS
// validation (SAN matchers compiled), and its network or HTTP filters with their RBAC engines
// compiled and every stat name and metadata key precomputed. Simulating a request against the
// prepared form only evaluates predicates and appends precomputed strings.
import type { DownstreamTlsContext, FilterChain, HttpConnectionManager, Listener, MetadataMatcher, NetworkFilter, RBAC } from '@ward/mesh/envoy-api';
import { FILTER_NAMES } from '@ward/mesh/envoy-api';
import { compileMetadataMatcher, compileStringMatcher, type MetadataPredicate, type StringPredicate } from './compiled-matchers';
import { compileRbac, type CompiledRbac } from './compiled-rbac';
import { RbacCompiler } from './rule-program';
import type { SelectedChain } from './result';

/** One RBAC engine of a filter with the names it reports under. */
export interface PreparedEngine {
  readonly engine: CompiledRbac;
  readonly statPrefix: string;
  readonly allowedStat: string;
  readonly deniedStat: string;
  /** Dynamic metadata keys: `<prefix>shadow_effective_policy_id` / `<prefix>enforced_…`. */
  readonly policyIdKey: string;
  readonly engineResultKey: string;
}

/** A filter of a chain, ready to run. */
export type PreparedFilter =
  | {
      readonly kind: 'rbac';
      readonly index: number;
      readonly name: string;
      readonly action: 'ALLOW' | 'DENY' | 'LOG';
      readonly shadow?: PreparedEngine;
      readonly rules?: PreparedEngine & { readonly loggedStat: string; readonly notLoggedStat: string };
    }
  | { readonly kind: 'ext_authz'; readonly index: number; readonly name: string; readonly enabled?: MetadataPredicate; readonly okStat: string; readonly deniedStat: string }
  | { readonly kind: 'terminal'; readonly target: string };

/** The filters of one chain and where traffic goes when none stops it. */
export interface PreparedFilters {
  readonly filters: readonly PreparedFilter[];
  /** `cluster …`, or why there is no upstream (no router / tcp_proxy). */
  readonly fallbackTarget: string;
  /** `envoy.filters.http.rbac` or `envoy.filters.network.rbac`. */
  readonly metadataNamespace: string;
}

/** The server side of the chain's mTLS. */
export interface PreparedTls {
  readonly requireClientCertificate: boolean;
  /** Empty: any SAN is accepted. */
  readonly sanMatchers: readonly StringPredicate[];
}

export interface PreparedChain {
  readonly index: number;
  readonly chain: FilterChain;
  readonly info: SelectedChain;
  readonly tls?: PreparedTls;
  /** Present on HTTP chains. */
  readonly http?: PreparedFilters & { readonly protocolErrorStat: string };
  /** Present on TCP chains. */
  readonly network?: PreparedFilters;
}

/** A listener prepared for simulation. */
export interface PreparedListener {
  readonly listener: Listener;
  /** Compiled every engine of the listener; one memo of its size serves one simulation. */
  readonly compiler: RbacCompiler;
  /** `listener.<address>_<port>.` */
  readonly statRoot: string;
  readonly chains: readonly PreparedChain[];
}

type RbacFilterConfig = { rules?: RBAC; shadowRules?: RBAC; shadowRulesStatPrefix?: string; rulesStatPrefix?: string; statPrefix?: string };
type ExtAuthzConfig = { filterEnabledMetadata?: MetadataMatcher; statPrefix?: string };

function tlsContextOf(chain: FilterChain): DownstreamTlsContext | undefined {
  const socket = chain.transportSocket;
  return socket?.name === FILTER_NAMES.tlsTransportSocket ? (socket.typedConfig as DownstreamTlsContext | undefined) : undefined;
}

function hcmOf(chain: FilterChain): HttpConnectionManager | undefined {
  const filter = (chain.filters ?? []).find((f) => f.name === FILTER_NAMES.httpConnectionManager);
  return filter?.typedConfig as HttpConnectionManager | undefined;
}

function describeChain(index: number, chain: FilterChain, mtls: boolean, http: boolean): SelectedChain {
  const match = chain.filterChainMatch ?? {};
  return {
    index,
    name: chain.name ?? '',
    ...(match.destinationPort !== undefined ? { destinationPort: match.destinationPort } : {}),
    ...(match.transportProtocol !== undefined ? { transportProtocol: match.transportProtocol } : {}),
    applicationProtocols: match.applicationProtocols ?? [],
    mtls,
    kind: http ? 'HTTP' : 'TCP',
  };
}

/** Engines of one listener: compiled once per RBAC message object, leaves shared. */
class EngineCache {
  readonly compiler = new RbacCompiler();
  private readonly engines = new Map<RBAC, CompiledRbac>();

  engineOf(rbac: RBAC): CompiledRbac {
    let engine = this.engines.get(rbac);
    if (engine === undefined) {
      engine = compileRbac(rbac, this.compiler);
      this.engines.set(rbac, engine);
    }
    return engine;
  }
}

function prepareEngine(cache: EngineCache, rbac: RBAC, root: string, prefix: string, kind: 'shadow' | 'enforced'): PreparedEngine {
  const allowed = kind === 'shadow' ? 'shadow_allowed' : 'allowed';
  const denied = kind === 'shadow' ? 'shadow_denied' : 'denied';
  return {
    engine: cache.engineOf(rbac),
    statPrefix: prefix,
    allowedStat: `${root}${prefix}${allowed}`,
    deniedStat: `${root}${prefix}${denied}`,
    policyIdKey: `${prefix}${kind}_effective_policy_id`,
    engineResultKey: `${prefix}${kind}_engine_result`,
  };
}

function prepareRbacFilter(cache: EngineCache, index: number, name: string, config: RbacFilterConfig, statRoot: string): PreparedFilter {
  const root = `${statRoot}rbac.`;
  const shadow = config.shadowRules === undefined ? undefined : prepareEngine(cache, config.shadowRules, root, config.shadowRulesStatPrefix ?? '', 'shadow');
  const action = config.rules?.action ?? config.shadowRules?.action ?? 'ALLOW';
  if (config.rules === undefined) return { kind: 'rbac', index, name, action, ...(shadow !== undefined ? { shadow } : {}) };
  const rulesPrefix = config.rulesStatPrefix ?? '';
  const rules = { ...prepareEngine(cache, config.rules, root, rulesPrefix, 'enforced'), loggedStat: `${root}${rulesPrefix}logged`, notLoggedStat: `${root}${rulesPrefix}not_logged` };
  return { kind: 'rbac', index, name, action, rules, ...(shadow !== undefined ? { shadow } : {}) };
}

function prepareExtAuthz(index: number, name: string, config: ExtAuthzConfig, statRoot: string): PreparedFilter {
  return {
    kind: 'ext_authz',
    index,
    name,
    ...(config.filterEnabledMetadata !== undefined ? { enabled: compileMetadataMatcher(config.filterEnabledMetadata) } : {}),
    okStat: `${statRoot}ext_authz.ok`,
    deniedStat: `${statRoot}ext_authz.denied`,
  };
}

function prepareNetworkFilters(cache: EngineCache, filters: readonly NetworkFilter[]): PreparedFilters {
  const prepared: PreparedFilter[] = [];
  for (const [index, filter] of filters.entries()) {
    const config = (filter.typedConfig ?? {}) as RbacFilterConfig & ExtAuthzConfig & { cluster?: string };
    const statRoot = config.statPrefix ?? '';
    if (filter.name === FILTER_NAMES.networkRbac) prepared.push(prepareRbacFilter(cache, index, filter.name, config, statRoot));
    else if (filter.name === FILTER_NAMES.networkExtAuthz) prepared.push(prepareExtAuthz(index, filter.name, config, statRoot));
    else if (filter.name === FILTER_NAMES.tcpProxy) {
      prepared.push({ kind: 'terminal', target: `cluster ${config.cluster ?? '?'}` });
      break;
    }
  }
  return { filters: prepared, fallbackTarget: 'no upstream (no tcp_proxy)', metadataNamespace: FILTER_NAMES.networkRbac };
}

function prepareHttpFilters(cache: EngineCache, hcm: HttpConnectionManager): PreparedFilters & { protocolErrorStat: string } {
  const statRoot = `http.${hcm.statPrefix ?? ''}.`;
  const cluster = hcm.routeConfig?.virtualHosts?.[0]?.routes?.[0]?.route?.cluster ?? '?';
  const prepared: PreparedFilter[] = [];
  for (const [index, filter] of (hcm.httpFilters ?? []).entries()) {
    const config = (filter.typedConfig ?? {}) as RbacFilterConfig & ExtAuthzConfig;
    if (filter.name === FILTER_NAMES.httpRbac) prepared.push(prepareRbacFilter(cache, index, filter.name, config, statRoot));
    else if (filter.name === FILTER_NAMES.httpExtAuthz) prepared.push(prepareExtAuthz(index, filter.name, config, statRoot));
    else if (filter.name === FILTER_NAMES.router) {
      prepared.push({ kind: 'terminal', target: `cluster ${cluster}` });
      break;
    }
  }
  return { filters: prepared, fallbackTarget: 'no upstream (no router)', metadataNamespace: FILTER_NAMES.httpRbac, protocolErrorStat: `${statRoot}downstream_cx_protocol_error` };
}

function prepareTls(context: DownstreamTlsContext): PreparedTls {
  const matchers = context.commonTlsContext?.combinedValidationContext?.defaultValidationContext?.matchSubjectAltNames ?? [];
  return { requireClientCertificate: context.requireClientCertificate === true, sanMatchers: matchers.map(compileStringMatcher) };
}

function prepareChain(cache: EngineCache, index: number, chain: FilterChain): PreparedChain {
  const tlsContext = tlsContextOf(chain);
  const hcm = hcmOf(chain);
  return {
    index,
    chain,
    info: describeChain(index, chain, tlsContext !== undefined, hcm !== undefined),
    ...(tlsContext !== undefined ? { tls: prepareTls(tlsContext) } : {}),
    ...(hcm !== undefined ? { http: prepareHttpFilters(cache, hcm) } : { network: prepareNetworkFilters(cache, chain.filters ?? []) }),
  };
}

/** Prepares `listener` for simulation (pure; the listener is not modified). */
export function prepareListener(listener: Listener): PreparedListener {
  const address = listener.address?.socketAddress;
  const cache = new EngineCache();
  const chains = (listener.filterChains ?? []).map((chain, index) => prepareChain(cache, index, chain));
  return { listener, compiler: cache.compiler, statRoot: `listener.${address?.address ?? '0.0.0.0'}_${address?.portValue ?? 0}.`, chains };
}
