// The real grpc-js serializers of etcd's services (proto-loader with the workspace's options):
// what a gateway or a raft-node actually puts on and takes off the wire.
import { etcdServiceDefinition, type EtcdServiceName } from '@ward/etcd/proto';

interface MethodCodec {
  requestSerialize(value: unknown): Buffer;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}

function method(service: EtcdServiceName, name: string): MethodCodec {
  const codec = (etcdServiceDefinition(service) as unknown as Record<string, MethodCodec | undefined>)[name];
  if (codec === undefined) throw new TypeError(`no method ${service}.${name}`);
  return codec;
}

/** A request object through the method's request serializer and back. */
export function requestViaWire<T>(service: EtcdServiceName, name: string, value: unknown): T {
  const codec = method(service, name);
  return codec.requestDeserialize(codec.requestSerialize(value)) as T;
}

/** A response object through the method's response serializer and back. */
export function responseViaWire<T>(service: EtcdServiceName, name: string, value: unknown): T {
  const codec = method(service, name);
  return codec.responseDeserialize(codec.responseSerialize(value)) as T;
}

/** Bytes of a request as grpc-js would send them. */
export function requestBytes(service: EtcdServiceName, name: string, value: unknown): Buffer {
  return method(service, name).requestSerialize(value);
}

/** Decodes response bytes as grpc-js would. */
export function responseFromBytes<T>(service: EtcdServiceName, name: string, bytes: Uint8Array): T {
  return method(service, name).responseDeserialize(Buffer.from(bytes)) as T;
}
