// grpc-gateway's streaming routes over the same relays as their gRPC twins: `POST /v3/watch` and
// `POST /v3/lease/keepalive` take a sequence of JSON request objects as their body and answer
// each message as one `{"result": ...}` line of a chunked response; the client cancels by
// closing. `POST /v3/maintenance/snapshot` takes one request and streams its answers the same
// way. The HTTP exchange is presented to WatchRelay, KeepAliveRelay and the snapshot relay as the
// stream they serve for gRPC, so the permission checks, per-caller accounting, global caps, idle
// closes and backpressure are theirs, unchanged. A reader that stops reading is given
// `stallTimeoutMs` to take the pending output; after that its connection is dropped (the relay has
// stopped reading from the member meanwhile, so what waits is at most one message).
//
// Deadlines: the body of a stream has no deadline as a whole (a watch or keep-alive stream in use
// stays open, as on etcd); each request object in it must arrive whole within `objectTimeoutMs` of
// its first byte, or the connection is cut (a 408 when nothing was answered yet). A stream that
// never sends a request is closed by its relay's idle bound, as over gRPC.
//
// Errors are written as grpc-gateway writes them: a first request that cannot be decoded gets the
// unary error body (`{"error","message","code"}`); an error from the stream itself gets the stream
// error object `{"error":{"grpc_code","http_code","message","http_status"}}`, with no line break
// after it, and the response ends there; its HTTP status is the code's when nothing was answered
// before it (etcd 3.4.23 writes the same, checked by the client-url tests).
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Metadata } from '@grpc/grpc-js';
import { GrpcStatusError, type CallContext } from '@ward/platform/grpc-server';
import { cutTimedOutRequest } from '@ward/platform/http-server';
import type { Logger, UnexpectedErrorLog } from '@ward/platform/logging';
import { httpStatusOf, type GrpcStatusCode } from '@ward/etcd/wire-errors';
import { statusOf } from '../errors/error-mapping';
import type { Credentials } from '../identity/identity';
import { passThroughDefinition } from '../services/pass-through';
import type { KeepAliveRelay } from '../services/lease-keep-alive';
import type { MaintenanceApi } from '../services/maintenance-api';
import type { WatchRelay } from '../services/watch-relay';
import { encodeJsonRequest, responseToJson } from './json-codec';
import { JsonObjectSplitter, parseBody } from './json-object-stream';

export interface JsonStreamOptions {
  readonly watch: WatchRelay;
  readonly keepAlive: KeepAliveRelay;
  /** Serves `/v3/maintenance/snapshot` (absent: the route is not served). */
  readonly maintenance?: MaintenanceApi;
  /** A response the client does not take within this is dropped with its connection. */
  readonly stallTimeoutMs: number;
  /** A request object of a stream must arrive whole within this of its first byte. */
  readonly objectTimeoutMs: number;
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

/** Go's http.StatusText for the statuses grpc-gateway maps gRPC codes to. */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
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

/**
 * grpc-gateway's stream error object for a status: what etcd 3.4.23 writes when a stream fails
 * (`{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}`).
 */
export function streamErrorObject(code: number, message: string): { error: { grpc_code: number; http_code: number; message: string; http_status: string } } {
  const httpCode = httpStatusOf(code as GrpcStatusCode);
  return { error: { grpc_code: code, http_code: httpCode, message, http_status: STATUS_TEXT[httpCode] ?? '' } };
}

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
 * The response side of a streaming route, as the writable stream a relay writes to: each message
 * goes out as one `{"result": ...}` line; 'drain' when the client took the output; 'cancelled'
 * when the client went away before the end.
 */
export class HttpResponseStream extends EventEmitter {
  cancelled = false;
  private stallTimer: NodeJS.Timeout | undefined;
  private headersSent = false;

  constructor(
    protected readonly request: IncomingMessage,
    protected readonly response: ServerResponse,
    private readonly responseType: string,
    protected readonly options: Pick<JsonStreamOptions, 'stallTimeoutMs' | 'extraHeaders' | 'logUnexpected'>,
  ) {
    super();
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

  /** Whether anything of the answer has been written. */
  get answered(): boolean {
    return this.headersSent;
  }

  /** Writes one answer line; false when the client has not taken the output so far. */
  write(message: unknown): boolean {
    if (this.response.writableEnded || this.response.destroyed) return false;
    this.sendHeaders();
    const line = `${JSON.stringify({ result: responseToJson(this.responseType, message as Uint8Array | object) })}\n`;
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

  /**
   * The relay ended the stream with an error: grpc-gateway's stream error object, with the code's
   * HTTP status when nothing was answered before it; a request that could not be decoded
   * (JsonStreamInputError) before any answer gets the unary error body instead.
   */
  fail(error: unknown): void {
    clearTimeout(this.stallTimer);
    if (this.response.writableEnded || this.response.destroyed) return;
    const status = statusOf(error);
    if (status.unmapped) this.options.logUnexpected(error);
    if (!this.headersSent) {
      this.headersSent = true;
      this.response.writeHead(httpStatusOf(status.code as GrpcStatusCode), { ...this.options.extraHeaders, 'content-type': 'application/json', ...this.closeHeader() });
      if (error instanceof JsonStreamInputError) {
        this.response.end(JSON.stringify({ error: status.details, message: status.details, code: status.code }));
        return;
      }
    }
    this.response.end(JSON.stringify(streamErrorObject(status.code, status.details)));
  }

  private sendHeaders(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    this.response.writeHead(200, { ...this.options.extraHeaders, 'content-type': 'application/json', 'grpc-metadata-content-type': 'application/grpc', ...this.closeHeader() });
  }

  /**
   * `Connection: close` while the request body is still open, as etcd's Go server answers then:
   * the connection cannot carry another request, and closing it after the answer means a body
   * left dripping cannot hold it once the stream is over.
   */
  private closeHeader(): Record<string, string> {
    return this.request.complete ? {} : { connection: 'close' };
  }

  protected drop(): void {
    this.response.destroy();
    this.request.socket.destroy();
    this.cancel();
  }

  protected cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled');
  }
}

/**
 * One HTTP exchange as the duplex call a relay serves: request objects come out as 'data', the
 * relay's writes go out as `{"result": ...}` lines; 'cancelled' when the client goes away.
 */
export class HttpStreamCall extends HttpResponseStream {
  readonly metadata = new Metadata();
  private paused = false;
  private ended = false;
  /** Requests handed to the relay so far. */
  private taken = 0;
  private readonly queue: unknown[] = [];
  private readonly splitter: JsonObjectSplitter;
  /** Runs while a request object has begun and not ended. */
  private objectTimer: NodeJS.Timeout | undefined;

  constructor(
    request: IncomingMessage,
    response: ServerResponse,
    private readonly kind: StreamKind,
    options: JsonStreamOptions,
  ) {
    super(request, response, kind.responseType, options);
    this.splitter = new JsonObjectSplitter(options.maxRequestChars);
    // Like a gRPC stream, requests wait until the relay reads them (it first admits the stream).
    this.on('newListener', (event: string) => {
      if (event === 'data') queueMicrotask(() => this.flush());
    });
    const token = request.headers['authorization'];
    if (typeof token === 'string') this.metadata.set('authorization', token);
    request.on('data', (chunk: Buffer) => this.take(chunk, options.objectTimeoutMs));
    request.on('end', () => {
      this.stopObjectTimer();
      try {
        this.splitter.end();
      } catch (error) {
        return this.abandon((error as Error).message);
      }
      if (!this.kind.endsWithBody) return;
      this.ended = true;
      this.flush();
    });
    response.on('close', () => this.stopObjectTimer());
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

  private take(chunk: Buffer, objectTimeoutMs: number): void {
    let objects: string[];
    try {
      objects = this.splitter.push(chunk);
    } catch (error) {
      return this.abandon((error as Error).message);
    }
    // A request object begun and not finished has `objectTimeoutMs` from its first byte.
    if (!this.splitter.inObject) this.stopObjectTimer();
    else if (objects.length > 0 || this.objectTimer === undefined) {
      this.stopObjectTimer();
      this.objectTimer = setTimeout(() => this.objectTimedOut(), objectTimeoutMs);
      this.objectTimer.unref();
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

  private stopObjectTimer(): void {
    clearTimeout(this.objectTimer);
    this.objectTimer = undefined;
  }

  /** A request object that has not arrived whole in time: the connection is cut, as a slow unary body is. */
  private objectTimedOut(): void {
    this.objectTimer = undefined;
    this.request.removeAllListeners('data');
    this.cancel();
    cutTimedOutRequest(this.request, this.response);
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
    this.stopObjectTimer();
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
}

/** The CallContext a relay sees for an HTTP stream. */
function httpContext(request: IncomingMessage, metadata: Metadata, method: string, logger: Logger, call: HttpResponseStream): CallContext {
  const controller = new AbortController();
  if (call.cancelled) controller.abort();
  else call.once('cancelled', () => controller.abort());
  const socket = request.socket;
  return {
    metadata,
    metadataValue: (key) => metadata.get(key)[0],
    // One peer per TCP connection, as grpc-js reports one per HTTP/2 connection: the
    // per-connection stream bound counts the streams of one HTTP connection.
    peer: `${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`,
    // etcd's gateway never takes a client certificate for a user: the token decides.
    peerCommonName: undefined,
    method,
    logger,
    signal: controller.signal,
    cancellation: controller.signal,
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

/**
 * Serves `/v3/maintenance/snapshot` once its (one, already read) request is decoded: the
 * snapshot relay's chunks go out as `{"result":{"remaining_bytes","blob"}}` lines, read from
 * the member only while the client takes them. The same call as over gRPC, so the same admin
 * check (the leader decides).
 */
export function serveJsonSnapshot(maintenance: MaintenanceApi, credentials: Credentials, request: IncomingMessage, response: ServerResponse, options: JsonStreamOptions): void {
  const call = new HttpResponseStream(request, response, 'etcdserverpb.SnapshotResponse', options);
  const controller = new AbortController();
  call.once('cancelled', () => controller.abort());
  maintenance.snapshot(call as never, credentials, controller.signal).then(
    () => call.end(),
    (error: unknown) => call.fail(error),
  );
}
