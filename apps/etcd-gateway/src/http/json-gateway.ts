// etcd's JSON gateway (`POST /v3/...`) over the same RPC table as the gRPC services: the body is
// JSON whatever its content type (curl -d sends form encoding), an empty body is an empty request,
// the token comes from the Authorization header, and errors have etcd's shape
// `{"error","message","code"}` with grpc-gateway's HTTP status for the code.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { status as Status } from '@grpc/grpc-js';
import type { UnexpectedErrorLog } from '@ward/platform/logging';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { etcdProtoRoot } from '@ward/etcd/proto';
import { httpStatusOf, type GrpcStatusCode } from '@ward/etcd/wire-errors';
import { statusOf } from '../errors/error-mapping';
import { tokenFromHeaders } from '../identity/token-extraction';
import { passThroughDefinition } from '../services/pass-through';
import type { UnaryRpc } from '../services/rpc-table';
import { encodeJsonRequest, responseToJson } from './json-codec';

export interface JsonGatewayOptions {
  readonly table: readonly UnaryRpc[];
  /** The gRPC receive limit: a body encoding to more is refused as gRPC refuses it. */
  readonly maxRequestMessageBytes: number;
  readonly bodyLimitBytes: number;
  /** Where unexpected errors are reported (rate-limited per cause: `unexpectedErrorLog` of @ward/platform/logging). */
  readonly logUnexpected: UnexpectedErrorLog;
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

const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/**
 * The body with every integer literal beyond 2^53 turned into a string, so that JSON.parse keeps
 * its digits: etcd's gateway reads int64 fields given as numbers exactly (`{"ID": 7587…}`, as
 * lease IDs are written by hand), and int64 fields take decimal strings anyway. Literals inside
 * strings are left alone.
 */
function quoteLargeIntegers(text: string): string {
  if (!/[0-9]{16}/.test(text)) return text;
  let out = '';
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote (escapes included).
      i++;
      while (i < text.length && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      JSON_NUMBER.lastIndex = i;
      const token = JSON_NUMBER.exec(text)?.[0];
      if (token === undefined || token.length === 0) {
        i++;
        continue;
      }
      if (/^-?[0-9]+$/.test(token) && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(copied, i)}"${token}"`;
        copied = i + token.length;
      }
      i += token.length;
    } else {
      i++;
    }
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A request body as JSON: empty is the empty request; anything unparsable is INVALID_ARGUMENT. */
export function parseBody(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(quoteLargeIntegers(text)) as unknown;
  } catch {
    throw new GrpcStatusError(Status.INVALID_ARGUMENT, 'invalid JSON in request body');
  }
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
    for (const entry of options.table) {
      if (entry.httpPath === undefined) continue;
      const types = routeTypes(entry);
      scope.post(entry.httpPath, (request, reply) => serve(entry, types, request, reply, options));
    }
  });
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
