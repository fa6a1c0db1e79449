import type { Duplex } from 'node:stream';
import { HTTP2_PREFACE, createGrpcServer, startSharedListener, type TlsMaterial } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';
import { PEER_FRAMES_ALPN, PEER_FRAMES_PREFACE } from './frame-stream';
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
  /** Connections open at once on the port (gRPC and frame streams). Default 1,024. */
  readonly maxConnectionsCount?: number;
  /** A connection that has not told its protocol (TLS handshake included) within this is closed. Default 10,000 ms. */
  readonly handshakeTimeoutMs?: number;
  /** TLS requiring a client certificate from the cluster's CA; default plaintext. */
  readonly tls?: TlsMaterial;
}

export interface PeerServer {
  /** Stops accepting; gRPC calls get `graceMs` to finish, then every connection is cut. */
  stop(graceMs: number): Promise<void>;
}

/**
 * Serves the peer port: gRPC (the peer service, with frame limits taken from the transport) and
 * the frame stream, told apart by their first bytes, or under TLS by ALPN.
 */
export async function startPeerServer(transport: PeerTransport, options: PeerServerOptions): Promise<{ server: PeerServer; port: number }> {
  const grpc = createGrpcServer({
    host: options.host,
    port: options.port,
    maxReceiveMessageBytes: transport.maxFrameBytes,
    maxSendMessageBytes: 1024,
    keepaliveTimeMs: options.keepaliveTimeMs ?? 10_000,
    keepaliveTimeoutMs: options.keepaliveTimeoutMs ?? 5_000,
    maxConcurrentStreams: options.maxConcurrentStreams ?? 64,
    logger: options.logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  grpc.addService(transport.service.definition, transport.service.handlers);
  const frameStreams = new Set<Duplex>();
  const listener = await startSharedListener({
    host: options.host,
    port: options.port,
    tls: options.tls === undefined ? null : { ...options.tls, requireClientCertificate: true },
    sniffTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
    maxConnectionsCount: options.maxConnectionsCount ?? 1024,
    protocols: [
      { name: 'grpc', preface: HTTP2_PREFACE, alpn: 'h2', take: (socket) => grpc.injectConnection(socket) },
      {
        name: 'frames',
        preface: PEER_FRAMES_PREFACE,
        alpn: PEER_FRAMES_ALPN,
        take: (socket) => {
          frameStreams.add(socket);
          socket.once('close', () => frameStreams.delete(socket));
          transport.service.frameStream(socket);
        },
      },
    ],
  });
  let stopping: Promise<void> | undefined;
  const server: PeerServer = {
    stop(graceMs) {
      stopping ??= (async () => {
        for (const socket of frameStreams) socket.destroy();
        await Promise.all([listener.close(graceMs), grpc.stop(graceMs)]);
      })();
      return stopping;
    },
  };
  return { server, port: listener.port };
}
