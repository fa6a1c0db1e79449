/** Why a protojson document does not decode as the Envoy message it claims to be. */
export type SchemaIssueCode =
  | 'ERR_ENVOY_UNKNOWN_FIELD'
  | 'ERR_ENVOY_WRONG_TYPE'
  | 'ERR_ENVOY_UNKNOWN_TYPE_URL'
  | 'ERR_ENVOY_ONEOF_CONFLICT'
  | 'ERR_ENVOY_UNKNOWN_ENUM_VALUE'
  | 'ERR_ENVOY_CONSTRAINT'
  | 'ERR_ENVOY_TOO_DEEP';

/** One problem found while decoding, located by a JSON path such as `typedConfig.rules.policies["p"]`. */
export interface SchemaIssue {
  readonly code: SchemaIssueCode;
  /** Path from the document root, `$` for the root itself. */
  readonly path: string;
  readonly message: string;
}

/** A use of a field Envoy marks deprecated: accepted, but worth knowing. */
export interface SchemaWarning {
  readonly path: string;
  readonly field: string;
}
