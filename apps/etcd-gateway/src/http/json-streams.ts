// grpc-gateway's streaming routes over the same relays as their gRPC twins: `POST /v3/watch` and
// `POST /v3/lease/keepalive` take a sequence of JSON request objects as their body and answer
// each message as one `{"result": ...}` line of a chunked response; the client cancels by
// closing. The HTTP exchange is presented to WatchRelay and KeepAliveRelay as the stream they
// serve for gRPC, so the permission checks, per-caller accounting, global caps, idle closes and
// backpressure are theirs, unchanged. A reader that stops reading is given `stallTimeoutMs` to
// take the pending output; after that its connection is dropped (the relay has stopped reading
// from the member meanwhile, so what waits is at most one message).
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Metadata } from '@grpc/grpc-js';
import { GrpcStatusError, type CallContext } from '@ward/platform/grpc-server';
import type { Logger, UnexpectedErrorLog } from '@ward/platform/logging';
import { statusOf } from '../errors/error-mapping';
import { httpStatusOf, type GrpcStatusCode } from '@ward/etcd/wire-errors';
import { passThroughDefinition } from '../services/pass-through';
import type { KeepAliveRelay } from '../services/lease-keep-alive';
import type { WatchRelay } from '../services/watch-relay';
import { encodeJsonRequest, responseToJson } from './json-codec';
import { JsonObjectSplitter, parseBody } from './json-object-stream';

export interface JsonStreamOptions {
  readonly watch: WatchRelay;
  readonly keepAlive: KeepAliveRelay;
  /** A response the client does not take within this is dropped with its connection. */
  readonly stallTimeoutMs: number;
  /** Largest request object (its JSON text). */
  readonly maxRequestChars: number;
  /** Headers every answer carries (CORS on the client port). */
  readonly extraHeaders: Readonly<Record<string, string>>;
  readonly logUnexpected: UnexpectedErrorLog;
}

/** A request body that is no request: grpc-gateway answers it with code 2 (Unknown), HTTP 500. */
class JsonStreamInputError extends GrpcStatusError {
  constructor(message: string) {
    super(2, message);
  }
}

/** grpc-gateway's HTTP status texts for the stream error object. */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  412: 'Precondition Failed',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

interface StreamKind {
  readonly method: string;
  readonly responseType: string;
  /**
   * Whether the end of the body ends the stream. etcd's Watch ignores a half-close (the watch
   * goes on until the client closes); its LeaseKeepAlive ends the stream once the renewals asked
   * for are answered.
   */
  readonly endsWithBody: boolean;
  /** The message the relay reads, from one request object. */
  decode(json: unknown): unknown;
}

function watchKind(): StreamKind {
  return {
    method: '/etcdserverpb.Watch/Watch',
    responseType: 'etcdserverpb.WatchResponse',
    endsWithBody: false,
    // The relay takes a WatchRequest as the bytes a gRPC client would have sent.
    decode: (json) => Buffer.from(encodeJsonRequest('etcdserverpb.WatchRequest', json)),
  };
}

function keepAliveKind(): StreamKind {
  const deserialize = passThroughDefinition('Lease')['LeaseKeepAlive']!.requestDeserialize as (bytes: Buffer) => unknown;
  return {
    method: '/etcdserverpb.Lease/LeaseKeepAlive',
    responseType: 'etcdserverpb.LeaseKeepAliveResponse',
    endsWithBody: true,
    decode: (json) => deserialize(Buffer.from(encodeJsonRequest('etcdserverpb.LeaseKeepAliveRequest', json))),
  };
}

/**
 * One HTTP exchange as the duplex call a relay serves: request objects come out as 'data', the
 * relay's writes go out as `{"result": ...}` lines; 'cancelled' when the client goes away.
 */
export class HttpStreamCall extends EventEmitter {
  readonly metadata = new Metadata();
  cancelled = false;
  private paused = false;
  private ended = false;
  /** Requests handed to the relay so far. */
  private taken = 0;
  private readonly queue: unknown[] = [];
  private readonly splitter: JsonObjectSplitter;
  private stallTimer: NodeJS.Timeout | undefined;
  private headersSent = false;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly kind: StreamKind,
    private readonly options: JsonStreamOptions,
  ) {
    super();
    this.splitter = new JsonObjectSplitter(options.maxRequestChars);
    // Like a gRPC stream, requests wait until the relay reads them (it first admits the stream).
    this.on('newListener', (event: string) => {
      if (event === 'data') queueMicrotask(() => this.flush());
    });
    const token = request.headers['authorization'];
    if (typeof token === 'string') this.metadata.set('authorization', token);
    request.on('data', (chunk: Buffer) => this.take(chunk));
    request.on('end', () => {
      try {
        this.splitter.end();
      } catch (error) {
        return this.abandon((error as Error).message);
      }
      if (!this.kind.endsWithBody) return;
      this.ended = true;
      this.flush();
    });
    response.on('close', () => {
      clearTimeout(this.stallTimer);
      if (!this.response.writableFinished) this.cancel();
    });
    response.on('drain', () => {
      clearTimeout(this.stallTimer);
      this.stallTimer = undefined;
      this.emit('drain');
    });
  }

  get writableEnded(): boolean {
    return this.response.writableEnded;
  }

  pause(): this {
    this.paused = true;
    this.request.pause();
    return this;
  }

  resume(): this {
    this.paused = false;
    this.flush();
    if (!this.paused) this.request.resume();
    return this;
  }

  /** Writes one answer line; false when the client has not taken the output so far. */
  write(message: unknown): boolean {
    if (this.response.writableEnded || this.response.destroyed) return false;
    this.sendHeaders();
    const line = `${JSON.stringify({ result: responseToJson(this.kind.responseType, message as Uint8Array | object) })}\n`;
    const flushed = this.response.write(line);
    if (!flushed && this.stallTimer === undefined) {
      this.stallTimer = setTimeout(() => this.drop(), this.options.stallTimeoutMs);
      this.stallTimer.unref();
    }
    return flushed;
  }

  /** The relay finished the stream cleanly. */
  end(): void {
    clearTimeout(this.stallTimer);
    if (this.response.writableEnded || this.response.destroyed) return;
    this.sendHeaders();
    this.response.end();
  }

  /** The relay ended the stream with an error: etcd's error body before any answer, grpc-gateway's stream error after. */
  fail(error: unknown): void {
    clearTimeout(this.stallTimer);
    if (this.response.writableEnded || this.response.destroyed) return;
    const status = statusOf(error);
    if (status.unmapped) this.options.logUnexpected(error);
    const httpStatus = httpStatusOf(status.code as GrpcStatusCode);
    if (!this.headersSent) {
      this.headersSent = true;
      this.response.writeHead(httpStatus, { ...this.options.extraHeaders, 'content-type': 'application/json' });
      this.response.end(JSON.stringify({ error: status.details, message: status.details, code: status.code }));
      return;
    }
    const streamError = { grpc_code: status.code, http_code: httpStatus, message: status.details, http_status: STATUS_TEXT[httpStatus] ?? '' };
    this.response.end(`${JSON.stringify({ error: streamError })}\n`);
  }

  private sendHeaders(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    this.response.writeHead(200, { ...this.options.extraHeaders, 'content-type': 'application/json', 'grpc-metadata-content-type': 'application/grpc' });
  }

  private take(chunk: Buffer): void {
    let objects: string[];
    try {
      objects = this.splitter.push(chunk);
    } catch (error) {
      return this.abandon((error as Error).message);
    }
    for (const text of objects) {
      let message: unknown;
      try {
        message = this.kind.decode(parseBody(text));
      } catch (error) {
        return this.abandon(error instanceof GrpcStatusError ? error.message : 'invalid request object');
      }
      this.queue.push(message);
    }
    this.flush();
  }

  private flush(): void {
    if (this.listenerCount('data') === 0) {
      if (this.queue.length > 0) this.request.pause();
      return;
    }
    while (!this.paused && this.queue.length > 0) {
      this.taken += 1;
      this.emit('data', this.queue.shift());
    }
    if (!this.paused && this.ended && this.queue.length === 0 && !this.cancelled) {
      this.ended = false;
      this.emit('end');
    }
    // Objects waiting here are bounded by the relay: it pauses after each one it takes.
    if (this.queue.length > 0) this.request.pause();
  }

  /**
   * Input that is not a sequence of request objects, as etcd's gateway treats it: when the first
   * request is bad, the answer is the error (500, code 2: the decoder's error is no gRPC status);
   * after good ones, the body counts as ended there (requests before it are still answered, a
   * keep-alive stream then ends, a watch goes on). Nothing more of the body is read.
   */
  private abandon(message: string): void {
    this.request.removeAllListeners('data');
    this.request.pause();
    // The rest of the body is never read: the connection cannot carry another request.
    this.response.once('close', () => this.request.socket.destroy());
    if (this.taken === 0 && this.queue.length === 0) {
      this.cancel();
      this.fail(new JsonStreamInputError(message));
      return;
    }
    if (!this.kind.endsWithBody) return;
    this.ended = true;
    this.flush();
  }

  private drop(): void {
    this.response.destroy();
    this.request.socket.destroy();
    this.cancel();
  }

  private cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled');
  }
}

/** The CallContext a relay sees for an HTTP stream. */
function httpContext(request: IncomingMessage, metadata: Metadata, method: string, logger: Logger, call: HttpStreamCall): CallContext {
  const controller = new AbortController();
  if (call.cancelled) controller.abort();
  else call.once('cancelled', () => controller.abort());
  const socket = request.socket;
  return {
    metadata,
    // One peer per TCP connection, as grpc-js reports one per HTTP/2 connection: the
    // per-connection stream bound counts the streams of one HTTP connection.
    peer: `${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`,
    // etcd's gateway never takes a client certificate for a user: the token decides.
    peerCommonName: undefined,
    method,
    logger,
    signal: controller.signal,
  };
}

export type JsonStreamRoute = 'watch' | 'keepalive';

/** Serves one streaming request on the raw Node request and response (fastify has let go of them). */
export function serveJsonStream(route: JsonStreamRoute, request: IncomingMessage, response: ServerResponse, logger: Logger, options: JsonStreamOptions): void {
  const kind = route === 'watch' ? watchKind() : keepAliveKind();
  const call = new HttpStreamCall(request, response, kind, options);
  const context = httpContext(request, call.metadata, kind.method, logger, call);
  const run = route === 'watch' ? options.watch.handle(call as never, context) : options.keepAlive.handle(call as never, context);
  run.then(
    () => call.end(),
    (error: unknown) => call.fail(error),
  );
}
