// A strict protojson (canonical JSON) decoder over Envoy's descriptors: every key must be a field
// of the message, every value must have the field's JSON type, Any payloads are decoded by their
// type URL, oneofs hold at most one member, and protoc-gen-validate constraints are enforced.
// The output is a protobufjs-ready object (proto field names), so it can be encoded to binary.
import type { Enum, Field, MapField, Type } from 'protobufjs';
import { fieldRules, checkFieldRules, durationNanos, type RuleSink } from './pgv-rules';
import { findMessageType, fullNameOf, typeNameOfUrl } from './envoy-root';
import type { SchemaIssue, SchemaWarning } from './schema-issue';

/** Deepest nesting accepted; Envoy's own configs stay far below it. */
export const MAX_DECODE_DEPTH = 128;

/** Mutable state of one decode. */
export interface DecodeState extends RuleSink {
  readonly issues: SchemaIssue[];
  readonly warnings: SchemaWarning[];
  readonly uncheckedRules: Set<string>;
}

type ProtoObject = Record<string, unknown>;

const fieldIndexCache = new WeakMap<Type, Map<string, Field>>();

function jsonNameOf(field: Field): string {
  return field.name.replace(/_([a-z0-9])/gu, (_, c: string) => c.toUpperCase()).replace(/_/gu, '');
}

/** Fields by JSON name and by proto name (protojson parsers accept both). */
function fieldIndex(type: Type): Map<string, Field> {
  let index = fieldIndexCache.get(type);
  if (index === undefined) {
    index = new Map();
    for (const field of type.fieldsArray) {
      index.set(jsonNameOf(field), field);
      index.set(field.name, field);
    }
    fieldIndexCache.set(type, index);
  }
  return index;
}

function issue(state: DecodeState, code: SchemaIssue['code'], path: string, message: string): undefined {
  state.issues.push({ code, path, message });
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function childPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/u.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Decodes one message value; undefined (with issues recorded) when it does not decode. */
export function decodeMessage(type: Type, json: unknown, path: string, depth: number, state: DecodeState): ProtoObject | undefined {
  if (depth > MAX_DECODE_DEPTH) return issue(state, 'ERR_ENVOY_TOO_DEEP', path, `nesting deeper than ${MAX_DECODE_DEPTH}`);
  const wellKnown = decodeWellKnown(type, json, path, depth, state);
  if (wellKnown !== NOT_WELL_KNOWN) return wellKnown as ProtoObject | undefined;
  if (!isPlainObject(json)) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `expected an object for ${fullNameOf(type)}`);
  const index = fieldIndex(type);
  const out: ProtoObject = {};
  const present = new Map<Field, unknown>();
  const undecodable = new Set<Field>();
  for (const [key, value] of Object.entries(json)) {
    const field = index.get(key);
    const keyPath = childPath(path, key);
    if (field === undefined) {
      issue(state, 'ERR_ENVOY_UNKNOWN_FIELD', keyPath, `${fullNameOf(type)} has no field "${key}"`);
      continue;
    }
    if (present.has(field)) {
      issue(state, 'ERR_ENVOY_WRONG_TYPE', keyPath, `field ${field.name} given twice`);
      continue;
    }
    present.set(field, value);
    if (field.options?.deprecated === true) state.warnings.push({ path: keyPath, field: `${fullNameOf(type)}.${field.name}` });
    const decoded = decodeField(field, value, keyPath, depth, state);
    if (decoded !== undefined) out[field.name] = decoded;
    else undecodable.add(field);
  }
  checkOneofs(type, present, path, state);
  for (const field of type.fieldsArray) {
    const inOneof = field.partOf !== null && !isSyntheticOneof(field);
    if ((inOneof && !present.has(field)) || undecodable.has(field)) continue;
    const rules = fieldRules(field);
    checkFieldRules(field, rules, present.get(field), (name) => enumNumber(field, name), childPath(path, jsonNameOf(field)), state);
  }
  return out;
}

function isSyntheticOneof(field: Field): boolean {
  return field.partOf !== null && field.partOf.name.startsWith('_') && field.partOf.oneof.length === 1;
}

function checkOneofs(type: Type, present: Map<Field, unknown>, path: string, state: DecodeState): void {
  for (const oneof of type.oneofsArray) {
    const set = oneof.fieldsArray.filter((f) => present.has(f));
    if (set.length > 1) {
      issue(state, 'ERR_ENVOY_ONEOF_CONFLICT', path, `oneof ${oneof.name} has ${set.map((f) => f.name).join(' and ')}`);
    }
    if (set.length === 0 && oneof.options?.['(validate.required)'] === true) {
      issue(state, 'ERR_ENVOY_CONSTRAINT', path, `oneof ${oneof.name} of ${fullNameOf(type)} must be set`);
    }
  }
}

function enumNumber(field: Field, name: unknown): number | undefined {
  const resolved = field.resolvedType;
  if (resolved === null || 'fieldsArray' in resolved) return undefined;
  if (typeof name === 'number') return name;
  return (resolved as Enum).values[String(name)];
}

function decodeField(field: Field, value: unknown, path: string, depth: number, state: DecodeState): unknown {
  if (field.map) {
    if (!isPlainObject(value)) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected an object (map)');
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      const keyType = (field as unknown as MapField).keyType;
      if (!mapKeyValid(keyType, key)) issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `bad ${keyType} map key ${key}`);
      const decoded = decodeSingle(field, entry, childPath(path, key), depth + 1, state);
      if (decoded !== undefined) out[key] = decoded;
    }
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected an array');
    return value.map((item, index) => decodeSingle(field, item, `${path}[${index}]`, depth + 1, state));
  }
  return decodeSingle(field, value, path, depth + 1, state);
}

function mapKeyValid(keyType: string, key: string): boolean {
  if (keyType === 'string') return true;
  if (keyType === 'bool') return key === 'true' || key === 'false';
  return /^-?\d+$/u.test(key);
}

function decodeSingle(field: Field, value: unknown, path: string, depth: number, state: DecodeState): unknown {
  if (value === null) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'null is not a value');
  const resolved = field.resolvedType;
  if (resolved !== null && 'fieldsArray' in resolved) return decodeMessage(resolved as Type, value, path, depth, state);
  if (resolved !== null) return decodeEnum(resolved as Enum, value, path, state);
  return decodeScalar(field.type, value, path, state);
}

function decodeEnum(type: Enum, value: unknown, path: string, state: DecodeState): unknown {
  if (typeof value === 'string' && value in type.values) return value;
  if (typeof value === 'number' && Object.values(type.values).includes(value)) return type.valuesById[value];
  return issue(state, 'ERR_ENVOY_UNKNOWN_ENUM_VALUE', path, `${JSON.stringify(value)} is not a value of ${fullNameOf(type)}`);
}

const INT_RANGES: Record<string, readonly [bigint, bigint]> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};

/** Decodes a scalar by its proto type name. */
export function decodeScalar(type: string, value: unknown, path: string, state: DecodeState): unknown {
  const range = INT_RANGES[type];
  if (range !== undefined) {
    const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : typeof value === 'string' ? value : undefined;
    if (text === undefined || !/^-?\d+$/u.test(text)) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `expected an integer (${type})`);
    const big = BigInt(text);
    if (big < range[0] || big > range[1]) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `${text} out of range for ${type}`);
    return type.endsWith('64') ? text : Number(text);
  }
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected a string');
    case 'bytes':
      return typeof value === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/u.test(value)
        ? value
        : issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected base64 bytes');
    case 'bool':
      return typeof value === 'boolean' ? value : issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected a boolean');
    case 'double':
    case 'float':
      if (typeof value === 'number') return value;
      if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
      return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `expected a number (${type})`);
    default:
      return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `unsupported scalar ${type}`);
  }
}

const NOT_WELL_KNOWN = Symbol('not-well-known');

const WRAPPERS: Record<string, string> = {
  'google.protobuf.BoolValue': 'bool',
  'google.protobuf.StringValue': 'string',
  'google.protobuf.BytesValue': 'bytes',
  'google.protobuf.DoubleValue': 'double',
  'google.protobuf.FloatValue': 'float',
  'google.protobuf.Int32Value': 'int32',
  'google.protobuf.UInt32Value': 'uint32',
  'google.protobuf.Int64Value': 'int64',
  'google.protobuf.UInt64Value': 'uint64',
};

const DURATION_MAX_SECONDS = 315_576_000_000n;

function decodeWellKnown(type: Type, json: unknown, path: string, depth: number, state: DecodeState): unknown {
  const name = fullNameOf(type);
  if (!name.startsWith('google.protobuf.')) return NOT_WELL_KNOWN;
  const wrapped = WRAPPERS[name];
  if (wrapped !== undefined) {
    const inner = decodeScalar(wrapped, json, path, state);
    return inner === undefined ? undefined : { value: inner };
  }
  switch (name) {
    case 'google.protobuf.Any':
      return decodeAny(json, path, depth, state);
    case 'google.protobuf.Duration':
      return decodeDuration(json, path, state);
    case 'google.protobuf.Empty':
      return isPlainObject(json) && Object.keys(json).length === 0 ? {} : issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected {}');
    case 'google.protobuf.Struct':
      return isPlainObject(json) ? { fields: mapValues(json, path, depth, state) } : issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected an object');
    case 'google.protobuf.Value':
      return jsonToValue(json, path, depth, state);
    case 'google.protobuf.ListValue':
      return Array.isArray(json)
        ? { values: json.map((v, i) => jsonToValue(v, `${path}[${i}]`, depth + 1, state)) }
        : issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected an array');
    default:
      return NOT_WELL_KNOWN; // Timestamp, FieldMask and friends: not used by the compiler, decoded as messages
  }
}

function decodeDuration(json: unknown, path: string, state: DecodeState): ProtoObject | undefined {
  const nanos = typeof json === 'string' ? durationNanos(json) : undefined;
  if (nanos === undefined) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, `expected a duration like "1.5s", got ${JSON.stringify(json)}`);
  const seconds = nanos / 1_000_000_000n;
  if (seconds > DURATION_MAX_SECONDS || seconds < -DURATION_MAX_SECONDS) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'duration out of range');
  return { seconds: seconds.toString(), nanos: Number(nanos % 1_000_000_000n) };
}

function mapValues(json: Record<string, unknown>, path: string, depth: number, state: DecodeState): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) out[key] = jsonToValue(value, childPath(path, key), depth + 1, state);
  return out;
}

function jsonToValue(json: unknown, path: string, depth: number, state: DecodeState): unknown {
  if (depth > MAX_DECODE_DEPTH) return issue(state, 'ERR_ENVOY_TOO_DEEP', path, `nesting deeper than ${MAX_DECODE_DEPTH}`);
  if (json === null) return { null_value: 'NULL_VALUE' };
  if (typeof json === 'number') return { number_value: json };
  if (typeof json === 'string') return { string_value: json };
  if (typeof json === 'boolean') return { bool_value: json };
  if (Array.isArray(json)) return { list_value: { values: json.map((v, i) => jsonToValue(v, `${path}[${i}]`, depth + 1, state)) } };
  if (isPlainObject(json)) return { struct_value: { fields: mapValues(json, path, depth, state) } };
  return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'not a JSON value');
}

function decodeAny(json: unknown, path: string, depth: number, state: DecodeState): ProtoObject | undefined {
  if (!isPlainObject(json)) return issue(state, 'ERR_ENVOY_WRONG_TYPE', path, 'expected an object (Any)');
  const typeUrl = json['@type'];
  if (typeof typeUrl !== 'string') return issue(state, 'ERR_ENVOY_WRONG_TYPE', childPath(path, '@type'), 'Any needs a string @type');
  const typeName = typeNameOfUrl(typeUrl);
  const packed = typeName === undefined ? undefined : findMessageType(typeName);
  if (packed === undefined) return issue(state, 'ERR_ENVOY_UNKNOWN_TYPE_URL', childPath(path, '@type'), `unknown type URL ${typeUrl}`);
  const { ['@type']: _ignored, ...rest } = json;
  const isWellKnown = fullNameOf(packed).startsWith('google.protobuf.') && fullNameOf(packed) !== 'google.protobuf.Empty';
  let body: unknown;
  if (isWellKnown) {
    const extra = Object.keys(rest).filter((k) => k !== 'value');
    for (const key of extra) issue(state, 'ERR_ENVOY_UNKNOWN_FIELD', childPath(path, key), `Any of ${typeName} has only "value"`);
    body = decodeMessage(packed, rest['value'], childPath(path, 'value'), depth + 1, state);
  } else {
    body = decodeMessage(packed, rest, path, depth + 1, state);
  }
  if (body === undefined) return undefined;
  const bytes = packed.encode(packed.fromObject(body as ProtoObject)).finish();
  return { type_url: typeUrl, value: bytes };
}
