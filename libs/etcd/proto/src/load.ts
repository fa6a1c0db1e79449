// Runtime access to etcd's v3 protos, built from the generated JSON descriptor (no file I/O, so it
// works the same from sources, tests and bundled apps). Nothing is loaded at import time.
import { fromJSON, type Options, type PackageDefinition } from '@grpc/proto-loader';
import { loadPackageDefinition, type ServiceDefinition } from '@grpc/grpc-js';
// protobufjs is CommonJS: under Node's ESM loader only its default export exists.
import protobuf, { type Root, type Type } from 'protobufjs';
import { etcdDescriptor } from './generated/descriptor';
import type { ProtoGrpcType } from './generated/types/rpc';
import type { ProtoGrpcType as WardNodeProtoGrpcType } from './generated/types/node';
import type { ProtoGrpcType as WardTokenProtoGrpcType } from './generated/types/token';

/**
 * How messages map to JavaScript. The generated types (tools/gen-proto.mjs) assume exactly these:
 * snake_case field names as in the .proto, int64 as decimal strings (lease and member ids use all
 * 64 bits), enums as their names, defaults filled in, and a virtual field naming the set oneof.
 */
export const ETCD_PROTO_LOADER_OPTIONS: Options = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});

/**
 * How deep protobufjs lets a message nest (its decoder, encoder and object converters count the
 * outer message as 0 and refuse anything deeper). protobufjs's own default, protoc's 100, is too
 * shallow for etcd: a txn nests 2 messages a level (TxnRequest/RequestOp, TxnResponse/ResponseOp)
 * and a response puts a RangeResponse and its KeyValue below the last level, so a txn of n levels
 * needs 2n + 1. etcd (Go) has no such limit; ward bounds txns at 128 levels (kv-store's
 * MAX_TXN_NESTING_DEPTH, etcd 3.4.23's default maximum), and this leaves room for that bound plus
 * one level, so every request within it is decoded, answered and encoded, and deeper ones are
 * refused by the txn bound before any decoding (the gateway scans the bytes first).
 */
export const PROTO_MAX_MESSAGE_DEPTH = 2 * 128 + 4;

/**
 * The empty Buffer every decoded message shares as an absent bytes field's default. With
 * `defaults: true` protobufjs's object converter gives each bytes field a new empty Buffer
 * (`util.newBuffer([])`) before it looks at the field, and replaces it when the field is set: two
 * Buffers made and dropped for every put of a txn (5% of the gateway's busy time in a soak of txns
 * of 128 puts). A Buffer of no bytes holds nothing to change, and this one is frozen.
 */
export const EMPTY_BYTES_DEFAULT: Buffer = Object.freeze(Buffer.alloc(0)) as Buffer;

let newBufferShared = false;

/**
 * Applies PROTO_MAX_MESSAGE_DEPTH and EMPTY_BYTES_DEFAULT to protobufjs, process-wide (its
 * generated code reads both on every call).
 */
function applyProtobufSettings(): void {
  protobuf.util.recursionLimit = PROTO_MAX_MESSAGE_DEPTH;
  protobuf.Reader.recursionLimit = PROTO_MAX_MESSAGE_DEPTH;
  if (newBufferShared) return;
  newBufferShared = true;
  const newBuffer = protobuf.util.newBuffer.bind(protobuf.util);
  protobuf.util.newBuffer = (sizeOrArray?: number | number[]) => (Array.isArray(sizeOrArray) && sizeOrArray.length === 0 ? EMPTY_BYTES_DEFAULT : newBuffer(sizeOrArray));
}

let packageDefinition: PackageDefinition | undefined;
let rawAuthStringsDefinition: PackageDefinition | undefined;
let grpcObject: ProtoGrpcType | undefined;
let protobufRoot: Root | undefined;

/** The proto-loader package definition of etcd's v3 API (memoized). */
export function etcdPackageDefinition(): PackageDefinition {
  applyProtobufSettings();
  packageDefinition ??= fromJSON(etcdDescriptor as never, ETCD_PROTO_LOADER_OPTIONS);
  return packageDefinition;
}

/** grpc-js client constructors and service definitions, typed by the generated ProtoGrpcType. */
export function etcdGrpc(): ProtoGrpcType {
  grpcObject ??= loadPackageDefinition(etcdPackageDefinition()) as unknown as ProtoGrpcType;
  return grpcObject;
}

export type EtcdServiceName = 'KV' | 'Watch' | 'Lease' | 'Cluster' | 'Maintenance' | 'Auth';

/** The grpc-js service definition for `server.addService`. */
export function etcdServiceDefinition(service: EtcdServiceName): ServiceDefinition {
  const definition = etcdPackageDefinition()[`etcdserverpb.${service}`];
  if (definition === undefined || !('Range' in definition || Object.keys(definition).length > 0)) {
    throw new TypeError(`etcdServiceDefinition: no service etcdserverpb.${service}`);
  }
  return definition as ServiceDefinition;
}

/**
 * The Auth request messages (`AuthenticateRequest`, `AuthUserAddRequest`, …, every
 * `etcdserverpb.Auth*Request`) whose `string` fields are read as `bytes`. etcd does not check that
 * a proto string is UTF-8 (user names and passwords are Go strings: any bytes), while protobufjs
 * decodes a string field to a JavaScript string and replaces every invalid sequence with U+FFFD,
 * so `41 ff` and `41 fe` would both arrive as "A\uFFFD". The wire format is the same (both are
 * length-delimited), so decoding these fields as bytes keeps exactly what the client sent.
 */
export const RAW_STRING_REQUEST_PATTERN = /^Auth[A-Za-z]*Request$/;

function withRawAuthRequestStrings(descriptor: typeof etcdDescriptor): unknown {
  const copy = structuredClone(descriptor) as { nested: Record<string, { nested?: Record<string, { fields?: Record<string, { type: string }> }> }> };
  const messages = copy.nested['etcdserverpb']?.nested ?? {};
  for (const [name, message] of Object.entries(messages)) {
    if (!RAW_STRING_REQUEST_PATTERN.test(name) || message.fields === undefined) continue;
    for (const field of Object.values(message.fields)) if (field.type === 'string') field.type = 'bytes';
  }
  return copy;
}

/**
 * `etcdServiceDefinition(service)` whose Auth request messages keep their string fields as the
 * bytes the client sent (Buffers; see {@link RAW_STRING_REQUEST_PATTERN}). Responses and the other
 * services are unchanged.
 */
export function etcdServiceDefinitionWithRawAuthStrings(service: EtcdServiceName): ServiceDefinition {
  rawAuthStringsDefinition ??= fromJSON(withRawAuthRequestStrings(etcdDescriptor) as never, ETCD_PROTO_LOADER_OPTIONS);
  const definition = rawAuthStringsDefinition[`etcdserverpb.${service}`];
  if (definition === undefined) throw new TypeError(`etcdServiceDefinitionWithRawAuthStrings: no service etcdserverpb.${service}`);
  return definition as ServiceDefinition;
}

/** ward's internal gateway <-> raft-node API (`wardnode.Node`): client constructor and definition. */
export function wardNodeGrpc(): WardNodeProtoGrpcType['wardnode'] {
  return (etcdGrpc() as unknown as WardNodeProtoGrpcType).wardnode;
}

export function wardNodeServiceDefinition(): ServiceDefinition {
  return etcdPackageDefinition()['wardnode.Node'] as ServiceDefinition;
}

/** ward's token-service API (`wardtoken.Token`): client constructor and definition. */
export function wardTokenGrpc(): WardTokenProtoGrpcType['wardtoken'] {
  return (etcdGrpc() as unknown as WardTokenProtoGrpcType).wardtoken;
}

export function wardTokenServiceDefinition(): ServiceDefinition {
  return etcdPackageDefinition()['wardtoken.Token'] as ServiceDefinition;
}

/** The protobufjs reflection root, for encoding single messages (e.g. inside log entries). */
export function etcdProtoRoot(): Root {
  applyProtobufSettings();
  protobufRoot ??= protobuf.Root.fromJSON(etcdDescriptor as never);
  return protobufRoot;
}

/** A message type by its full name, e.g. `etcdserverpb.PutRequest` or `mvccpb.KeyValue`. */
export function etcdMessageType(fullName: string): Type {
  return etcdProtoRoot().lookupType(fullName);
}
