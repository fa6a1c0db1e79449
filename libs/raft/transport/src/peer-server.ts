import type { ServerCredentials } from '@grpc/grpc-js';
import { createGrpcServer, type GrpcServer } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import type { PeerTransport } from './transport';

export interface PeerServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** Server keepalive pings, to find dead peer connections. Default 10,000 / 5,000 ms. */
  readonly keepaliveTimeMs?: number;
  readonly keepaliveTimeoutMs?: number;
  /** Concurrent streams per connection. Default 64. */
  readonly maxConcurrentStreams?: number;
  /** TLS (e.g. requiring a client certificate from the cluster's CA); default plaintext. */
  readonly credentials?: ServerCredentials;
}

/**
 * Starts a gRPC server serving only the peer service, with frame limits taken from the
 * transport. Resolves to the server and the bound port.
 */
export async function startPeerServer(transport: PeerTransport, options: PeerServerOptions): Promise<{ server: GrpcServer; port: number }> {
  const server = createGrpcServer({
    host: options.host,
    port: options.port,
    maxReceiveMessageBytes: transport.maxFrameBytes,
    maxSendMessageBytes: 1024,
    keepaliveTimeMs: options.keepaliveTimeMs ?? 10_000,
    keepaliveTimeoutMs: options.keepaliveTimeoutMs ?? 5_000,
    maxConcurrentStreams: options.maxConcurrentStreams ?? 64,
    logger: options.logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
  server.addService(transport.service.definition, transport.service.handlers);
  const port = await server.start();
  return { server, port };
}
