// What etcd 3.4 serves over HTTP/1.1 on its client URL besides the JSON gateway: `GET /version`,
// `GET /health`, CORS headers on every answer (etcd's default `--cors=*`), `OPTIONS` preflights,
// and plain-text 404s for unknown paths (405 for a gateway route asked with another method) (grpc-gateway's `Not Found` under the API prefixes, Go's
// `404 page not found` elsewhere). `/metrics` comes with the HTTP server itself.
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';

/** The headers etcd 3.4 adds to every client-URL answer with its default CORS setting. */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-headers': 'accept, content-type, authorization',
  'access-control-allow-methods': 'POST, GET, OPTIONS, PUT, DELETE',
  'access-control-allow-origin': '*',
});

export interface ClientRoutesOptions {
  /** The etcd version the cluster reports in Status (`3.5.0`); rejects when no member answers. */
  readonly serverVersion: () => Promise<string>;
  /** Whether the cluster can serve: a leader is known. */
  readonly healthy: () => Promise<boolean>;
  /** Prefixes the JSON gateway is served under, for the 404 text. */
  readonly apiPrefixes: readonly string[];
  /**
   * Client certificates are verified (GATEWAY_CLIENT_CERT_AUTH): a JSON gateway request whose
   * certificate carries a CommonName is refused, as etcd 3.4 refuses it (over the gateway the
   * CommonName would silently not be the user).
   */
  readonly clientCertAuth: boolean;
}

/** etcd 3.4's answer to a gateway request with a client certificate's CommonName. */
export const GATEWAY_COMMON_NAME_REFUSAL = 'CommonName of client sending a request against gateway will be ignored and not used as expected\n';

/** etcd's cluster version: the server version's major.minor with patch 0. */
export function clusterVersionOf(serverVersion: string): string {
  const match = /^(\d+)\.(\d+)/.exec(serverVersion);
  return match === null ? serverVersion : `${match[1]}.${match[2]}.0`;
}

export function registerClientRoutes(app: FastifyInstance, options: ClientRoutesOptions): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(CORS_HEADERS);
    done();
  });
  app.options('*', (_request, reply) => reply.code(200).send());
  if (options.clientCertAuth) {
    app.addHook('onRequest', (request, reply, done) => {
      const path = request.url.split('?')[0] ?? '';
      const socket = request.raw.socket as Partial<TLSSocket>;
      const commonName: unknown = socket.getPeerCertificate?.().subject?.CN;
      if (!options.apiPrefixes.some((prefix) => path.startsWith(`${prefix}/`)) || commonName === undefined || commonName === '') return done();
      void reply.code(400).type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff').send(GATEWAY_COMMON_NAME_REFUSAL);
    });
  }
  let knownVersion: string | undefined;
  app.get('/version', async (_request, reply) => {
    if (knownVersion === undefined) {
      try {
        knownVersion = await options.serverVersion();
      } catch {
        // etcd does not answer at all before its member serves (the connection waits); ward
        // answers at once, and claims no version it has not been told.
        return reply.code(503).header('content-type', 'application/json').send(Buffer.from(JSON.stringify({ etcdserver: 'not_decided', etcdcluster: 'not_decided' })));
      }
    }
    // etcd's exact content type (no charset: fastify adds none to a Buffer).
    return reply.header('content-type', 'application/json').send(Buffer.from(JSON.stringify({ etcdserver: knownVersion, etcdcluster: clusterVersionOf(knownVersion) })));
  });
  app.get('/health', async (_request, reply) => {
    let healthy = false;
    try {
      healthy = await options.healthy();
    } catch {
      healthy = false;
    }
    // etcd 3.4 answers text/plain with a JSON body, 503 when unhealthy; auth on or off alike.
    return reply
      .code(healthy ? 200 : 503)
      .type('text/plain; charset=utf-8')
      .send(JSON.stringify({ health: healthy ? 'true' : 'false' }));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const underApi = options.apiPrefixes.some((prefix) => path.startsWith(`${prefix}/`));
    reply.type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff');
    // A JSON gateway route asked with another method than POST: grpc-gateway's 405.
    if (underApi && request.method !== 'POST' && app.hasRoute({ method: 'POST', url: path })) return reply.code(405).send('Method Not Allowed\n');
    return reply.code(404).send(underApi ? 'Not Found\n' : '404 page not found\n');
  });
}
