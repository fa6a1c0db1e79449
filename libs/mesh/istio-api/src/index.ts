// Model
export type {
  FieldPositions,
  ObjectMeta,
  PolicyTargetReference,
  ResourceOrigin,
  SourcePosition,
  WorkloadSelector,
} from './model/meta';
export { AUTHORIZATION_POLICY_ACTIONS, SECURITY_API_VERSIONS } from './model/authorization-policy';
export type {
  AuthorizationPolicy,
  AuthorizationPolicyAction,
  AuthorizationPolicySpec,
  Condition,
  ExtensionProviderRef,
  Operation,
  Rule,
  RuleFrom,
  RuleTo,
  SecurityApiVersion,
  Source,
} from './model/authorization-policy';
export { MUTUAL_TLS_MODES, portLevelMtlsEntries } from './model/peer-authentication';
export type {
  MutualTls,
  MutualTlsMode,
  PeerAuthentication,
  PeerAuthenticationSpec,
  PortLevelMtlsEntry,
} from './model/peer-authentication';
export type { NamespaceObject, PodContainer, PodObject } from './model/inventory';
export { isAuthorizationPolicy, isPeerAuthentication, resourceRefOf } from './model/resources';
export type { InventoryResource, LoadedResource, MeshResource, ResourceRef, SecurityResource } from './model/resources';
export { DRY_RUN_ANNOTATION, dryRunSetting, isDryRun, parseGoBool } from './model/dry-run';
export type { DryRunSetting } from './model/dry-run';

// Diagnostics
export { ADVICE_CODES, ANALYZER_CODES, CRD_CODES, LOAD_CODES, MESH_CONFIG_CODES, WEBHOOK_CODES } from './diagnostics/codes';
export type { AdviceCode, AnalyzerCode, CrdCode, DiagnosticCode, LoadCode, MeshConfigCode, WebhookCode } from './diagnostics/codes';
export { hasErrors, sortDiagnostics } from './diagnostics/diagnostic';
export type { Diagnostic, DiagnosticOrigin, Severity } from './diagnostics/diagnostic';

// Loading
export { DEFAULT_LOAD_LIMITS, utf8ByteLength } from './load/limits';
export type { LoadLimits } from './load/limits';
export { loadResources } from './load/load-resources';
export type { LoadOptions, LoadResult } from './load/load-resources';

// Validation
export { validateResource, validateResources } from './validate/validate-resources';
export type { ValidateOptions } from './validate/validate-resources';
export { positionOfPath } from './validate/findings';
export { formatIpAddress, parseIpAddress, parseIpPrefix } from './validate/go-netip';
export type { IpAddress, IpPrefix, ParseOutcome } from './validate/go-netip';

// Analysis (istioctl analyze)
export { analyzeResources } from './analyze/analyze-resources';
export type { AnalyzeOptions } from './analyze/analyze-resources';

// istioctl-compatible text
export { formatValidateText, istioctlAnalyzeLine, istioctlValidateLine } from './format/istioctl-text';
export type { InputReport, ValidateText, ValidateTextOptions } from './format/istioctl-text';

// MeshConfig files
export { loadMeshConfig } from './mesh-config/load-mesh-config';
export type { MeshConfigLoadOptions, MeshConfigLoadResult } from './mesh-config/load-mesh-config';
export type {
  MeshConfig,
  MeshConfigExtAuthzGrpc,
  MeshConfigExtAuthzHttp,
  MeshConfigExtensionProvider,
  MeshConfigForm,
  MeshConfigRequestBody,
  MeshConfigTlsSettings,
} from './mesh-config/mesh-config';
