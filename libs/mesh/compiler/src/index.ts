// @ward/mesh/compiler: Istio AuthorizationPolicy and PeerAuthentication → the Envoy inbound
// configuration istiod builds for a sidecar, a simulator of Envoy's decisions on it, and the
// go-yaml writer that reproduces istiod's golden format.

// Compiling
export { compileWorkload, resolveMeshSettings } from './compile-workload';
export type { AppliedPolicy, CompileResult, WorkloadConfig } from './compile-workload';
export {
  COMPILE_LIMITS,
  DEFAULT_COMPILE_OPTIONS,
  DEFAULT_MESH_SETTINGS,
  PORT_PROTOCOLS,
  protocolClass,
  protocolFromPortName,
} from './input';
export type {
  CompileInput,
  CompileOptions,
  ExtAuthzGrpcProvider,
  ExtAuthzHttpProvider,
  ExtAuthzRequestBody,
  ExtensionProvider,
  MeshService,
  MeshSettings,
  PortProtocol,
  ProtocolClass,
  UntranslatableRuleMode,
  Workload,
  WorkloadPort,
} from './input';
export { COMPILER_DIAGNOSTIC_CODES, hasCompileErrors } from './diagnostics';
export type { CompilerDiagnostic, CompilerDiagnosticCode, CompilerSeverity, DiagnosticResource } from './diagnostics';
export { buildAuthorizationFilters } from './authz/authz-filters';
export { PolicyTranslationCache } from './authz/rule-set';
export type { AuthzBuildInput, AuthzFilters, BuilderScope } from './authz/authz-filters';
export type { SelectedPolicies, SelectedPolicy } from './authz/policy-selection';
export { mtlsModeForPort } from './authn/peer-authentication';
export type { EffectiveMtls, MtlsMode, PolicyRef } from './authn/peer-authentication';
export { INBOUND_NAMES } from './listener/inbound-listener';

// Output format
export { toGoYaml, MAX_YAML_DEPTH } from './yaml/go-yaml';

// Simulating and explaining
export { prepareSimulation, simulate } from './simulate/simulate';
export type { PreparedSimulation } from './simulate/simulate';
export { SimulatorError } from './simulate/errors';
export type { SimulatorErrorCode } from './simulate/errors';
export { DEFAULT_SOURCE_PRINCIPAL, DEFAULT_TRAFFIC_ADDRESSES, spiffeUri } from './simulate/traffic';
export type { ClientTransport, SimulatedCertificate, SimulatedHttpRequest, SimulatedTraffic } from './simulate/traffic';
export type { Decision, EngineVerdict, FilterEvaluation, SelectedChain, SimulationOutcome, SimulationResult } from './simulate/result';
export type { DetectedConnection } from './simulate/filter-chain-match';
export { evaluateRbac } from './simulate/rbac-engine';
export type { EngineResult, PeerCertificate, RbacAttributes } from './simulate/rbac-engine';
export { explainSimulation, explainWorkload, matchesEverything, matchesNothing } from './explain';
export type { Explanation, Finding, FindingCode } from './explain';

// Proxyless gRPC (istiod's gRPC generator)
export {
  buildProxylessInboundListener,
  parseInboundListenerName,
  planProxylessInboundListener,
  PROXYLESS_CERT_PROVIDER,
  PROXYLESS_INBOUND_PREFIX,
  PROXYLESS_LISTENER_TEMPLATE,
  PROXYLESS_RBAC_FILTER_NAMES,
  TLS_MODE_LABEL,
} from './proxyless/grpc-inbound';
export type { ProxylessInboundInput, ProxylessInboundPlan, ProxylessInboundResult } from './proxyless/grpc-inbound';
