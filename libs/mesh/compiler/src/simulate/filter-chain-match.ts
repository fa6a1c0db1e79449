// How Envoy's virtualInbound picks a filter chain: listener filters detect the transport protocol
// (TLS inspector), ALPN and SNI, then the chain is chosen level by level — destination port,
// transport protocol, application protocol — each level taking the exact match if one exists and
// the wildcard otherwise, never backtracking. No chain: the connection is reset.
import type { FilterChain, Listener, ListenerFilter, ListenerFilterChainMatchPredicate } from '@ward/mesh/envoy-api';
import { FILTER_NAMES } from '@ward/mesh/envoy-api';
import { assert } from '@ward/shared/errors';

/** What the client does on the wire. */
export interface WireFacts {
  readonly destinationPort: number;
  /** The client starts with a TLS ClientHello. */
  readonly clientSendsTls: boolean;
  /** ALPN offered in the ClientHello (TLS only). */
  readonly clientAlpn: readonly string[];
  readonly sni: string;
  /** Plaintext HTTP the HTTP inspector would recognise: `http/1.1` or `h2c`; undefined for other bytes. */
  readonly plaintextHttp?: 'http/1.1' | 'h2c';
}

/** What the listener filters detected. */
export interface DetectedConnection {
  readonly transportProtocol: 'tls' | 'raw_buffer';
  readonly applicationProtocols: readonly string[];
  readonly sni: string;
  readonly tlsInspected: boolean;
  readonly httpInspected: boolean;
}

function predicateMatches(predicate: ListenerFilterChainMatchPredicate, port: number, depth = 0): boolean {
  assert(depth <= 32, 'predicate nesting within limit');
  if (predicate.anyMatch === true) return true;
  if (predicate.destinationPortRange !== undefined) return port >= (predicate.destinationPortRange.start ?? 0) && port < (predicate.destinationPortRange.end ?? 0);
  if (predicate.orMatch !== undefined) return (predicate.orMatch.rules ?? []).some((r) => predicateMatches(r, port, depth + 1));
  if (predicate.andMatch !== undefined) return (predicate.andMatch.rules ?? []).every((r) => predicateMatches(r, port, depth + 1));
  if (predicate.notMatch !== undefined) return !predicateMatches(predicate.notMatch, port, depth + 1);
  return false;
}

function filterRuns(filters: readonly ListenerFilter[], name: string, port: number): boolean {
  const filter = filters.find((f) => f.name === name);
  return filter !== undefined && (filter.filterDisabled === undefined || !predicateMatches(filter.filterDisabled, port));
}

/** Runs the listener filters of `listener` on a new connection. */
export function detectConnection(listener: Listener, wire: WireFacts): DetectedConnection {
  const filters = listener.listenerFilters ?? [];
  return detectWith(filterRuns(filters, FILTER_NAMES.tlsInspector, wire.destinationPort), filterRuns(filters, FILTER_NAMES.httpInspector, wire.destinationPort), wire);
}

/** What the listener filters detect, given whether each inspector runs on the port. */
function detectWith(tlsInspectorRuns: boolean, httpInspectorRuns: boolean, wire: WireFacts): DetectedConnection {
  const tlsInspected = tlsInspectorRuns;
  const isTls = tlsInspected && wire.clientSendsTls;
  const httpInspected = !isTls && httpInspectorRuns;
  const detectedHttp = httpInspected && !wire.clientSendsTls ? wire.plaintextHttp : undefined;
  return {
    transportProtocol: isTls ? 'tls' : 'raw_buffer',
    applicationProtocols: isTls ? wire.clientAlpn : detectedHttp !== undefined ? [detectedHttp] : [],
    sni: isTls ? wire.sni : '',
    tlsInspected,
    httpInspected,
  };
}

function exactOrWildcard<T>(items: readonly T[], key: (item: T) => string | number | undefined, wanted: string | number, wildcard: string | number): T[] {
  const exact = items.filter((item) => (key(item) ?? wildcard) === wanted);
  return exact.length > 0 ? exact : items.filter((item) => (key(item) ?? wildcard) === wildcard);
}

/**
 * Chain selection on a listener known in advance: the listener-filter verdicts per port and the
 * port/transport levels of the selection are computed once per (port, transport) and kept
 * (at most two entries per port, so at most 131,070 of each).
 */
export class ChainSelector<C extends { readonly chain: FilterChain }> {
  private readonly inspectors = new Map<number, { readonly tls: boolean; readonly http: boolean }>();
  private readonly candidates = new Map<number, readonly { readonly item: C; readonly alpn: readonly string[] }[]>();

  constructor(
    private readonly listener: Listener,
    private readonly chains: readonly C[],
  ) {}

  /** `detectConnection` with the listener-filter verdicts for the port memoized. */
  detect(wire: WireFacts): DetectedConnection {
    let verdict = this.inspectors.get(wire.destinationPort);
    if (verdict === undefined) {
      const filters = this.listener.listenerFilters ?? [];
      verdict = { tls: filterRuns(filters, FILTER_NAMES.tlsInspector, wire.destinationPort), http: filterRuns(filters, FILTER_NAMES.httpInspector, wire.destinationPort) };
      this.inspectors.set(wire.destinationPort, verdict);
    }
    return detectWith(verdict.tls, verdict.http, wire);
  }

  /** `selectFilterChain` with the port and transport levels memoized. */
  select(port: number, detected: DetectedConnection): C | undefined {
    const key = detected.transportProtocol === 'tls' ? port : -port;
    let byTransport = this.candidates.get(key);
    if (byTransport === undefined) {
      const byPort = exactOrWildcard(this.chains, (c) => c.chain.filterChainMatch?.destinationPort, port, 0);
      const levels = exactOrWildcard(byPort, (c) => c.chain.filterChainMatch?.transportProtocol, detected.transportProtocol, '');
      byTransport = levels.map((item) => ({ item, alpn: item.chain.filterChainMatch?.applicationProtocols ?? [] }));
      this.candidates.set(key, byTransport);
    }
    for (const protocol of detected.applicationProtocols) {
      for (const candidate of byTransport) if (candidate.alpn.includes(protocol)) return candidate.item;
    }
    for (const candidate of byTransport) if (candidate.alpn.length === 0) return candidate.item;
    return undefined;
  }
}

function pickByAlpn<C extends { readonly chain: FilterChain }>(byTransport: readonly C[], protocols: readonly string[]): C | undefined {
  const alpnOf = (c: C): readonly string[] => c.chain.filterChainMatch?.applicationProtocols ?? [];
  for (const protocol of protocols) {
    const hit = byTransport.find((c) => alpnOf(c).includes(protocol));
    if (hit !== undefined) return hit;
  }
  return byTransport.find((c) => alpnOf(c).length === 0);
}

/** The chain Envoy selects, or undefined for `no_filter_chain_match`. */
export function selectFilterChain(listener: Listener, port: number, detected: DetectedConnection): { index: number; chain: FilterChain } | undefined {
  const chains = (listener.filterChains ?? []).map((chain, index) => ({ chain, index }));
  const byPort = exactOrWildcard(chains, (c) => c.chain.filterChainMatch?.destinationPort, port, 0);
  const byTransport = exactOrWildcard(byPort, (c) => c.chain.filterChainMatch?.transportProtocol, detected.transportProtocol, '');
  return pickByAlpn(byTransport, detected.applicationProtocols);
}
