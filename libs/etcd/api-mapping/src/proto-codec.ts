// Single etcd messages to and from bytes, exactly as grpc-js serializes them with the workspace's
// loader options (proto-loader's serializers are `encode(fromObject(x))` and `toObject(decode(b))`).
import { ETCD_PROTO_LOADER_OPTIONS, etcdMessageType } from '@ward/etcd/proto';
import type { IConversionOptions } from 'protobufjs';

const CONVERSION = ETCD_PROTO_LOADER_OPTIONS as IConversionOptions;

/** Encodes an etcd message object (e.g. a RangeResponse as grpc-js decodes it) by its full name. */
export function encodeEtcdMessage(typeName: string, message: object): Uint8Array {
  const type = etcdMessageType(typeName);
  return type.encode(type.fromObject(message as Record<string, unknown>)).finish();
}

/** Decodes bytes into the object grpc-js would hand a handler (snake_case, int64 strings, enum names). */
export function decodeEtcdMessage<T>(typeName: string, bytes: Uint8Array): T {
  const type = etcdMessageType(typeName);
  return type.toObject(type.decode(bytes), CONVERSION) as T;
}
