// Strict schema check of emitted Envoy configuration against Envoy's own protos.
import { assert } from '@ward/shared/errors';
import { findMessageType, typeNameOfUrl } from './envoy-root';
import { decodeMessage, type DecodeState } from './protojson-decode';
import type { SchemaIssue, SchemaWarning } from './schema-issue';

/** The document decodes as `typeName`; `bytes` is its binary protobuf encoding. */
export interface EnvoyCheckSuccess {
  readonly ok: true;
  readonly typeName: string;
  readonly bytes: Uint8Array;
  readonly warnings: readonly SchemaWarning[];
  /** Constraint names present on the decoded fields that the checker does not evaluate. */
  readonly uncheckedRules: readonly string[];
}

/** The document does not decode; every issue found is listed. */
export interface EnvoyCheckFailure {
  readonly ok: false;
  readonly typeName: string;
  readonly issues: readonly SchemaIssue[];
  readonly warnings: readonly SchemaWarning[];
  readonly uncheckedRules: readonly string[];
}

export type EnvoyCheckResult = EnvoyCheckSuccess | EnvoyCheckFailure;

/**
 * Decodes `json` strictly as the Envoy message `typeName` (for example
 * `envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter`): unknown fields, wrong
 * JSON types, unknown `@type` URLs, two members of a oneof and protoc-gen-validate violations are
 * all reported, each with its JSON path.
 *
 * @example
 * ```ts
 * const result = checkEnvoyMessage('envoy.config.rbac.v3.RBAC', { action: 'DENY', policies: {} });
 * if (!result.ok) console.log(result.issues);
 * ```
 */
export function checkEnvoyMessage(typeName: string, json: unknown): EnvoyCheckResult {
  const type = findMessageType(typeName);
  if (type === undefined) throw new TypeError(`checkEnvoyMessage: ${typeName} is not an Envoy message known to @ward/mesh/envoy-api`);
  const state: DecodeState = { issues: [], warnings: [], uncheckedRules: new Set() };
  const decoded = decodeMessage(type, json, '$', 0, state);
  const uncheckedRules = [...state.uncheckedRules].sort();
  if (decoded === undefined || state.issues.length > 0) {
    assert(state.issues.length > 0, 'a failed decode records an issue');
    return { ok: false, typeName, issues: state.issues, warnings: state.warnings, uncheckedRules };
  }
  const bytes = type.encode(type.fromObject(decoded)).finish();
  return { ok: true, typeName, bytes, warnings: state.warnings, uncheckedRules };
}

/** Like {@link checkEnvoyMessage}, for a protojson `Any` (`{"@type": ..., ...fields}`). */
export function checkEnvoyAny(json: unknown): EnvoyCheckResult {
  const typeUrl = typeof json === 'object' && json !== null ? (json as Record<string, unknown>)['@type'] : undefined;
  const typeName = typeof typeUrl === 'string' ? typeNameOfUrl(typeUrl) : undefined;
  if (typeName === undefined || findMessageType(typeName) === undefined) {
    return {
      ok: false,
      typeName: String(typeUrl),
      issues: [{ code: 'ERR_ENVOY_UNKNOWN_TYPE_URL', path: '$["@type"]', message: `unknown type URL ${String(typeUrl)}` }],
      warnings: [],
      uncheckedRules: [],
    };
  }
  const { ['@type']: _typeUrl, ...fields } = json as Record<string, unknown>;
  return checkEnvoyMessage(typeName, fields);
}

/**
 * Decodes binary `bytes` of `typeName` into the object form @grpc/proto-loader produces
 * (proto field names, enums and 64-bit integers as strings, defaults filled in, a virtual field
 * naming each set oneof) — the input format of grpc-js-xds's RBAC engine.
 */
export function toProtoLoaderObject(typeName: string, bytes: Uint8Array): Record<string, unknown> {
  const type = findMessageType(typeName);
  if (type === undefined) throw new TypeError(`toProtoLoaderObject: unknown message ${typeName}`);
  return type.toObject(type.decode(bytes), { longs: String, enums: String, defaults: true, oneofs: true, arrays: true, objects: true });
}

/**
 * Binary encoding of protojson `json` as `typeName`, for serving over xDS: like
 * {@link checkEnvoyMessage}, but Envoy's protoc-gen-validate constraints are not applied (gRPC's
 * xDS clients do not enforce them, and istiod's proxyless resources do not satisfy all of them:
 * a virtual host without a name, an HCM without a stat prefix). Any other issue fails.
 */
export function encodeEnvoyMessage(typeName: string, json: unknown): { ok: true; bytes: Uint8Array } | { ok: false; issues: readonly SchemaIssue[] } {
  const type = findMessageType(typeName);
  if (type === undefined) throw new TypeError(`encodeEnvoyMessage: ${typeName} is not an Envoy message known to @ward/mesh/envoy-api`);
  const state: DecodeState = { issues: [], warnings: [], uncheckedRules: new Set() };
  const decoded = decodeMessage(type, json, '$', 0, state);
  const issues = state.issues.filter((issue) => issue.code !== 'ERR_ENVOY_CONSTRAINT');
  if (decoded === undefined || issues.length > 0) return { ok: false, issues: issues.length > 0 ? issues : state.issues };
  return { ok: true, bytes: type.encode(type.fromObject(decoded)).finish() };
}
