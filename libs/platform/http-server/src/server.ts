import type { IncomingMessage, ServerResponse } from 'node:http';
import { LogController, fastify, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from '@ward/platform/logging';
import type { Metrics } from '@ward/platform/metrics';

export interface HttpServerOptions {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Largest request body accepted; larger ones get 413. */
  readonly bodyLimitBytes: number;
  /**
   * Request deadline: the headers must arrive within this, and the body within this of the
   * headers. A route with `config: { streamingBody: true }` has no body deadline here: its body
   * is a stream of requests that may stay open while used, and the route keeps its own deadlines
   * (see STREAMING_BODY).
   */
  readonly requestTimeoutMs: number;
  /** Idle keep-alive connections are closed after this. */
  readonly keepAliveTimeoutMs: number;
  /**
   * How often connections are checked against the request timeout (Node's default is 30 s, so a
   * request may outlive its timeout by that much).
   */
  readonly timeoutCheckIntervalMs?: number;
  /**
   * `/readyz` answers 200 only while this resolves true (e.g. "a raft leader is known"), or
   * `{ ready: true }`; the reasons of a `{ ready: false, reasons }` are in the 503's body.
   */
  readonly readiness: () => Readiness | Promise<Readiness>;
  /** Maps an app error to an HTTP answer; unmapped errors become a generic 500. */
  readonly mapError?: (error: unknown) => { statusCode: number; body: unknown } | undefined;
  /**
   * HTTPS with this certificate chain and key; with `requireClientCertificate`, a connection
   * without a client certificate the CA bundle verifies is refused in the handshake.
   */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly ca: Buffer | null; readonly requireClientCertificate: boolean };
}

/** A readiness answer: a boolean, or whether ready with the reasons it is not. */
export type Readiness = boolean | { readonly ready: boolean; readonly reasons: readonly string[] };

/**
 * The route config flag of a route whose request body is a long-lived stream: the server's body
 * deadline does not apply to it (headers still have theirs).
 */
export const STREAMING_BODY = { streamingBody: true } as const;

/** What a client whose request ran out of time is sent before its connection is closed (fastify's own 408). */
export const REQUEST_TIMEOUT_ANSWER = (() => {
  const body = '{"error":"Request Timeout","message":"Client Timeout","statusCode":408}';
  return `HTTP/1.1 408 Request Timeout\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\n\r\n${body}`;
})();

/**
 * Ends a request that ran out of time: the 408 when nothing of the answer has been written yet,
 * then the connection is closed (its unread body can never be skipped).
 */
export function cutTimedOutRequest(request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket as IncomingMessage['socket'] | undefined;
  // Injected requests (fastify's inject) have a stand-in socket with nothing to close.
  if (socket === undefined || typeof socket.destroy !== 'function' || socket.destroyed) return;
  if (!response.headersSent && socket.writable) socket.write(REQUEST_TIMEOUT_ANSWER);
  socket.destroy();
}

/**
 * A fastify instance with `/healthz` (process is up), `/readyz` (ready to serve), `/metrics`
 * (Prometheus text), explicit limits, and one error handler: client errors keep fastify's
 * message, everything else is a generic 500 whose details go only to the log.
 */
export function createHttpServer(options: HttpServerOptions): FastifyInstance {
  for (const name of ['bodyLimitBytes', 'requestTimeoutMs', 'keepAliveTimeoutMs'] as const) {
    if (!Number.isSafeInteger(options[name]) || options[name] <= 0) {
      throw new TypeError(`createHttpServer: ${name} must be a positive integer, got ${options[name]}`);
    }
  }
  const tls = options.tls;
  if (tls?.requireClientCertificate && tls.ca === null) throw new TypeError('createHttpServer: a client certificate can only be required with a CA bundle');
  const https =
    tls === undefined
      ? {}
      : { https: { cert: tls.cert, key: tls.key, ...(tls.ca === null ? {} : { ca: tls.ca }), requestCert: tls.requireClientCertificate, rejectUnauthorized: tls.requireClientCertificate } };
  // An HTTPS instance has the same API; only the type of its Node server differs.
  const app = fastify({
    ...https,
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimitBytes,
    // Node's own request timeout covers headers and body together, streaming bodies included;
    // it is replaced by the headers timeout below and a body deadline per route.
    requestTimeout: 0,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    ...(options.timeoutCheckIntervalMs === undefined || tls !== undefined ? {} : { http: { connectionsCheckingInterval: options.timeoutCheckIntervalMs } }),
    // Per-request lines are noise at gateway rates; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
  }) as unknown as FastifyInstance;

  app.server.headersTimeout = options.requestTimeoutMs;
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (raw.complete || typeof (raw.socket as Partial<IncomingMessage['socket']> | undefined)?.destroy !== 'function') return done();
    if ((request.routeOptions.config as { streamingBody?: boolean } | undefined)?.streamingBody === true) return done();
    const timer = setTimeout(() => {
      if (!raw.complete) cutTimedOutRequest(raw, reply.raw);
    }, options.requestTimeoutMs);
    timer.unref();
    const clear = (): void => clearTimeout(timer);
    raw.once('end', clear);
    raw.once('close', clear);
    done();
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    let ready = false;
    let reasons: readonly string[] = [];
    try {
      const answer = await options.readiness();
      ready = typeof answer === 'boolean' ? answer : answer.ready;
      if (typeof answer !== 'boolean' && !answer.ready) reasons = answer.reasons;
    } catch (error) {
      app.log.warn({ err: error }, 'readiness check failed');
    }
    if (ready) return reply.code(200).send({ status: 'ready' });
    return reply.code(503).send(reasons.length === 0 ? { status: 'not ready' } : { status: 'not ready', reasons });
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.render();
    return reply.type(options.metrics.contentType).send(text);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const mapped = options.mapError?.(error);
    if (mapped) return reply.code(mapped.statusCode).send(mapped.body);
    const statusCode = error.statusCode ?? 500;
    if (statusCode >= 400 && statusCode < 500) {
      return reply.code(statusCode).send({ error: error.code ?? 'BAD_REQUEST', message: error.message });
    }
    request.log.error({ err: error }, 'unmapped error answered as internal');
    return reply.code(500).send({ error: 'INTERNAL', message: 'internal error' });
  });
  return app;
}
