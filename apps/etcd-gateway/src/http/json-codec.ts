// etcd's JSON gateway encoding (grpc-gateway's jsonpb with OrigName): field names as in the .proto
// (lowerCamelCase accepted on input too), bytes as base64, 64-bit integers as decimal strings,
// enums by etcd's upper-case names (`EQUAL`, `PUT`, `READWRITE`; numbers accepted on input), zero
// values left out of answers. Walks protobufjs reflection, bounded in depth.
//
// Decoding never consults a prototype: field names are looked up in a Map built from the schema,
// and the decoded objects have no prototype. As etcd 3.4's gateway does, unknown fields (at any
// depth, `__proto__` and `constructor` included) are ignored, the last of duplicate keys wins
// (JSON.parse, like Go's map decoding), and wrong JSON types are refused with INVALID_ARGUMENT and
// the text Go's encoding/json gives (`json: cannot unmarshal array into Go value of type ...`).
// protobufjs is CommonJS: under Node's ESM loader only its default export exists.
import protobuf, { type Enum as EnumType, type Field, type Type as MessageType } from 'protobufjs';
import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { PROTO_MAX_MESSAGE_DEPTH, etcdMessageType, etcdProtoRoot } from '@ward/etcd/proto';
import { wireError } from '@ward/etcd/wire-errors';

/**
 * Deepest message nesting taken from JSON and given back as JSON: the protobuf codecs' own, so a
 * txn within the nesting bound is decoded and its answer printed, and a deeper one is refused
 * (by the txn bound, or here far past it) before anything is proposed.
 */
const MAX_JSON_DEPTH = PROTO_MAX_MESSAGE_DEPTH;

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
/** A UTF-16 surrogate without its partner (JSON can spell one: `"\udcff"`). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const DECIMAL = /^-?\d{1,20}$/;

function invalid(message: string): GrpcStatusError {
  return new GrpcStatusError(Status.INVALID_ARGUMENT, message);
}

/** etcd's enum value names: the etcd3 protos' PascalCase, upper-cased with `_` between words. */
export function etcdEnumName(protoName: string): string {
  return protoName.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, letter: string) => letter.toUpperCase());
}

const { Enum, Type } = protobuf;
type Type = MessageType;
type Enum = EnumType;

let resolved = false;
/** A message type with every field's type resolved. */
export function messageType(fullName: string): Type {
  if (!resolved) {
    etcdProtoRoot().resolveAll();
    resolved = true;
  }
  return etcdMessageType(fullName);
}

/** The JSON kind Go's encoding/json names in its type errors. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // 'string', 'number' or 'object' for JSON.parse output
}

/** Go's `json: cannot unmarshal <kind> into Go value of type <type>`. */
function cannotUnmarshal(value: unknown, goType: string): GrpcStatusError {
  return invalid(`json: cannot unmarshal ${jsonKind(value)} into Go value of type ${goType}`);
}

/** The same for a number that does not fit a numeric Go type (Go prints the literal). */
function cannotUnmarshalNumber(text: string, goType: string): GrpcStatusError {
  return invalid(`json: cannot unmarshal number ${text.slice(0, 32)} into Go value of type ${goType}`);
}

const GO_MESSAGE = 'map[string]json.RawMessage';
const GO_REPEATED = '[]json.RawMessage';

/** The Go name of a protobuf enum as etcd's generated code spells it (`etcdserverpb.RangeRequest_SortOrder`). */
function goEnumName(enumType: Enum): string {
  const [pkg, ...names] = enumType.fullName.replace(/^\./, '').split('.');
  return names.length === 0 ? String(pkg) : `${pkg}.${names.join('_')}`;
}

const GO_INTEGER_TYPES: Readonly<Record<string, string>> = {
  int64: 'int64',
  sint64: 'int64',
  sfixed64: 'int64',
  uint64: 'uint64',
  fixed64: 'uint64',
  int32: 'int32',
  sint32: 'int32',
  sfixed32: 'int32',
  uint32: 'uint32',
  fixed32: 'uint32',
};

/** Every JSON name a type's fields answer to (proto name and lowerCamelCase), own entries only. */
const fieldNames = new WeakMap<Type, ReadonlyMap<string, Field>>();

function fieldByJsonName(type: Type, name: string): Field | undefined {
  let names = fieldNames.get(type);
  if (names === undefined) {
    const built = new Map<string, Field>();
    for (const field of type.fieldsArray) built.set(camelCase(field.name), field);
    for (const field of type.fieldsArray) built.set(field.name, field);
    names = built;
    fieldNames.set(type, names);
  }
  return names.get(name);
}

function enumFromJson(enumType: Enum, value: unknown): number {
  if (typeof value === 'number') {
    if (Number.isInteger(value) && Math.abs(value) <= 0x7fff_ffff) return value;
    throw cannotUnmarshalNumber(String(value), goEnumName(enumType));
  }
  if (typeof value !== 'string') throw cannotUnmarshal(value, goEnumName(enumType));
  for (const [name, number] of Object.entries(enumType.values)) {
    if (value === name || value === etcdEnumName(name)) return number;
  }
  throw invalid(`unknown value ${JSON.stringify(value.slice(0, 64))} for enum ${goEnumName(enumType)}`);
}

/** Bytes as Go reads them: a base64 string, or (Go's []uint8 rule) an array of numbers 0..255. */
function bytesFromJson(value: unknown, path: string): Uint8Array {
  if (Array.isArray(value)) {
    return Uint8Array.from(value, (item: unknown) => {
      if (typeof item !== 'number') throw cannotUnmarshal(item, 'uint8');
      if (!Number.isInteger(item) || item < 0 || item > 255) throw cannotUnmarshalNumber(String(item), 'uint8');
      return item;
    });
  }
  if (typeof value !== 'string') throw cannotUnmarshal(value, '[]uint8');
  if (!BASE64.test(value)) throw invalid(`invalid base64 in field ${path}`);
  return Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function scalarFromJson(field: Field, value: unknown, path: string): unknown {
  switch (field.type) {
    case 'bytes':
      return bytesFromJson(value, path);
    case 'string':
      if (typeof value !== 'string') throw cannotUnmarshal(value, 'string');
      // Go's JSON decoder (etcd's gateway) reads a lone surrogate escape as U+FFFD; protobufjs would
      // write it as a surrogate's 3 bytes in short strings and as U+FFFD in long ones.
      return value.replace(LONE_SURROGATE, '\ufffd');
    case 'bool':
      if (typeof value !== 'boolean') throw cannotUnmarshal(value, 'bool');
      return value;
    default:
      return integerFromJson(field, value);
  }
}

/** What Go's JSON scanner says about a quoted integer that is not a JSON number. */
function notANumber(text: string): GrpcStatusError {
  if (text.trim() === '') return invalid('unexpected end of JSON input');
  const first = text.trimStart()[0]!;
  if (!/[-0-9]/.test(first)) return invalid(`invalid character ${JSON.stringify(first).replace(/^"|"$/g, "'")} looking for beginning of value`);
  return invalid(`invalid number ${JSON.stringify(text.slice(0, 32))}`);
}

const JSON_NUMBER_TEXT = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

function integerFromJson(field: Field, value: unknown): unknown {
  const goType = GO_INTEGER_TYPES[field.type] ?? field.type;
  if (typeof value !== 'number' && typeof value !== 'string') throw cannotUnmarshal(value, goType);
  const text = typeof value === 'number' ? String(value) : value;
  if (!DECIMAL.test(text)) {
    if (typeof value === 'number' || JSON_NUMBER_TEXT.test(text)) throw cannotUnmarshalNumber(text, goType);
    throw notANumber(text);
  }
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw cannotUnmarshalNumber(text, goType);
  const big = BigInt(text);
  const unsigned = field.type.startsWith('uint') || field.type.startsWith('fixed');
  const bits = field.long ? 64n : 32n;
  const min = unsigned ? 0n : -(1n << (bits - 1n));
  const max = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
  if (big < min || big > max) throw cannotUnmarshalNumber(text, goType);
  return field.long ? text : Number(big);
}

function valueFromJson(field: Field, value: unknown, path: string, depth: number): unknown {
  const resolvedType = field.resolvedType;
  if (resolvedType instanceof Type) return objectFromJson(resolvedType, value, path, depth + 1);
  if (resolvedType instanceof Enum) return enumFromJson(resolvedType, value);
  return scalarFromJson(field, value, path);
}

/**
 * A JSON value as a prototype-free object protobufjs's `fromObject` takes for `type` (enums as
 * numbers, bytes as Uint8Arrays, 64-bit integers as decimal strings). Unknown fields are skipped
 * and wrong types refused with INVALID_ARGUMENT, as etcd's gateway does.
 */
function objectFromJson(type: Type, json: unknown, path = type.name, depth = 0): Record<string, unknown> {
  if (depth > MAX_JSON_DEPTH) {
    // Only txns nest this deep; etcd refuses them past its bound with this text (any depth).
    if (type.name === 'TxnRequest' || type.name === 'RequestOp') throw wireError('TooManyOps');
    throw invalid('request nests too deeply');
  }
  const out = Object.create(null) as Record<string, unknown>;
  if (json === null || json === undefined) return out;
  if (typeof json !== 'object' || Array.isArray(json)) throw cannotUnmarshal(json, GO_MESSAGE);
  // Object.entries lists own enumerable properties only (an own `__proto__` from JSON.parse too).
  for (const [name, value] of Object.entries(json)) {
    const field = fieldByJsonName(type, name);
    if (field === undefined || value === null) continue;
    const fieldPath = `${path}.${field.name}`;
    if (field.repeated) {
      if (!Array.isArray(value)) throw cannotUnmarshal(value, GO_REPEATED);
      out[field.name] = value.map((item: unknown, index) => valueFromJson(field, item, `${fieldPath}[${index}]`, depth));
    } else {
      out[field.name] = valueFromJson(field, value, fieldPath, depth);
    }
  }
  return out;
}

/** Encodes a JSON request body as the proto bytes a gRPC client would send. */
export function encodeJsonRequest(typeName: string, json: unknown): Uint8Array {
  const type = messageType(typeName);
  return type.encode(type.fromObject(objectFromJson(type, json))).finish();
}

function valueToJson(field: Field, value: unknown, depth: number): unknown {
  const resolvedType = field.resolvedType;
  if (resolvedType instanceof Type) return messageToJson(resolvedType, value as Record<string, unknown>, depth + 1);
  if (resolvedType instanceof Enum) {
    const name = resolvedType.valuesById[value as number];
    return name === undefined ? value : etcdEnumName(name);
  }
  if (field.type === 'bytes') return Buffer.from(value as Uint8Array).toString('base64');
  if (field.long) return String(value);
  return value;
}

/** Go's proto3 JSON leaves out scalars at their zero value (oneof members excepted). */
function isZeroScalar(field: Field, value: unknown): boolean {
  if (field.partOf !== null || field.resolvedType instanceof Type) return false;
  if (value instanceof Uint8Array) return value.length === 0;
  if (typeof value === 'object' && value !== null) return String(value) === '0'; // Long
  return value === 0 || value === false || value === '';
}

/** A decoded protobufjs message as etcd's gateway prints it (zero values left out). */
function messageToJson(type: Type, message: Record<string, unknown>, depth = 0): Record<string, unknown> {
  if (depth > MAX_JSON_DEPTH) throw new TypeError('messageToJson: message nests too deeply');
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(message, field.name)) continue;
    const value = message[field.name];
    if (value === null || value === undefined) continue;
    if (!field.repeated && isZeroScalar(field, value)) continue;
    if (field.repeated) {
      const items = value as unknown[];
      if (items.length > 0) out[field.name] = items.map((item) => valueToJson(field, item, depth));
    } else {
      out[field.name] = valueToJson(field, value, depth);
    }
  }
  return out;
}

/**
 * An answer as JSON: encoded response bytes (passed through from a raft-node) are decoded;
 * objects the gateway built are encoded first, so zero values vanish exactly as on the wire.
 */
export function responseToJson(typeName: string, answer: Uint8Array | object): Record<string, unknown> {
  const type = messageType(typeName);
  const bytes = answer instanceof Uint8Array ? answer : type.encode(type.fromObject(answer as Record<string, unknown>)).finish();
  return messageToJson(type, type.decode(bytes) as unknown as Record<string, unknown>);
}
