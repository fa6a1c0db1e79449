// What the compiler needs to know about one workload and the mesh it lives in. Field names follow
// Istio's (meshConfig, Service ports) so that configuration can be pasted in.
import type {
  AuthorizationPolicy,
  MeshConfigExtAuthzGrpc,
  MeshConfigExtAuthzHttp,
  MeshConfigExtensionProvider,
  MeshConfigRequestBody,
  PeerAuthentication,
} from '@ward/mesh/istio-api';
import type { PolicyTranslationCache } from './authz/rule-set';
import type { CompilerDiagnostic } from './diagnostics';

/** Service port protocols, as Istio names them. `UNKNOWN` means "not declared": protocol sniffing. */
export const PORT_PROTOCOLS = ['HTTP', 'HTTP2', 'HTTP_PROXY', 'GRPC', 'GRPC-Web', 'HTTPS', 'TLS', 'TCP', 'Mongo', 'Redis', 'MySQL', 'UDP', 'UNKNOWN'] as const;
export type PortProtocol = (typeof PORT_PROTOCOLS)[number];

/** A port the workload serves: the container (target) port, which is what Envoy matches on. */
export interface WorkloadPort {
  /** The container port (Service `targetPort`); filter chains and `ports` rules use this number. */
  readonly port: number;
  readonly protocol: PortProtocol;
  /** The Service port, when it differs from the container port (informational). */
  readonly servicePort?: number;
  readonly name?: string;
}

/** The workload (pod) the configuration is compiled for. */
export interface Workload {
  /** A name for messages, e.g. the pod or deployment name. */
  readonly name?: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Ports declared by the Services selecting the workload; duplicates by `port` keep the first. */
  readonly ports: readonly WorkloadPort[];
}

/**
 * The ext_authz provider types are istio-api's MeshConfig ones, so a loaded MeshConfig's providers
 * are passed through unchanged. A provider's gRPC `timeout` is 600s when absent; the deprecated
 * `includeHeadersInCheck` is used only when `includeRequestHeadersInCheck` is empty; provider
 * kinds other than the two ext_authz ones are ignored.
 */
export type ExtAuthzRequestBody = MeshConfigRequestBody;
export type ExtAuthzGrpcProvider = MeshConfigExtAuthzGrpc;
export type ExtAuthzHttpProvider = MeshConfigExtAuthzHttp;
export type ExtensionProvider = MeshConfigExtensionProvider;

/** A Service known to the registry, for resolving ext_authz provider services. */
export interface MeshService {
  readonly hostname: string;
  readonly namespace: string;
}

/** The meshConfig settings the translation depends on. */
export interface MeshSettings {
  /** Default `istio-system`. */
  readonly rootNamespace: string;
  /** Default `cluster.local`. */
  readonly trustDomain: string;
  readonly trustDomainAliases: readonly string[];
  /** Trust domains of extra CA certificates (`caCertificates[].trustDomains`). */
  readonly caCertificateTrustDomains: readonly string[];
  readonly extensionProviders: readonly ExtensionProvider[];
  /** `PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS` (default false). */
  readonly enableMultipleCustomAuthzProviders: boolean;
  /** `meshMTLS.minProtocolVersion`. */
  readonly minTlsProtocolVersion: 'TLSV1_2' | 'TLSV1_3';
  /** `meshMTLS.cipherSuites`; istiod's default list when absent. */
  readonly cipherSuites?: readonly string[];
  /** `proxyInboundListenPort` (default 15006). */
  readonly inboundListenPort: number;
  /** `protocolDetectionTimeout` as protojson duration (default `0s`). */
  readonly protocolDetectionTimeout: string;
  /** Metadata exchange enabled (adds `istio-peer-exchange` to TCP ALPN); default true. */
  readonly metadataExchange: boolean;
  /** `PILOT_SKIP_VALIDATE_TRUST_DOMAIN` (default false). */
  readonly skipValidateTrustDomain: boolean;
}

/** Defaults of every mesh setting (istiod's). */
export const DEFAULT_MESH_SETTINGS: MeshSettings = Object.freeze({
  rootNamespace: 'istio-system',
  trustDomain: 'cluster.local',
  trustDomainAliases: [],
  caCertificateTrustDomains: [],
  extensionProviders: [],
  enableMultipleCustomAuthzProviders: false,
  minTlsProtocolVersion: 'TLSV1_2',
  inboundListenPort: 15006,
  protocolDetectionTimeout: '0s',
  metadataExchange: true,
  skipValidateTrustDomain: false,
});

/** How to treat a rule that istiod would silently skip (an unknown `when` attribute). */
export type UntranslatableRuleMode =
  /** Close it: a DENY rule denies everything, a CUSTOM rule sends everything to ext_authz. */
  | 'fail-closed'
  /** Do what istiod does: skip the rule (a DENY then denies less). */
  | 'istiod';

/** Everything `compileWorkload` takes. */
export interface CompileInput {
  readonly workload: Workload;
  readonly mesh?: Partial<MeshSettings>;
  readonly authorizationPolicies?: readonly AuthorizationPolicy[];
  readonly peerAuthentications?: readonly PeerAuthentication[];
  /** The service registry for ext_authz providers. */
  readonly services?: readonly MeshService[];
  readonly options?: Partial<CompileOptions>;
  /** Share translations when compiling many workloads against the same policies. */
  readonly cache?: PolicyTranslationCache;
}

/** Knobs of the translation itself. */
export interface CompileOptions {
  /** Default `fail-closed`. */
  readonly untranslatableRules: UntranslatableRuleMode;
  /** Principals as `filterState io.istio.peer_principal` (waypoints, HBONE); default false. */
  readonly useFilterState: boolean;
  /** Namespace of resources written without one (istioctl assumes `default`). */
  readonly defaultNamespace: string;
}

export const DEFAULT_COMPILE_OPTIONS: CompileOptions = Object.freeze({
  untranslatableRules: 'fail-closed',
  useFilterState: false,
  defaultNamespace: 'default',
});

/** Input limits: larger inputs are refused with a diagnostic. */
export const COMPILE_LIMITS = Object.freeze({
  maxAuthorizationPolicies: 20_000,
  maxPeerAuthentications: 20_000,
  maxWorkloadPorts: 1_024,
  maxWorkloadLabels: 256,
  maxExtensionProviders: 256,
  maxServices: 100_000,
});

/** The listener protocol class of a port: HTTP chains, TCP chains, or both (sniffing). */
export type ProtocolClass = 'HTTP' | 'TCP' | 'auto';

/** HTTP/HTTP2/gRPC/gRPC-Web/HTTP_PROXY → HTTP; TCP/HTTPS/TLS/Mongo/Redis/MySQL/UDP → TCP; else auto. */
export function protocolClass(protocol: PortProtocol): ProtocolClass {
  switch (protocol) {
    case 'HTTP':
    case 'HTTP2':
    case 'HTTP_PROXY':
    case 'GRPC':
    case 'GRPC-Web':
      return 'HTTP';
    case 'UNKNOWN':
      return 'auto';
    default:
      return 'TCP';
  }
}

/** Istio's protocol selection from a port name (`http-web` → HTTP, `grpc` → GRPC, `foo` → UNKNOWN). */
export function protocolFromPortName(name: string): PortProtocol {
  const prefix = name.split('-')[0]?.toLowerCase() ?? '';
  const found = PORT_PROTOCOLS.find((p) => p.toLowerCase() === prefix && p !== 'UNKNOWN');
  return found ?? 'UNKNOWN';
}

function invalid(message: string, path: string): CompilerDiagnostic {
  return { code: 'COMPILE_INVALID_INPUT', severity: 'error', message, path, resource: { kind: 'Workload', namespace: '', name: '' } };
}

function isPort(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535;
}

/** Checks the workload and mesh settings; every problem is returned (empty list: usable). */
export function validateCompileInput(input: CompileInput, mesh: MeshSettings): CompilerDiagnostic[] {
  const problems: CompilerDiagnostic[] = [];
  const { workload } = input;
  if (typeof workload !== 'object' || workload === null) return [invalid('workload must be an object', 'workload')];
  if (typeof workload.namespace !== 'string' || workload.namespace === '') problems.push(invalid('workload namespace must be set', 'workload.namespace'));
  const labels: unknown = workload.labels;
  if (typeof labels !== 'object' || labels === null || Object.values(labels).some((v) => typeof v !== 'string')) {
    problems.push(invalid('workload labels must map strings to strings', 'workload.labels'));
  } else if (Object.keys(labels).length > COMPILE_LIMITS.maxWorkloadLabels) {
    problems.push(invalid('too many workload labels', 'workload.labels'));
  }
  if (!Array.isArray(workload.ports)) return [...problems, invalid('workload ports must be a list', 'workload.ports')];
  if (workload.ports.length > COMPILE_LIMITS.maxWorkloadPorts) problems.push(invalid('too many workload ports', 'workload.ports'));
  workload.ports.forEach((p, i) => {
    if (!isPort(p.port)) problems.push(invalid(`port must be in 1..65535, got ${String(p.port)}`, `workload.ports[${i}].port`));
    if (!PORT_PROTOCOLS.includes(p.protocol)) problems.push(invalid(`unknown protocol ${String(p.protocol)}`, `workload.ports[${i}].protocol`));
  });
  if (mesh.trustDomain === '') problems.push(invalid('trustDomain must not be empty', 'mesh.trustDomain'));
  if (mesh.rootNamespace === '') problems.push(invalid('rootNamespace must not be empty', 'mesh.rootNamespace'));
  if (!isPort(mesh.inboundListenPort)) problems.push(invalid('inboundListenPort must be in 1..65535', 'mesh.inboundListenPort'));
  if (mesh.extensionProviders.length > COMPILE_LIMITS.maxExtensionProviders) problems.push(invalid('too many extension providers', 'mesh.extensionProviders'));
  if ((input.authorizationPolicies?.length ?? 0) > COMPILE_LIMITS.maxAuthorizationPolicies) problems.push(invalid('too many AuthorizationPolicies', 'authorizationPolicies'));
  if ((input.peerAuthentications?.length ?? 0) > COMPILE_LIMITS.maxPeerAuthentications) problems.push(invalid('too many PeerAuthentications', 'peerAuthentications'));
  if ((input.services?.length ?? 0) > COMPILE_LIMITS.maxServices) problems.push(invalid('too many services', 'services'));
  return problems;
}
