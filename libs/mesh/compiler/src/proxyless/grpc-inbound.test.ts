import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeEnvoyMessage, MESSAGE_NAMES, type HttpConnectionManager, type HttpFilter, type Listener, type RBAC } from '@ward/mesh/envoy-api';
import { authorizationPolicyArbitrary } from '../../test/policy-arbitraries';
import { compileWorkload } from '../compile-workload';
import type { Workload } from '../input';
import { policyYaml, resourcesFromYaml } from '../testing';
import { buildProxylessInboundListener, parseInboundListenerName, PROXYLESS_INBOUND_PREFIX } from './grpc-inbound';

const ECHO: Workload = { name: 'echo', namespace: 'foo', labels: { app: 'echo' }, ports: [{ port: 50051, protocol: 'GRPC' }] };
const NAME = `${PROXYLESS_INBOUND_PREFIX}10.0.0.1:50051`;

function build(yaml: string, workload: Workload = ECHO, name = NAME) {
  return buildProxylessInboundListener({ listenerName: name, workload, ...resourcesFromYaml(yaml) });
}

function hcmOf(listener: Listener | undefined): HttpConnectionManager {
  const typed = listener?.filterChains?.[0]?.filters?.[0]?.typedConfig as unknown as HttpConnectionManager | undefined;
  if (typed === undefined) throw new Error('no HCM');
  return typed;
}

function rbacOf(filter: HttpFilter | undefined): RBAC {
  return (filter?.typedConfig as unknown as { rules?: RBAC } | undefined)?.rules ?? {};
}

const PA = (mode: string, extra = '') => `apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: pa\n  namespace: foo\nspec:\n  mtls:\n    mode: ${mode}\n${extra}---\n`;

describe('buildProxylessInboundListener (istiod grpcgen)', () => {
  it('names and shapes the listener as istiod does, DENY filter before ALLOW, router last', () => {
    const result = build(
      policyYaml('allow-echo', '  rules:\n  - to:\n    - operation:\n        paths: ["/pkg.Echo/*"]\n  - from:\n    - source:\n        namespaces: ["bar"]') +
        policyYaml('deny-admin', '  action: DENY\n  rules:\n  - to:\n    - operation:\n        paths: ["/pkg.Admin/Do"]'),
    );
    const listener = result.listener;
    expect(listener?.name).toBe(NAME);
    expect(listener?.address).toEqual({ socketAddress: { address: '10.0.0.1', portValue: 50051 } });
    expect(listener?.filterChains?.map((c) => c.name)).toEqual(['inbound-plaintext']);
    expect(listener?.filterChains?.[0]?.filters?.[0]?.name).toBe('inbound-hcmplaintext');
    expect(listener?.filterChains?.[0]?.transportSocket).toBeUndefined();
    const hcm = hcmOf(listener);
    expect(hcm.httpFilters?.map((f) => f.name)).toEqual(['envoy.filters.http.rbac.DENY', 'envoy.filters.http.rbac', 'envoy.filters.http.router']);
    expect(rbacOf(hcm.httpFilters?.[0])).toEqual({
      action: 'DENY',
      policies: { 'foo-deny-admin-0': { permissions: [{ andRules: { rules: [{ orRules: { rules: [{ urlPath: { path: { exact: '/pkg.Admin/Do' } } }] } }] } }], principals: [{ andIds: { ids: [{ any: true }] } }] } },
    });
    expect(Object.keys(rbacOf(hcm.httpFilters?.[1])?.policies ?? {})).toEqual(['foo-allow-echo-0', 'foo-allow-echo-1']);
    expect(rbacOf(hcm.httpFilters?.[1])?.action).toBeUndefined();
    expect(hcm.routeConfig).toEqual({ name: 'inbound', virtualHosts: [{ domains: ['*'], routes: [{ match: { prefix: '/' }, nonForwardingAction: {} }] }] });
    expect(encodeEnvoyMessage(MESSAGE_NAMES.listener, listener).ok).toBe(true);
  });

  it('serves neither AUDIT nor CUSTOM, and a policy without rules adds no filter (an ALLOW without rules allows all here)', () => {
    const result = build(policyYaml('audit', '  action: AUDIT\n  rules:\n  - {}') + policyYaml('nothing', '  action: ALLOW'));
    expect(hcmOf(result.listener).httpFilters?.map((f) => f.name)).toEqual(['envoy.filters.http.router']);
  });

  it('enforces dry-run policies (istiod grpcgen ignores the annotation)', () => {
    const result = build(policyYaml('dry', '  action: DENY\n  rules:\n  - {}', '  annotations:\n    istio.io/dry-run: "true"\n'));
    expect(Object.keys(rbacOf(hcmOf(result.listener).httpFilters?.[0]).policies ?? {})).toEqual(['foo-dry-0']);
  });

  it('maps PeerAuthentication: STRICT → inbound-mtls with certificate providers; PERMISSIVE → plaintext unless tlsMode=istio; port-level modes', () => {
    const strict = build(PA('STRICT')).listener?.filterChains?.[0];
    expect(strict?.name).toBe('inbound-mtls');
    expect(strict?.transportSocket).toEqual({
      name: 'envoy.transport_sockets.tls',
      typedConfig: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
        commonTlsContext: {
          tlsCertificateProviderInstance: { instanceName: 'default', certificateName: 'default' },
          combinedValidationContext: { defaultValidationContext: { caCertificateProviderInstance: { instanceName: 'default', certificateName: 'ROOTCA' } } },
        },
        requireClientCertificate: true,
      },
    });
    expect(build(PA('PERMISSIVE')).listener?.filterChains?.[0]?.name).toBe('inbound-plaintext');
    expect(build('').listener?.filterChains?.[0]?.name).toBe('inbound-plaintext');
    expect(build(PA('PERMISSIVE'), { ...ECHO, labels: { app: 'echo', 'security.istio.io/tlsMode': 'istio' } }).listener?.filterChains?.[0]?.name).toBe('inbound-mtls');
    expect(build(PA('DISABLE')).listener?.filterChains?.[0]?.name).toBe('inbound-plaintext');
    const portLevel = PA('STRICT', '  selector:\n    matchLabels:\n      app: echo\n  portLevelMtls:\n    50051:\n      mode: DISABLE\n');
    expect(build(portLevel).listener?.filterChains?.[0]?.name).toBe('inbound-plaintext');
    expect(build(portLevel, { ...ECHO, ports: [...ECHO.ports, { port: 50052, protocol: 'GRPC' }] }, `${PROXYLESS_INBOUND_PREFIX}10.0.0.1:50052`).listener?.filterChains?.[0]?.name).toBe('inbound-mtls');
  });

  it('serves no listener for an undeclared port or a name that is not an inbound one; any port without declared ports', () => {
    expect(build('', ECHO, `${PROXYLESS_INBOUND_PREFIX}10.0.0.1:1`).listener).toBeUndefined();
    expect(build('', ECHO, 'echo.foo.svc.cluster.local:50051').listener).toBeUndefined();
    expect(build('', { ...ECHO, ports: [] }, `${PROXYLESS_INBOUND_PREFIX}10.0.0.1:1`).listener?.address?.socketAddress?.portValue).toBe(1);
    expect(parseInboundListenerName(`${PROXYLESS_INBOUND_PREFIX}[::1]:80`)).toEqual({ host: '::1', port: 80 });
    expect(parseInboundListenerName(`${PROXYLESS_INBOUND_PREFIX}10.0.0.1:99999`)).toBeUndefined();
    expect(parseInboundListenerName(`${PROXYLESS_INBOUND_PREFIX}10.0.0.1`)).toBeUndefined();
  });

  it('generates the same RBAC policy per rule as the sidecar HTTP filter (random ALLOW/DENY policies)', () => {
    fc.assert(
      fc.property(fc.array(authorizationPolicyArbitrary(['ALLOW', 'DENY']), { maxLength: 4 }), (policies) => {
        const enforced = policies.filter((p) => p.metadata.annotations['istio.io/dry-run'] === undefined);
        const workload: Workload = { namespace: 'foo', labels: { app: 'httpbin' }, ports: [{ port: 8080, protocol: 'GRPC' }] };
        const sidecar = compileWorkload({ workload, authorizationPolicies: enforced, options: { untranslatableRules: 'istiod' } });
        const proxyless = buildProxylessInboundListener({ listenerName: `${PROXYLESS_INBOUND_PREFIX}10.0.0.1:8080`, workload, authorizationPolicies: enforced, peerAuthentications: [] });
        const sidecarPolicies = (action: string) => {
          const filter = sidecar.config?.httpFilters.find((f) => f.name === 'envoy.filters.http.rbac' && ((f.typedConfig as unknown as { rules?: RBAC }).rules?.action ?? 'ALLOW') === action);
          const rules = (filter?.typedConfig as unknown as { rules?: RBAC } | undefined)?.rules;
          return Object.fromEntries(Object.entries(rules?.policies ?? {}).map(([k, v]) => [k.replace(/^ns\[(.*)\]-policy\[(.*)\]-rule\[(\d+)\]$/u, '$1-$2-$3'), v]));
        };
        const served = hcmOf(proxyless.listener).httpFilters ?? [];
        const servedPolicies = (name: string) => rbacOf(served.find((f) => f.name === name))?.policies ?? {};
        // Policies without rules: the sidecar emits a never-matching rule[0]; grpcgen emits nothing.
        const withoutNever = (map: Record<string, unknown>) => Object.fromEntries(Object.entries(map).filter(([, v]) => JSON.stringify(v) !== JSON.stringify({ permissions: [{ notRule: { any: true } }], principals: [{ notId: { any: true } }] })));
        expect(servedPolicies('envoy.filters.http.rbac.DENY')).toEqual(withoutNever(sidecarPolicies('DENY')));
        expect(servedPolicies('envoy.filters.http.rbac')).toEqual(withoutNever(sidecarPolicies('ALLOW')));
      }),
      { numRuns: 200 },
    );
  });
});
