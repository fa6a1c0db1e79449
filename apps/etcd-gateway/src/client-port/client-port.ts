// The client port, whole: the shared listener, the gRPC server it hands HTTP/2 connections to,
// and an HTTP/1.1 server of its own (no port of its own) with what etcd serves on its client URL:
// the JSON gateway under /v3 and /v3beta with the streaming routes, /version, /health, /metrics.
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { HTTP2_PREFACE, startSharedListener, type GrpcServer, type SharedListener, type TlsMaterial } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import { CORS_HEADERS, registerClientRoutes } from '../http/client-routes';
import { registerJsonGateway, type JsonGatewayOptions } from '../http/json-gateway';

/** The API prefixes etcd 3.4 serves its JSON gateway under. */
export const CLIENT_API_PREFIXES = ['/v3', '/v3beta'] as const;

/** How often the client port's HTTP connections are checked against the request timeout. */
export const CLIENT_HTTP_TIMEOUT_CHECK_INTERVAL_MS = 1000;

export interface ClientPortOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: TlsMaterial | null;
  readonly requireClientCertificate: boolean;
  readonly sniffTimeoutMs: number;
  readonly maxConnectionsCount: number;
  readonly grpc: GrpcServer;
  /**
   * A fresh HTTP server (createHttpServer, without TLS: the listener terminates it, with
   * timeoutCheckIntervalMs CLIENT_HTTP_TIMEOUT_CHECK_INTERVAL_MS) for this port only.
   */
  readonly http: FastifyInstance;
  /** The JSON gateway's routes and relays, as on the HTTP port. */
  readonly jsonGateway: Omit<JsonGatewayOptions, 'prefixes' | 'streams'> & { readonly streams: NonNullable<JsonGatewayOptions['streams']> };
  readonly serverVersion: () => Promise<string>;
  readonly healthy: () => Promise<boolean>;
  readonly logger: Logger;
}

export interface ClientPort {
  readonly port: number;
  readonly listener: SharedListener;
  /** Stops accepting; HTTP connections get `graceMs` to finish (the gRPC server drains its own). */
  close(graceMs: number): Promise<void>;
}

export async function startClientPort(options: ClientPortOptions): Promise<ClientPort> {
  const { http } = options;
  registerClientRoutes(http, { serverVersion: options.serverVersion, healthy: options.healthy, apiPrefixes: CLIENT_API_PREFIXES, clientCertAuth: options.tls !== null && options.requireClientCertificate });
  await registerJsonGateway(http, {
    ...options.jsonGateway,
    prefixes: CLIENT_API_PREFIXES,
    streams: { ...options.jsonGateway.streams, extraHeaders: { ...options.jsonGateway.streams.extraHeaders, ...CORS_HEADERS } },
  });
  await http.ready();
  // Node's HTTP server starts checking request and header timeouts when it starts listening;
  // this one never listens (the shared listener hands it its connections), so it is told it is,
  // or a client sending its headers a byte at a time would keep its connection for ever.
  http.server.emit('listening');
  const takeHttp = (socket: Duplex): void => {
    http.server.emit('connection', socket);
    // The HTTP server reads in flowing mode; the listener hands sockets over paused.
    socket.resume();
  };
  const listener = await startSharedListener({
    host: options.host,
    port: options.port,
    tls: options.tls === null ? null : { ...options.tls, requireClientCertificate: options.requireClientCertificate },
    sniffTimeoutMs: options.sniffTimeoutMs,
    maxConnectionsCount: options.maxConnectionsCount,
    protocols: [
      { name: 'grpc', preface: HTTP2_PREFACE, alpn: 'h2', take: (socket) => options.grpc.injectConnection(socket) },
      { name: 'http', alpn: 'http/1.1', take: takeHttp },
    ],
    // Anything that is not HTTP/2 is HTTP/1.x's to answer (or refuse), as on etcd's client URL.
    fallback: { name: 'http', take: takeHttp },
  });
  let closing: Promise<void> | undefined;
  return {
    port: listener.port,
    listener,
    close(graceMs) {
      closing ??= (async () => {
        const closed = listener.close(graceMs);
        // Idle keep-alive connections go at once; watch streams, which never finish by
        // themselves, are cut with everything else after the grace.
        http.server.closeIdleConnections();
        await closed;
      })();
      return closing;
    },
  };
}
