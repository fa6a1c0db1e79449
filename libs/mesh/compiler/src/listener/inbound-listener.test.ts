import { describe, expect, it } from 'vitest';
import type { DownstreamTlsContext, FilterChain, HttpConnectionManager, ListenerFilter } from '@ward/mesh/envoy-api';
import { HTTPBIN, compileYaml, policyYaml } from '../testing';

const MESH_STRICT = 'apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\n  namespace: istio-system\nspec:\n  mtls:\n    mode: STRICT\n---\n';

function workloadPa(body: string): string {
  return `apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: httpbin\n  namespace: foo\nspec:\n  selector:\n    matchLabels:\n      app: httpbin\n${body}\n---\n`;
}

function chainsOf(yaml: string): FilterChain[] {
  return [...(compileYaml(yaml).listener.filterChains ?? [])];
}

function summary(chain: FilterChain): string {
  const match = chain.filterChainMatch ?? {};
  return [chain.name, match.destinationPort ?? '-', match.transportProtocol ?? '-', (match.applicationProtocols ?? []).join('+') || '-', chain.transportSocket ? 'mtls' : 'plain'].join(' ');
}

function listenerFilter(yaml: string, name: string): ListenerFilter | undefined {
  return compileYaml(yaml).listener.listenerFilters?.find((f) => f.name === name);
}

function tlsOf(chain: FilterChain | undefined): DownstreamTlsContext {
  return chain?.transportSocket?.typedConfig as DownstreamTlsContext;
}

describe('virtualInbound structure', () => {
  it('PERMISSIVE: blackhole, 5 catch-all chains, 2 chains for HTTP 8080, 3 for TCP 9000 (spec 4.5)', () => {
    expect(chainsOf('').map(summary)).toEqual([
      'virtualInbound-blackhole 15006 - - plain',
      'virtualInbound-catchall-http - tls istio-http/1.0+istio-http/1.1+istio-h2 mtls',
      'virtualInbound-catchall-http - raw_buffer http/1.1+h2c plain',
      'virtualInbound - tls istio-peer-exchange+istio mtls',
      'virtualInbound - raw_buffer - plain',
      'virtualInbound - tls - plain',
      '0.0.0.0_8080 8080 tls istio+istio-peer-exchange+istio-http/1.0+istio-http/1.1+istio-h2 mtls',
      '0.0.0.0_8080 8080 raw_buffer - plain',
      '0.0.0.0_9000 9000 tls istio+istio-peer-exchange+istio-http/1.0+istio-http/1.1+istio-h2 mtls',
      '0.0.0.0_9000 9000 tls - plain',
      '0.0.0.0_9000 9000 raw_buffer - plain',
    ]);
  });

  it('PERMISSIVE listener filters: TLS inspector off on 15006, HTTP inspector off on declared ports', () => {
    const listener = compileYaml('').listener;
    expect(listener.listenerFilters?.map((f) => f.name)).toEqual([
      'envoy.filters.listener.original_dst',
      'envoy.filters.listener.tls_inspector',
      'envoy.filters.listener.http_inspector',
    ]);
    expect(listenerFilter('', 'envoy.filters.listener.tls_inspector')?.filterDisabled).toEqual({ destinationPortRange: { start: 15006, end: 15007 } });
    expect(listenerFilter('', 'envoy.filters.listener.http_inspector')?.filterDisabled).toEqual({
      orMatch: { rules: [8080, 9000, 15006].map((p) => ({ destinationPortRange: { start: p, end: p + 1 } })) },
    });
    expect(listener).toMatchObject({ name: 'virtualInbound', address: { socketAddress: { address: '0.0.0.0', portValue: 15006 } }, trafficDirection: 'INBOUND', continueOnListenerFiltersTimeout: true, listenerFiltersTimeout: '0s' });
  });

  it('STRICT: every chain but the blackhole requires TLS with client certificates, no HTTP inspector', () => {
    const chains = chainsOf(MESH_STRICT);
    for (const chain of chains.slice(1)) {
      expect(chain.filterChainMatch?.transportProtocol).toBe('tls');
      expect(tlsOf(chain).requireClientCertificate).toBe(true);
    }
    expect(listenerFilter(MESH_STRICT, 'envoy.filters.listener.http_inspector')).toBeUndefined();
  });

  it('DISABLE: no TLS inspector and no TLS context anywhere', () => {
    const disable = MESH_STRICT.replace('STRICT', 'DISABLE');
    expect(listenerFilter(disable, 'envoy.filters.listener.tls_inspector')).toBeUndefined();
    expect(chainsOf(disable).every((c) => c.transportSocket === undefined)).toBe(true);
  });

  it('a DISABLE port exception: plaintext chain on 8080, TLS inspector disabled on 8080 and 15006 (spec 70)', () => {
    const yaml = MESH_STRICT + workloadPa('  portLevelMtls:\n    8080:\n      mode: DISABLE');
    expect(chainsOf(yaml).filter((c) => c.filterChainMatch?.destinationPort === 8080).map(summary)).toEqual(['0.0.0.0_8080 8080 raw_buffer - plain']);
    expect(listenerFilter(yaml, 'envoy.filters.listener.tls_inspector')?.filterDisabled).toEqual({
      orMatch: { rules: [{ destinationPortRange: { start: 8080, end: 8081 } }, { destinationPortRange: { start: 15006, end: 15007 } }] },
    });
  });

  it('a STRICT port-level entry on an undeclared port adds passthrough chains for it (spec 71)', () => {
    const yaml = workloadPa('  mtls:\n    mode: DISABLE\n  portLevelMtls:\n    9999:\n      mode: STRICT');
    const extra = chainsOf(yaml).filter((c) => c.filterChainMatch?.destinationPort === 9999).map(summary);
    expect(extra).toEqual(['virtualInbound-catchall-http 9999 tls istio-http/1.0+istio-http/1.1+istio-h2 mtls', 'virtualInbound 9999 tls - mtls']);
    expect(listenerFilter(yaml, 'envoy.filters.listener.tls_inspector')?.filterDisabled).toEqual({ notMatch: { destinationPortRange: { start: 9999, end: 10000 } } });
  });

  it('mTLS contexts: ALPN per chain kind, SDS names, SANs per trust domain, TLS 1.3 minimum (spec 74, 75)', () => {
    const config = compileYaml(MESH_STRICT, HTTPBIN, { trustDomain: 'td1', trustDomainAliases: ['cluster.local'], minTlsProtocolVersion: 'TLSV1_3' });
    const chains = config.listener.filterChains ?? [];
    const http = tlsOf(chains.find((c) => c.name === '0.0.0.0_8080'));
    const tcp = tlsOf(chains.find((c) => c.name === '0.0.0.0_9000'));
    expect(http.commonTlsContext?.alpnProtocols).toEqual(['h2', 'http/1.1']);
    expect(tcp.commonTlsContext?.alpnProtocols).toEqual(['istio-peer-exchange', 'h2', 'http/1.1']);
    expect(http.commonTlsContext?.tlsCertificateSdsSecretConfigs?.[0]?.name).toBe('default');
    expect(http.commonTlsContext?.tlsCertificateSdsSecretConfigs?.[0]?.sdsConfig?.apiConfigSource?.grpcServices?.[0]?.envoyGrpc?.clusterName).toBe('sds-grpc');
    expect(http.commonTlsContext?.combinedValidationContext?.validationContextSdsSecretConfig?.name).toBe('ROOTCA');
    expect(http.commonTlsContext?.combinedValidationContext?.defaultValidationContext?.matchSubjectAltNames).toEqual([{ prefix: 'spiffe://td1/' }, { prefix: 'spiffe://cluster.local/' }]);
    expect(http.commonTlsContext?.tlsParams?.tlsMinimumProtocolVersion).toBe('TLSv1_3');
  });

  it('puts the authorization filters into every chain except the blackhole', () => {
    const config = compileYaml(policyYaml('deny', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        ports: ["9000"]'));
    const chains = config.listener.filterChains ?? [];
    for (const chain of chains.slice(1)) {
      const hcm = chain.filters?.find((f) => f.name === 'envoy.filters.network.http_connection_manager')?.typedConfig as HttpConnectionManager | undefined;
      const names = hcm === undefined ? chain.filters?.map((f) => f.name) : hcm.httpFilters?.map((f) => f.name);
      expect(names?.[0], chain.name).toMatch(/rbac$/u);
    }
    expect(chains[0]?.filters?.map((f) => f.name)).toEqual(['envoy.filters.network.tcp_proxy']);
  });

  it('orders chains blackhole, catch-all, then service ports ascending (spec 76)', () => {
    const workload = { ...HTTPBIN, ports: [{ port: 9000, protocol: 'TCP' as const }, { port: 80, protocol: 'HTTP' as const }, { port: 9000, protocol: 'HTTP' as const }] };
    const names = (compileYaml('', workload).listener.filterChains ?? []).map((c) => c.name);
    expect([...new Set(names)]).toEqual(['virtualInbound-blackhole', 'virtualInbound-catchall-http', 'virtualInbound', '0.0.0.0_80', '0.0.0.0_9000']);
  });
});
