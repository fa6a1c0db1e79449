// Listener filters of virtualInbound: original_dst always; the TLS inspector when some chain
// matches on `tls`; the HTTP inspector when some chain matches a plaintext HTTP ALPN. Both are
// disabled per destination port where no chain needs them (istiod's populateListenerFilters).
import type { FilterChain, ListenerFilter, ListenerFilterChainMatchPredicate } from '@ward/mesh/envoy-api';
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';

interface PortNeeds {
  tls: boolean;
  http: boolean;
}

/** Port → whether any of its chains needs the TLS / HTTP inspector (port 0: chains without a port). */
function inspectorNeeds(chains: readonly FilterChain[]): Map<number, PortNeeds> {
  const needs = new Map<number, PortNeeds>();
  for (const chain of chains) {
    const match = chain.filterChainMatch ?? {};
    const port = match.destinationPort ?? 0;
    const entry = needs.get(port) ?? { tls: false, http: false };
    entry.tls ||= match.transportProtocol === 'tls';
    entry.http ||= (match.applicationProtocols ?? []).some((p) => p === 'http/1.1' || p === 'h2c');
    needs.set(port, entry);
  }
  return needs;
}

/** `[p, p+1)` ranges, or-ed when there are several; ports ascending. */
function portRanges(ports: readonly number[]): ListenerFilterChainMatchPredicate {
  const sorted = [...ports].sort((a, b) => a - b);
  const ranges = sorted.map((p) => ({ destinationPortRange: { start: p, end: p + 1 } }));
  const first = ranges[0];
  return ranges.length === 1 && first !== undefined ? first : { orMatch: { rules: ranges } };
}

function tlsInspector(needs: Map<number, PortNeeds>): ListenerFilter {
  const filter: ListenerFilter = { name: FILTER_NAMES.tlsInspector, typedConfig: { '@type': TYPE_URLS.tlsInspector, initialReadBufferSize: 512 } };
  const defaultEnabled = needs.get(0)?.tls ?? false;
  const ports = [...needs].filter(([port, need]) => port !== 0 && need.tls !== defaultEnabled).map(([port]) => port);
  if (ports.length === 0) return filter;
  return { ...filter, filterDisabled: defaultEnabled ? portRanges(ports) : { notMatch: portRanges(ports) } };
}

function httpInspector(needs: Map<number, PortNeeds>): ListenerFilter {
  const filter: ListenerFilter = { name: FILTER_NAMES.httpInspector, typedConfig: { '@type': TYPE_URLS.httpInspector } };
  const ports = [...needs].filter(([, need]) => !need.http).map(([port]) => port);
  return ports.length === 0 ? filter : { ...filter, filterDisabled: portRanges(ports) };
}

/** The listener filters for a virtual inbound listener with these chains. */
export function inboundListenerFilters(chains: readonly FilterChain[]): ListenerFilter[] {
  const needs = inspectorNeeds(chains);
  const filters: ListenerFilter[] = [{ name: FILTER_NAMES.originalDst, typedConfig: { '@type': TYPE_URLS.originalDst } }];
  if ([...needs.values()].some((n) => n.tls)) filters.push(tlsInspector(needs));
  if ([...needs.values()].some((n) => n.http)) filters.push(httpInspector(needs));
  return filters;
}
