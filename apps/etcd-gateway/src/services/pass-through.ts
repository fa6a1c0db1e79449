// etcd's service definitions with three changes: a handler may answer with the encoded response
// bytes a raft-node produced, which are sent as they are (no decode and re-encode), any other
// answer being encoded by the definition's own serializer; KV.Txn's request bytes are checked
// against the txn nesting bound before they are decoded (guardTxnNesting), so a txn nested too
// deep is answered with etcd's `too many operations in txn request`, over gRPC and JSON alike; and
// Auth requests are decoded with their string fields as bytes (user names and passwords exactly as
// sent; services/auth-fields.ts reads them).
import type { MethodDefinition, ServiceDefinition } from '@grpc/grpc-js';
import { guardTxnNesting } from '@ward/etcd/api-mapping';
import { etcdServiceDefinitionWithRawAuthStrings, type EtcdServiceName } from '@ward/etcd/proto';

function passThrough(serialize: (value: unknown) => Buffer): (value: unknown) => Buffer {
  return (value) => {
    if (Buffer.isBuffer(value)) return value;
    if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    return serialize(value);
  };
}

/**
 * `etcdServiceDefinitionWithRawAuthStrings(service)` (etcd's definition, Auth request strings as
 * bytes) whose response serializers pass bytes through, and whose KV.Txn is guarded.
 */
export function passThroughDefinition(service: EtcdServiceName): ServiceDefinition {
  const definition = etcdServiceDefinitionWithRawAuthStrings(service);
  const out: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(definition)) {
    const typed = method as MethodDefinition<unknown, unknown>;
    const requestDeserialize = service === 'KV' && name === 'Txn' ? guardTxnNesting(typed.requestDeserialize) : typed.requestDeserialize;
    out[name] = { ...typed, requestDeserialize, responseSerialize: passThrough(typed.responseSerialize) };
  }
  return out as ServiceDefinition;
}

/** The Watch service with requests kept as the bytes the client sent (relayed as they are). */
export function watchRelayDefinition(): ServiceDefinition {
  const definition = passThroughDefinition('Watch');
  const watch = definition['Watch'] as MethodDefinition<unknown, unknown>;
  return { Watch: { ...watch, requestDeserialize: (bytes: Buffer) => bytes } } as ServiceDefinition;
}
