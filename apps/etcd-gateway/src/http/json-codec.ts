// etcd's JSON gateway encoding (grpc-gateway's jsonpb with OrigName): field names as in the .proto
// (lowerCamelCase accepted on input too), bytes as base64, 64-bit integers as decimal strings,
// enums by etcd's upper-case names (`EQUAL`, `PUT`, `READWRITE`; numbers accepted on input), zero
// values left out of answers. Walks protobufjs reflection, bounded in depth.
// protobufjs is CommonJS: under Node's ESM loader only its default export exists.
import protobuf, { type Enum as EnumType, type Field, type Type as MessageType } from 'protobufjs';
import { status as Status } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { etcdMessageType, etcdProtoRoot } from '@ward/etcd/proto';

/** Deepest JSON nesting accepted (a txn nests three objects per level). */
const MAX_JSON_DEPTH = 64;

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

function fieldByJsonName(type: Type, name: string): Field | undefined {
  return type.fields[name] ?? type.fieldsArray.find((field) => camelCase(field.name) === name);
}

function enumFromJson(enumType: Enum, value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 0x7fff_ffff) return value;
  if (typeof value === 'string') {
    for (const [name, number] of Object.entries(enumType.values)) {
      if (value === name || value === etcdEnumName(name)) return number;
    }
  }
  throw invalid(`invalid value for enum field ${path}: ${JSON.stringify(value)?.slice(0, 64)}`);
}

function scalarFromJson(field: Field, value: unknown, path: string): unknown {
  switch (field.type) {
    case 'bytes':
      if (typeof value !== 'string' || !BASE64.test(value)) throw invalid(`invalid base64 in field ${path}`);
      return Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    case 'string':
      if (typeof value !== 'string') throw invalid(`field ${path} must be a string`);
      // Go's JSON decoder (etcd's gateway) reads a lone surrogate escape as U+FFFD; protobufjs would
      // write it as a surrogate's 3 bytes in short strings and as U+FFFD in long ones.
      return value.replace(LONE_SURROGATE, '\ufffd');
    case 'bool':
      if (typeof value !== 'boolean') throw invalid(`field ${path} must be a boolean`);
      return value;
    default:
      return integerFromJson(field, value, path);
  }
}

function integerFromJson(field: Field, value: unknown, path: string): unknown {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !DECIMAL.test(text)) throw invalid(`field ${path} must be an integer`);
  const big = BigInt(text);
  const unsigned = field.type.startsWith('uint') || field.type.startsWith('fixed');
  const bits = field.long ? 64n : 32n;
  const min = unsigned ? 0n : -(1n << (bits - 1n));
  const max = unsigned ? (1n << bits) - 1n : (1n << (bits - 1n)) - 1n;
  if (big < min || big > max) throw invalid(`field ${path} is out of range`);
  return field.long ? text : Number(big);
}

function valueFromJson(field: Field, value: unknown, path: string, depth: number): unknown {
  const resolvedType = field.resolvedType;
  if (resolvedType instanceof Type) return objectFromJson(resolvedType, value, path, depth + 1);
  if (resolvedType instanceof Enum) return enumFromJson(resolvedType, value, path);
  return scalarFromJson(field, value, path);
}

/**
 * A JSON value as a plain object protobufjs's `fromObject` takes for `type` (enums as numbers,
 * bytes as Buffers, 64-bit integers as decimal strings). Unknown fields and wrong types are
 * refused with INVALID_ARGUMENT, as etcd's gateway refuses them.
 */
function objectFromJson(type: Type, json: unknown, path = type.name, depth = 0): Record<string, unknown> {
  if (depth > MAX_JSON_DEPTH) throw invalid('request nests too deeply');
  if (json === null || json === undefined) return {};
  if (typeof json !== 'object' || Array.isArray(json)) throw invalid(`${path} must be a JSON object`);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(json as Record<string, unknown>)) {
    const field = fieldByJsonName(type, name);
    if (field === undefined) throw invalid(`unknown field "${name.slice(0, 64)}" in ${type.fullName.replace(/^\./, '')}`);
    if (value === null) continue;
    const fieldPath = `${path}.${field.name}`;
    if (field.repeated) {
      if (!Array.isArray(value)) throw invalid(`field ${fieldPath} must be an array`);
      out[field.name] = value.map((item, index) => valueFromJson(field, item, `${fieldPath}[${index}]`, depth));
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
