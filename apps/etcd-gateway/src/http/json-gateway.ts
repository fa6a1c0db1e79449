// etcd's JSON gateway (`POST /v3/...`) over the same RPC table as the gRPC services: the body is
// JSON whatever its content type (curl -d sends form encoding), an empty body is an empty request,
// the token comes from the Authorization header, and errors have etcd's shape
// `{"error","message","code"}` with grpc-gateway's HTTP status for the code.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { status as Status } from '@grpc/grpc-js';
import type { Logger, UnexpectedErrorLog } from '@ward/platform/logging';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { STREAMING_BODY } from '@ward/platform/http-server';
import { etcdProtoRoot } from '@ward/etcd/proto';
import { httpStatusOf, type GrpcStatusCode } from '@ward/etcd/wire-errors';
import { statusOf } from '../errors/error-mapping';
import { tokenFromHeaders } from '../identity/token-extraction';
import { passThroughDefinition } from '../services/pass-through';
import type { UnaryRpc } from '../services/rpc-table';
import { encodeJsonRequest, responseToJson } from './json-codec';
import { parseBody } from './json-object-stream';
import { serveJsonSnapshot, serveJsonStream, type JsonStreamOptions } from './json-streams';

export { parseBody } from './json-object-stream';

export interface JsonGatewayOptions {
  readonly table: readonly UnaryRpc[];
  /** The gRPC receive limit: a body encoding to more is refused as gRPC refuses it. */
  readonly maxRequestMessageBytes: number;
  readonly bodyLimitBytes: number;
  /** Where unexpected errors are reported (rate-limited per cause: `unexpectedErrorLog` of @ward/platform/logging). */
  readonly logUnexpected: UnexpectedErrorLog;
  /** Path prefixes the routes are served under (etcd 3.4: `/v3` and `/v3beta`); default `/v3`. */
  readonly prefixes?: readonly string[];
  /**
   * The streaming routes (`/watch`, and `/lease/keepalive` as a stream) over the relays; without
   * them `/lease/keepalive` answers one request per body and there is no `/watch`. With
   * `maintenance`, `/maintenance/snapshot` is served too.
   */
  readonly streams?: Omit<JsonStreamOptions, 'logUnexpected' | 'maxRequestChars'>;
}

/** etcd's error body for a status. */
export function errorBody(code: number, message: string): { error: string; message: string; code: number } {
  return { error: message, message, code };
}

/** The HTTP answer for any error: etcd's body with grpc-gateway's status code. */
export function httpError(error: unknown, logUnexpected: UnexpectedErrorLog): { statusCode: number; body: ReturnType<typeof errorBody> } {
  const status = statusOf(error);
  if (status.unmapped) logUnexpected(error);
  return { statusCode: httpStatusOf(status.code as GrpcStatusCode), body: errorBody(status.code, status.details) };
}

interface RouteTypes {
  readonly requestType: string;
  readonly responseType: string;
  readonly deserialize: (bytes: Buffer) => unknown;
}

function routeTypes(entry: UnaryRpc): RouteTypes {
  const method = etcdProtoRoot().lookupService(`etcdserverpb.${entry.service}`).methods[entry.method]!;
  method.resolve();
  const definition = passThroughDefinition(entry.service)[entry.method]!;
  return {
    requestType: method.resolvedRequestType!.fullName.replace(/^\./, ''),
    responseType: method.resolvedResponseType!.fullName.replace(/^\./, ''),
    deserialize: definition.requestDeserialize as (bytes: Buffer) => unknown,
  };
}

/** An AbortSignal that fires when the HTTP client goes away before the answer. */
function requestSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Registers the `/v3/...` routes in their own fastify scope (their own body parser). */
export async function registerJsonGateway(app: FastifyInstance, options: JsonGatewayOptions): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: options.bodyLimitBytes }, (_request, body, done) => {
      try {
        done(null, parseBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    const prefixes = options.prefixes ?? ['/v3'];
    const streams = options.streams;
    const maintenance = streams?.maintenance;
    if (streams !== undefined && maintenance !== undefined) {
      // One request in (read whole, as a unary body), the snapshot streamed out.
      const streamOptions: JsonStreamOptions = { ...streams, logUnexpected: options.logUnexpected, maxRequestChars: options.bodyLimitBytes };
      for (const prefix of prefixes) {
        scope.post(withPrefix(prefix, '/v3/maintenance/snapshot'), (request, reply) => {
          try {
            encodeJsonRequest('etcdserverpb.SnapshotRequest', request.body ?? {});
          } catch (error) {
            const { statusCode, body } = httpError(error, options.logUnexpected);
            return reply.code(statusCode).type('application/json').send(body);
          }
          reply.hijack();
          serveJsonSnapshot(maintenance, { token: tokenFromHeaders(request.headers), address: request.ip }, request.raw, reply.raw, streamOptions);
          return reply;
        });
      }
    }
    for (const entry of options.table) {
      if (entry.httpPath === undefined) continue;
      if (entry.httpStream && options.streams !== undefined) continue;
      const types = routeTypes(entry);
      const paths = [entry.httpPath, ...(ADDITIONAL_BINDINGS[entry.httpPath] ?? [])];
      for (const prefix of prefixes) {
        for (const path of paths) scope.post(withPrefix(prefix, path), (request, reply) => serve(entry, types, request, reply, options));
      }
    }
  });
  const streams = options.streams;
  if (streams === undefined) return;
  await app.register(async (scope) => {
    // The body is read as it arrives, object by object (json-object-stream.ts), never whole.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const streamOptions: JsonStreamOptions = { ...streams, logUnexpected: options.logUnexpected, maxRequestChars: options.bodyLimitBytes };
    for (const prefix of options.prefixes ?? ['/v3']) {
      for (const [path, route] of [['/v3/watch', 'watch'], ['/v3/lease/keepalive', 'keepalive']] as const) {
        // The body is a stream of requests: no deadline for it as a whole (json-streams.ts keeps one per request object).
        scope.post(withPrefix(prefix, path), { config: STREAMING_BODY }, (request, reply) => {
          reply.hijack();
          serveJsonStream(route, request.raw, reply.raw, request.log as unknown as Logger, streamOptions);
        });
      }
    }
  });
}

/** The further paths etcd 3.4's gateway serves a route under (its proto's additional_bindings). */
const ADDITIONAL_BINDINGS: Readonly<Record<string, readonly string[]>> = {
  '/v3/lease/revoke': ['/v3/kv/lease/revoke'],
  '/v3/lease/timetolive': ['/v3/kv/lease/timetolive'],
  '/v3/lease/leases': ['/v3/kv/lease/leases'],
};

/** etcd's `/v3/...` path under another API prefix (`/v3beta/...`). */
function withPrefix(prefix: string, path: string): string {
  return prefix + path.replace(/^\/v3/, '');
}

async function serve(entry: UnaryRpc, types: RouteTypes, request: FastifyRequest, reply: FastifyReply, options: JsonGatewayOptions): Promise<FastifyReply> {
  try {
    const bytes = encodeJsonRequest(types.requestType, request.body ?? {});
    if (bytes.length > options.maxRequestMessageBytes) {
      throw new GrpcStatusError(Status.RESOURCE_EXHAUSTED, `grpc: received message larger than max (${bytes.length} vs. ${options.maxRequestMessageBytes})`);
    }
    const message = types.deserialize(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    const answer = await entry.call(message, { token: tokenFromHeaders(request.headers), address: request.ip }, requestSignal(reply));
    const json = responseToJson(types.responseType, answer);
    // A streaming RPC (LeaseKeepAlive): one request, one `{"result": ...}` line, as grpc-gateway streams.
    if (entry.httpStream) return reply.code(200).type('application/json').send(`${JSON.stringify({ result: json })}\n`);
    return reply.code(200).type('application/json').send(json);
  } catch (error) {
    const { statusCode, body } = httpError(error, options.logUnexpected);
    return reply.code(statusCode).type('application/json').send(body);
  }
}
