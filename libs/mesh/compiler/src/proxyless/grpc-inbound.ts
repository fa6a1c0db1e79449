// The inbound Listener istiod's gRPC generator (`grpcgen`, pilot/pkg/networking/grpcgen/lds.go)
// serves a proxyless gRPC server, built from the same policies the sidecar compiler reads:
//
// - name `xds.istio.io/grpc/lds/inbound/<ip>:<port>` (the name the server asked for), address
//   from that name; no listener for a port the workload does not declare (istiod skips it);
// - one filter chain, no match: `inbound-plaintext` (DISABLE, and PERMISSIVE unless the workload
//   carries `security.istio.io/tlsMode: istio`) or `inbound-mtls` (STRICT) with a
//   DownstreamTlsContext on certificate provider instance `default`;
// - HCM `inbound-hcm<suffix>`: `envoy.filters.http.rbac.DENY` (DENY rules), then
//   `envoy.filters.http.rbac` (ALLOW rules), each only when it has at least one rule, then the
//   router; an inline RouteConfiguration `inbound` with one virtual host `*` and a non-forwarding
//   route on prefix `/`;
// - RBAC policy keys `<ns>-<name>-<ruleIndex>`; AUDIT and CUSTOM policies are not served (gRPC
//   knows only ALLOW and DENY); a policy without rules contributes nothing; dry-run policies are
//   enforced like the others (istiod does not look at the annotation there).
// Pure: no I/O, deterministic.
import type { AuthorizationPolicy, PeerAuthentication } from '@ward/mesh/istio-api';
import type { DownstreamTlsContext, HttpFilter, Listener, Policy, RBAC } from '@ward/mesh/envoy-api';
import { FILTER_NAMES, TYPE_URLS } from '@ward/mesh/envoy-api';
import { composePeerAuthentication, mtlsModeForPort, type MtlsMode } from '../authn/peer-authentication';
import { generateRulePolicy } from '../authz/policy-generation';
import { selectAuthorizationPolicies, type SelectedPolicy } from '../authz/policy-selection';
import { buildRuleModel } from '../authz/rule-model';
import { DEFAULT_TRUST_DOMAIN } from '../authz/trust-domain';
import type { CompilerDiagnostic, DiagnosticSink } from '../diagnostics';
import type { Workload } from '../input';

/** Prefix of the inbound listener names (istio `grpcxds.ServerListenerNamePrefix`). */
export const PROXYLESS_INBOUND_PREFIX = 'xds.istio.io/grpc/lds/inbound/';
/** The bootstrap's `server_listener_resource_name_template` istio-agent writes. */
export const PROXYLESS_LISTENER_TEMPLATE = `${PROXYLESS_INBOUND_PREFIX}%s`;
/** Filter names grpcgen uses (`RBACHTTPFilterName`, `RBACHTTPFilterNameDeny`). */
export const PROXYLESS_RBAC_FILTER_NAMES = Object.freeze({ allow: 'envoy.filters.http.rbac', deny: 'envoy.filters.http.rbac.DENY' });
/** Certificate provider instance names istiod refers to (istio-agent's bootstrap defines them). */
export const PROXYLESS_CERT_PROVIDER = Object.freeze({ instance: 'default', certificate: 'default', rootCertificate: 'ROOTCA' });
/** The label that turns PERMISSIVE into STRICT for a proxyless workload (auto-mTLS clients). */
export const TLS_MODE_LABEL = 'security.istio.io/tlsMode';

/** What {@link buildProxylessInboundListener} needs. */
export interface ProxylessInboundInput {
  /** The listener name the server subscribed to. */
  readonly listenerName: string;
  /** The workload; `ports` empty means every port is served (ward has no service registry). */
  readonly workload: Workload;
  readonly authorizationPolicies: readonly AuthorizationPolicy[];
  readonly peerAuthentications: readonly PeerAuthentication[];
  /** Default `istio-system`. */
  readonly rootNamespace?: string;
  /** Namespace of resources written without one; default `default`. */
  readonly defaultNamespace?: string;
}

/** The listener (absent: istiod would not serve one for this name) and why. */
export interface ProxylessInboundResult {
  readonly listener?: Listener;
  readonly mtlsMode?: MtlsMode;
  readonly diagnostics: readonly CompilerDiagnostic[];
}

/** `<ip>:<port>` of a listener name, or undefined when the name is not an inbound one istiod parses. */
export function parseInboundListenerName(name: string): { host: string; port: number } | undefined {
  if (!name.startsWith(PROXYLESS_INBOUND_PREFIX)) return undefined;
  const address = name.slice(PROXYLESS_INBOUND_PREFIX.length);
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/u.exec(address);
  const plain = /^([^:[\]]+):(\d{1,5})$/u.exec(address);
  const match = bracketed ?? plain;
  if (match === null) return undefined;
  const port = Number(match[2]);
  if (port < 0 || port > 65535) return undefined;
  return { host: match[1] ?? '', port };
}

function rbacFilter(name: string, rules: RBAC): HttpFilter {
  return { name, typedConfig: { '@type': TYPE_URLS.httpRbac, rules } };
}

function rulePolicies(selected: readonly SelectedPolicy[], action: 'ALLOW' | 'DENY', sink: DiagnosticSink): Array<[string, Policy]> {
  const out: Array<[string, Policy]> = [];
  for (const policy of selected) {
    const rules = policy.policy.spec.rules ?? [];
    const resource = { kind: 'AuthorizationPolicy' as const, namespace: policy.namespace, name: policy.name };
    rules.forEach((rule, index) => {
      // grpcgen does not rewrite trust-domain aliases: the one-entry default bundle leaves principals as written.
      const model = buildRuleModel(rule, `spec.rules[${index}]`, [DEFAULT_TRUST_DOMAIN]);
      if ('unknownAttribute' in model) {
        sink.push({ code: 'COMPILE_UNKNOWN_ATTRIBUTE', severity: 'error', resource, path: model.path, message: `unknown attribute ${JSON.stringify(model.unknownAttribute)}; the rule is skipped (as istiod's gRPC generator does)` });
        return;
      }
      const generated = generateRulePolicy(model, { forTcp: false, policyNamespace: policy.namespace, useFilterState: false }, action === 'ALLOW');
      if (generated.kind === 'dropped') {
        sink.push({ code: 'COMPILE_INVALID_VALUE', severity: 'error', resource, path: generated.problem.path, message: `${generated.problem.failure.message}; the ALLOW rule is left out` });
        return;
      }
      for (const problem of generated.ignored) {
        sink.push({ code: 'COMPILE_INVALID_VALUE', severity: 'error', resource, path: problem.path, message: `${problem.failure.message}; the value is left out of the ${action} rule` });
      }
      out.push([`${policy.namespace}-${policy.name}-${index}`, generated.policy]);
    });
  }
  return out;
}

/**
 * istiod writes the deprecated `tls_certificate_certificate_provider_instance` and
 * `validation_context_certificate_provider_instance` fields; grpc-js-xds reads only their
 * successors (`tls_certificate_provider_instance`, `ca_certificate_provider_instance` of the
 * default validation context) and NACKs a listener without the first, so those are served.
 */
function tlsContext(): DownstreamTlsContext {
  return {
    commonTlsContext: {
      tlsCertificateProviderInstance: { instanceName: PROXYLESS_CERT_PROVIDER.instance, certificateName: PROXYLESS_CERT_PROVIDER.certificate },
      combinedValidationContext: {
        defaultValidationContext: {
          caCertificateProviderInstance: { instanceName: PROXYLESS_CERT_PROVIDER.instance, certificateName: PROXYLESS_CERT_PROVIDER.rootCertificate },
        },
      },
    },
    requireClientCertificate: true,
  } as DownstreamTlsContext;
}

/**
 * What the listener for one name depends on, resolved without building it: the address, the
 * effective mode, and `chainKey`, which is equal for two names exactly when their filter chains
 * are equal (same mode, same selected ALLOW and DENY policies) — an xDS server builds and encodes
 * the chains once per key and only the name and address per listener.
 */
export type ProxylessInboundPlan =
  | { readonly kind: 'none'; readonly diagnostics: readonly CompilerDiagnostic[] }
  | {
      readonly kind: 'listener';
      readonly host: string;
      readonly port: number;
      readonly mtlsMode: MtlsMode;
      readonly chainKey: string;
      readonly diagnostics: readonly CompilerDiagnostic[];
      /** The filter chains and the findings of building them. */
      buildFilterChains(): { readonly filterChains: NonNullable<Listener['filterChains']>; readonly diagnostics: readonly CompilerDiagnostic[] };
    };

export function planProxylessInboundListener(input: ProxylessInboundInput): ProxylessInboundPlan {
  const sink: DiagnosticSink = [];
  const address = parseInboundListenerName(input.listenerName);
  if (address === undefined) return { kind: 'none', diagnostics: [{ code: 'COMPILE_INVALID_VALUE', severity: 'error', message: `not an inbound gRPC listener name: ${JSON.stringify(input.listenerName)}` }] };
  const { workload } = input;
  if (workload.ports.length > 0 && !workload.ports.some((p) => p.port === address.port)) {
    return { kind: 'none', diagnostics: [{ code: 'COMPILE_INVALID_VALUE', severity: 'warning', message: `the workload declares no port ${address.port}; no listener is served for it` }] };
  }
  const rootNamespace = input.rootNamespace ?? 'istio-system';
  const defaultNamespace = input.defaultNamespace ?? 'default';
  const mtls = composePeerAuthentication(input.peerAuthentications, workload, rootNamespace, defaultNamespace, sink);
  let mode = mtlsModeForPort(mtls, address.port);
  if (mode === 'PERMISSIVE') mode = workload.labels[TLS_MODE_LABEL] === 'istio' ? 'STRICT' : 'DISABLE';
  const selected = selectAuthorizationPolicies(input.authorizationPolicies, workload, rootNamespace, defaultNamespace, sink);
  const refs = (list: readonly SelectedPolicy[]) => list.map((p) => `${p.namespace}/${p.name}`).join(',');
  const chainKey = `${mode}|deny:${refs(selected.deny)}|allow:${refs(selected.allow)}`;
  const chosenMode = mode;
  return {
    kind: 'listener',
    host: address.host,
    port: address.port,
    mtlsMode: mode,
    chainKey,
    diagnostics: sink,
    buildFilterChains: () => {
      const chainSink: DiagnosticSink = [];
      return { filterChains: filterChains(chosenMode, selected.deny, selected.allow, chainSink), diagnostics: chainSink };
    },
  };
}

function filterChains(mode: MtlsMode, deny: readonly SelectedPolicy[], allow: readonly SelectedPolicy[], sink: DiagnosticSink): NonNullable<Listener['filterChains']> {
  const suffix = mode === 'STRICT' ? 'mtls' : 'plaintext';
  const httpFilters: HttpFilter[] = [];
  const denyPolicies = rulePolicies(deny, 'DENY', sink);
  if (denyPolicies.length > 0) httpFilters.push(rbacFilter(PROXYLESS_RBAC_FILTER_NAMES.deny, { action: 'DENY', policies: Object.fromEntries(denyPolicies) }));
  const allowPolicies = rulePolicies(allow, 'ALLOW', sink);
  if (allowPolicies.length > 0) httpFilters.push(rbacFilter(PROXYLESS_RBAC_FILTER_NAMES.allow, { policies: Object.fromEntries(allowPolicies) }));
  httpFilters.push({ name: FILTER_NAMES.router, typedConfig: { '@type': TYPE_URLS.router } });
  return [
    {
      name: `inbound-${suffix}`,
      filters: [
        {
          name: `inbound-hcm${suffix}`,
          typedConfig: {
            '@type': TYPE_URLS.httpConnectionManager,
            httpFilters,
            routeConfig: {
              name: 'inbound',
              virtualHosts: [{ domains: ['*'], routes: [{ match: { prefix: '/' }, nonForwardingAction: {} }] }],
            },
          },
        },
      ],
      ...(mode === 'STRICT' ? { transportSocket: { name: FILTER_NAMES.tlsTransportSocket, typedConfig: { '@type': TYPE_URLS.downstreamTlsContext, ...tlsContext() } } } : {}),
    },
  ] as NonNullable<Listener['filterChains']>;
}

/** The inbound listener for one subscribed name. */
export function buildProxylessInboundListener(input: ProxylessInboundInput): ProxylessInboundResult {
  const plan = planProxylessInboundListener(input);
  if (plan.kind === 'none') return { diagnostics: plan.diagnostics };
  const built = plan.buildFilterChains();
  const listener = {
    name: input.listenerName,
    address: { socketAddress: { address: plan.host, portValue: plan.port } },
    filterChains: built.filterChains,
  } as Listener;
  return { listener, mtlsMode: plan.mtlsMode, diagnostics: [...plan.diagnostics, ...built.diagnostics] };
}
