/**
 * The catalogue of diagnostic codes. Codes are stable and never reused; the `IST....` codes are
 * istioctl analyze's own. Every code is listed in the library README with its message.
 */

/** Reading the input: limits, YAML, kinds and decoding into the typed model. */
export const LOAD_CODES = [
  'MESH_INPUT_UNREADABLE',
  'MESH_INPUT_TOO_LARGE',
  'MESH_DOCUMENT_TOO_LARGE',
  'MESH_TOO_MANY_DOCUMENTS',
  'MESH_NESTING_TOO_DEEP',
  'MESH_TOO_MANY_NODES',
  'MESH_YAML_SYNTAX',
  'MESH_YAML_UNSUPPORTED',
  'MESH_NOT_AN_OBJECT',
  'MESH_MISSING_TYPE',
  'MESH_WRONG_API_VERSION',
  'MESH_UNSUPPORTED_KIND',
  'MESH_IGNORED_KIND',
  'MESH_UNKNOWN_FIELD',
  'MESH_UNKNOWN_METADATA_FIELD',
  'MESH_WRONG_TYPE',
  'MESH_UNKNOWN_ENUM_VALUE',
  'MESH_BAD_MAP_KEY',
  'MESH_TOO_MANY_ITEMS',
] as const;

/** istiod's validation webhook / `istioctl validate`. */
export const WEBHOOK_CODES = [
  'META_DRY_RUN_UNSUPPORTED_KIND',
  'META_DRY_RUN_INVALID_VALUE',
  'META_DRY_RUN_UNSUPPORTED_ACTION',
  'META_ALWAYS_REJECT',
  'META_INTERNAL_ANNOTATION',
  'SELECTOR_AND_TARGET_REFS',
  'SELECTOR_EMPTY_KEY',
  'SELECTOR_WILDCARD',
  'SELECTOR_NO_LABELS',
  'TARGET_REF_NAME_MISSING',
  'TARGET_REF_NAMESPACE_SET',
  'TARGET_REF_KIND_NOT_ALLOWED',
  'AP_CUSTOM_WITHOUT_RULES',
  'AP_CUSTOM_PROVIDER_NAME_EMPTY',
  'AP_CUSTOM_UNSUPPORTED_ATTRIBUTE',
  'AP_PROVIDER_WITHOUT_CUSTOM',
  'AP_DENY_WITHOUT_RULES',
  'AP_FROM_SOURCE_NIL',
  'AP_SERVICE_ACCOUNTS_WITH_NAMESPACES_OR_PRINCIPALS',
  'AP_FROM_SOURCE_EMPTY',
  'AP_TO_OPERATION_NIL',
  'AP_TO_OPERATION_EMPTY',
  'AP_BAD_CIDR',
  'AP_BAD_IP',
  'AP_BAD_PORT',
  'AP_EMPTY_VALUE',
  'AP_TOO_MANY_SERVICE_ACCOUNTS',
  'AP_SERVICE_ACCOUNT_WILDCARD',
  'AP_SERVICE_ACCOUNT_FORMAT',
  'AP_SERVICE_ACCOUNT_EMPTY_NAMESPACE',
  'AP_SERVICE_ACCOUNT_EMPTY_NAME',
  'AP_SERVICE_ACCOUNT_TOO_LONG',
  'AP_MULTIPLE_WILDCARDS',
  'AP_WILDCARD_IN_MIDDLE',
  'AP_TRUST_DOMAIN_SLASH',
  'AP_PATH_TEMPLATE_ANY_NOT_LAST',
  'AP_PATH_TEMPLATE_BRACES',
  'AP_PATH_TEMPLATE_LITERAL',
  'AP_CONDITION_KEY_EMPTY',
  'AP_CONDITION_NO_VALUES',
  'AP_CONDITION_BAD_KEY',
  'AP_CONDITION_ATTRIBUTE_REPLACED',
  'AP_CONDITION_ATTRIBUTE_DEPRECATED',
  'AP_CONDITION_UNKNOWN_ATTRIBUTE',
  'AP_DENY_HTTP_ONLY',
  'PA_PORT_LEVEL_WITHOUT_SELECTOR',
  'PA_PORT_LEVEL_EMPTY',
  'PA_PORT_OUT_OF_RANGE',
] as const;

/** The CRD's OpenAPI/CEL schema, checked by the Kubernetes API server (not by istioctl). */
export const CRD_CODES = [
  'CRD_TOO_MANY_ITEMS',
  'CRD_TOO_LONG',
  'CRD_TOO_MANY_PROPERTIES',
  'CRD_PATTERN_MISMATCH',
  'CRD_REQUIRED',
] as const;

/** `istioctl analyze` analyzers for AuthorizationPolicy (schema messages wrap webhook ones). */
export const ANALYZER_CODES = ['IST0101', 'IST0106', 'IST0127', 'IST0133'] as const;

/** Reading a MeshConfig file (`loadMeshConfig`). */
export const MESH_CONFIG_CODES = [
  'MESH_CONFIG_NOT_A_MESH_CONFIG',
  'MESH_CONFIG_UNKNOWN_FIELD',
  'MESH_CONFIG_WRONG_TYPE',
  'MESH_CONFIG_INVALID_VALUE',
  'MESH_CONFIG_INVALID_PROVIDER',
] as const;

/** ward's own advisory checks for known production accidents. */
export const ADVICE_CODES = ['ADVICE_NULL_LIST_ELEMENT', 'ADVICE_SPIFFE_PREFIX', 'ADVICE_ALLOW_NOTHING'] as const;

export type LoadCode = (typeof LOAD_CODES)[number];
export type WebhookCode = (typeof WEBHOOK_CODES)[number];
export type CrdCode = (typeof CRD_CODES)[number];
export type AnalyzerCode = (typeof ANALYZER_CODES)[number];
export type AdviceCode = (typeof ADVICE_CODES)[number];
export type MeshConfigCode = (typeof MESH_CONFIG_CODES)[number];
export type DiagnosticCode = LoadCode | WebhookCode | CrdCode | AnalyzerCode | AdviceCode | MeshConfigCode;
