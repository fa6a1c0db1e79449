import type { Http2SecureServer, Http2Server, IncomingHttpHeaders, ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { Duplex } from 'node:stream';
import {
  Server,
  ServerCredentials,
  status as Status,
  type Metadata,
  type MetadataValue,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ConnectionInjector,
  type ServiceDefinition,
  type UntypedHandleCall,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { unexpectedErrorLog, type Logger, type UnexpectedErrorLog } from '@ward/platform/logging';
import { LATENCY_BUCKETS_SECONDS, type Metrics } from '@ward/platform/metrics';
import type { CallContext, Cancellation, ServiceHandlers } from './handlers';
import { toGrpcStatus, type ErrorMapper } from './status';
import { serveUnaryStream, servableUnary, type UnaryStreamCall, type UnaryStreamLimits, type UnaryStreamMethod } from './unary-streams';

export interface GrpcServerOptions {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** Largest request accepted; larger ones fail with RESOURCE_EXHAUSTED before any handler runs. */
  readonly maxReceiveMessageBytes: number;
  readonly maxSendMessageBytes: number;
  /** Server-initiated keepalive pings, to find dead clients. */
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly maxConcurrentStreams: number;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** App-specific error translation, consulted after errors that carry a status themselves. */
  readonly mapError?: ErrorMapper;
  readonly credentials?: ServerCredentials;
  /**
   * Serve plain unary calls straight off their HTTP/2 streams (unary-streams.ts) instead of
   * through grpc-js's call machinery (default true). Streaming calls, compressed requests and a
   * draining server's calls always go through grpc-js.
   */
  readonly serveUnaryDirectly?: boolean;
}

export interface GrpcServer {
  /** Registers a service; every handler is wrapped by the one error-mapping point. */
  addService(definition: ServiceDefinition, handlers: ServiceHandlers): void;
  /** Binds and starts serving; resolves to the bound port. */
  start(): Promise<number>;
  /**
   * Serves a connection accepted elsewhere (a listener shared with another protocol), without
   * binding a port. TLS, if any, is the caller's: pass the TLSSocket, whose peer certificate calls
   * then see as on a bound TLS port. Stopping the server drains these connections too.
   */
  injectConnection(socket: Duplex): void;
  /** Calls served off their streams directly, and by grpc-js (counted when they start). */
  callCounts(): { readonly direct: number; readonly grpcJs: number };
  /**
   * Stops accepting calls, lets running calls finish for up to `graceTimeMs`, then cancels the rest.
   * Idempotent: later calls return the same promise.
   */
  stop(graceTimeMs: number): Promise<void>;
}

const MAX_MESSAGE_BYTES_LIMIT = 256 * 1024 * 1024;

function checkOptions(options: GrpcServerOptions): void {
  const positive = { maxReceiveMessageBytes: options.maxReceiveMessageBytes, maxSendMessageBytes: options.maxSendMessageBytes, keepaliveTimeMs: options.keepaliveTimeMs, keepaliveTimeoutMs: options.keepaliveTimeoutMs, maxConcurrentStreams: options.maxConcurrentStreams };
  for (const [name, value] of Object.entries(positive)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`createGrpcServer: ${name} must be a positive integer, got ${value}`);
  }
  if (options.maxReceiveMessageBytes > MAX_MESSAGE_BYTES_LIMIT || options.maxSendMessageBytes > MAX_MESSAGE_BYTES_LIMIT) {
    throw new TypeError(`createGrpcServer: message size limits must be at most ${MAX_MESSAGE_BYTES_LIMIT} bytes`);
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new TypeError(`createGrpcServer: port must be in [0, 65535], got ${options.port}`);
  }
}

/** A grpc-js server with explicit limits, keepalive, graceful drain and one error-mapping point. */
export function createGrpcServer(options: GrpcServerOptions): GrpcServer {
  checkOptions(options);
  const server = new Server({
    'grpc.max_receive_message_length': options.maxReceiveMessageBytes,
    'grpc.max_send_message_length': options.maxSendMessageBytes,
    'grpc.keepalive_time_ms': options.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs,
    'grpc.max_concurrent_streams': options.maxConcurrentStreams,
    // No channelz service is served: its per-call trackers (timestamps, counters) are pure cost.
    'grpc.enable_channelz': 0,
  });
  const instrumentation = createInstrumentation(options);
  let stopping: Promise<void> | undefined;
  let injector: ConnectionInjector | undefined;
  const direct = new Map<string, DirectUnary>();
  const counts = { direct: 0, grpcJs: 0 };
  /** Open HTTP/2 sessions, cut when a stop's grace ends. */
  const sessions = new Set<ServerHttp2Session>();
  const limits = { maxReceiveMessageBytes: options.maxReceiveMessageBytes, maxSendMessageBytes: options.maxSendMessageBytes };
  const directly = options.serveUnaryDirectly !== false;
  const routed = routeStreams(server, (stream, headers) => {
    const path = headers[':path'];
    const method = directly && stopping === undefined && typeof path === 'string' ? direct.get(path) : undefined;
    if (method === undefined || !servableUnary(headers)) {
      counts.grpcJs++;
      return false;
    }
    counts.direct++;
    serveDirectly(stream, headers, method, limits, instrumentation);
    return true;
  }, sessions);
  if (directly && !routed) options.logger.warn('grpc-js does not expose its HTTP/2 server creation; every call is served by grpc-js');

  return {
    addService(definition, handlers) {
      const implementation: UntypedServiceImplementation = {};
      for (const [methodName, method] of Object.entries(definition)) {
        const handler = handlers[methodName];
        if (handler === undefined) throw new TypeError(`addService: no handler for ${method.path}`);
        implementation[methodName] = wrapHandler(method.path, method.requestStream, method.responseStream, handler, instrumentation);
        if (!method.requestStream && !method.responseStream) {
          direct.set(method.path, { path: method.path, deserialize: method.requestDeserialize, serialize: method.responseSerialize, handler: handler as DirectUnary['handler'] });
        }
      }
      for (const name of Object.keys(handlers)) {
        if (!(name in definition)) throw new TypeError(`addService: handler ${name} is not a method of the service`);
      }
      server.addService(definition, implementation);
    },
    start() {
      return new Promise((resolve, reject) => {
        server.bindAsync(`${options.host}:${options.port}`, options.credentials ?? ServerCredentials.createInsecure(), (error, port) => {
          if (error) reject(error);
          else resolve(port);
        });
      });
    },
    injectConnection(socket) {
      injector ??= server.createConnectionInjector(ServerCredentials.createInsecure());
      injector.injectConnection(socket);
    },
    callCounts() {
      return { ...counts };
    },
    stop(graceTimeMs) {
      stopping ??= new Promise<void>((resolve) => {
        // After the grace every session is cut. grpc-js's forced shutdown misses the sessions
        // its graceful one already started closing (a stream that never ends, such as a watch,
        // then keeps its session, and tryShutdown's callback waiting, until the client gives up).
        const timer = setTimeout(() => {
          server.forceShutdown();
          for (const session of sessions) session.destroy();
          resolve();
        }, graceTimeMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return stopping;
    },
  };
}

interface DirectUnary {
  readonly path: string;
  readonly deserialize: (bytes: Buffer) => unknown;
  readonly serialize: (value: unknown) => Buffer;
  readonly handler: (request: unknown, context: CallContext) => Promise<unknown>;
}

type StreamRoute = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => boolean;

/**
 * Puts `route` in front of grpc-js on every HTTP/2 server the grpc-js server creates (bound ports
 * and connection injectors alike): a stream it takes is served by it, any other goes to grpc-js's
 * own handler. grpc-js creates its HTTP/2 servers in one method (`createHttp2Server`, which also
 * installs its handlers), so that is where the route goes; false when that method is not there.
 * Every HTTP/2 session opened on them is kept in `sessions` until it closes.
 */
function routeStreams(server: Server, route: StreamRoute, sessions: Set<ServerHttp2Session>): boolean {
  type Http2Any = Http2Server | Http2SecureServer;
  const internals = server as unknown as {
    createHttp2Server?: (this: Server, credentials: ServerCredentials) => Http2Any;
    onStreamOpened?: (this: Server, stream: ServerHttp2Stream) => void;
  };
  const create = internals.createHttp2Server;
  if (typeof create !== 'function') return false;
  internals.createHttp2Server = function (this: Server, credentials: ServerCredentials): Http2Any {
    const http2Server = create.call(this, credentials);
    http2Server.on('session', (session: ServerHttp2Session) => {
      sessions.add(session);
      session.once('close', () => sessions.delete(session));
    });
    const grpcJs = http2Server.listeners('stream') as ((...args: unknown[]) => void)[];
    http2Server.removeAllListeners('stream');
    http2Server.on('stream', function (this: Http2Any, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) {
      if (route(stream, headers)) {
        // grpc-js's idle-connection accounting sees every stream.
        internals.onStreamOpened?.call(server, stream);
        return;
      }
      for (const listener of grpcJs) listener.call(this, stream, headers, ...rest);
    });
    return http2Server;
  };
  return true;
}

/** One unary call on the direct path, with the same context, metrics and error mapping as wrapHandler's. */
function serveDirectly(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, method: DirectUnary, limits: UnaryStreamLimits, instrumentation: Instrumentation): void {
  const startedMs = performance.now();
  let context: ServerCallContext | undefined;
  const unary: UnaryStreamMethod = {
    path: method.path,
    deserialize: method.deserialize,
    serialize: method.serialize,
    run(request, call) {
      context = new ServerCallContext(method.path, call, instrumentation);
      return method.handler(request, context);
    },
  };
  serveUnaryStream(stream, headers, unary, limits, {
    settled(code) {
      context?.finish();
      instrumentation.record(method.path, code, startedMs);
    },
    statusOf: (error) => failure(error, context!, instrumentation),
  });
}

interface Instrumentation {
  readonly options: GrpcServerOptions;
  /** Unmapped errors, logged rate-limited per cause: a flood of one failure cannot flood the log. */
  readonly logUnexpected: UnexpectedErrorLog;
  nextRequestId(): number;
  record(method: string, code: Status, startedMs: number): void;
}

function createInstrumentation(options: GrpcServerOptions): Instrumentation {
  let requestCounter = 0;
  const handled = options.metrics?.counter({ name: 'grpc_server_handled_total', help: 'Completed calls by method and status code.', labelNames: ['method', 'code'] });
  const seconds = options.metrics?.histogram({ name: 'grpc_server_handling_seconds', help: 'Call duration until status.', labelNames: ['method'], buckets: LATENCY_BUCKETS_SECONDS });
  return {
    options,
    logUnexpected: unexpectedErrorLog(options.logger, () => performance.now()),
    nextRequestId: () => ++requestCounter,
    record(method, code, startedMs) {
      handled?.inc({ method, code: Status[code] ?? String(code) });
      seconds?.observe({ method }, (performance.now() - startedMs) / 1000);
    },
  };
}

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerReadableStream<unknown, unknown> | ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>;

/**
 * A grpc-js call seen through the interface both serving paths share. Per-call objects are class
 * instances, never object literals with getters (unary-streams.ts's StreamCall says why).
 */
class GrpcJsCall implements UnaryStreamCall {
  constructor(private readonly call: AnyCall) {}

  get metadata(): Metadata {
    return this.call.metadata as Metadata;
  }

  metadataValue(key: string): MetadataValue | undefined {
    return (this.call.metadata as Metadata).get(key)[0];
  }

  get cancelled(): boolean {
    return this.call.cancelled;
  }

  getPeer(): string {
    return this.call.getPeer();
  }

  getAuthContext(): { sslPeerCertificate?: { subject?: Record<string, unknown> } } {
    return this.call.getAuthContext() ?? {};
  }

  onCancel(listener: () => void): void {
    (this.call as NodeJS.EventEmitter).once('cancelled', listener);
  }

  offCancel(listener: () => void): void {
    (this.call as NodeJS.EventEmitter).removeListener('cancelled', listener);
  }
}

/** A call's context; `finish` once the handler settled. */
class ServerCallContext implements CallContext {
  private readonly requestId: number;
  private childLogger: Logger | undefined;
  readonly cancellation: CallCancellation;

  constructor(
    readonly method: string,
    private readonly call: UnaryStreamCall,
    private readonly instrumentation: Instrumentation,
  ) {
    this.requestId = instrumentation.nextRequestId();
    this.cancellation = new CallCancellation(call);
  }

  get metadata(): Metadata {
    return this.call.metadata;
  }

  metadataValue(key: string): MetadataValue | undefined {
    return this.call.metadataValue(key);
  }

  get peer(): string {
    return this.call.getPeer();
  }

  get peerCommonName(): string | undefined {
    return verifiedCommonName(this.call);
  }

  get logger(): Logger {
    this.childLogger ??= this.instrumentation.options.logger.child({ reqId: this.requestId, method: this.method });
    return this.childLogger;
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  /**
   * The handler is done: a cancellation from now on concerns nobody. grpc-js reports every
   * stream's close as `cancelled`, even after the status was sent; aborting the signal then would
   * cost a DOMException and a round of listeners on every call.
   */
  finish(): void {
    this.cancellation.finish();
  }
}

/**
 * An AbortSignal for `cancellation`, for what needs a real one (a reason, an API that takes a
 * signal): the call's own signal, made now if it was not yet, or a signal that follows it.
 */
export function abortSignalOf(cancellation: Cancellation): AbortSignal;
export function abortSignalOf(cancellation: Cancellation | undefined): AbortSignal | undefined;
export function abortSignalOf(cancellation: Cancellation | undefined): AbortSignal | undefined {
  if (cancellation === undefined || cancellation instanceof AbortSignal) return cancellation;
  if (cancellation instanceof CallCancellation) return cancellation.signal;
  const controller = new AbortController();
  if (cancellation.aborted) controller.abort();
  else cancellation.addEventListener('abort', () => controller.abort(), { once: true });
  return controller.signal;
}

/**
 * A call's cancellation. Listeners are kept here and run when the call is cancelled; an
 * AbortController is made only for `signal` (or `throwIfAborted` once cancelled). Until the
 * handler settled `aborted` is the call's own state; from then on nothing aborts it (grpc-js
 * reports every stream's close as cancelled, even after the status was sent).
 */
class CallCancellation implements Cancellation {
  private controller: AbortController | undefined;
  private listeners: (() => void)[] | undefined;
  private hook: (() => void) | undefined;
  /** Whether it was cancelled when the handler settled; undefined while it runs. */
  private abortedAtFinish: boolean | undefined;

  constructor(private readonly call: UnaryStreamCall) {}

  get aborted(): boolean {
    return this.abortedAtFinish ?? this.call.cancelled;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.aborted) controller.abort();
      else this.addEventListener('abort', () => controller.abort());
    }
    return this.controller.signal;
  }

  /** As on an AbortSignal, a listener added once it was aborted (or after the handler settled) never runs. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.abortedAtFinish !== undefined || this.call.cancelled) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
    if (this.hook === undefined) {
      this.hook = () => {
        const all = this.listeners;
        this.listeners = undefined;
        if (all !== undefined) for (const each of all) each();
      };
      this.call.onCancel(this.hook);
    }
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) this.signal.throwIfAborted();
  }

  /** The handler settled: a cancellation from now on concerns nobody. */
  finish(): void {
    this.abortedAtFinish = this.call.cancelled;
    if (this.hook !== undefined) this.call.offCancel(this.hook);
    this.listeners = undefined;
  }
}

/** The CommonName of the call's verified client certificate (grpc-js reports only authorized peers). */
function verifiedCommonName(call: UnaryStreamCall): string | undefined {
  const certificate = call.getAuthContext().sslPeerCertificate;
  if (certificate === undefined) return undefined;
  const commonName: unknown = certificate.subject?.CN;
  if (Array.isArray(commonName)) return String(commonName.at(-1) ?? '');
  return typeof commonName === 'string' ? commonName : '';
}

function invoke<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    return Promise.reject(error);
  }
}

function failure(error: unknown, context: CallContext, instrumentation: Instrumentation): { code: Status; details: string } {
  const mapped = toGrpcStatus(error, instrumentation.options.mapError);
  if (mapped.unmapped) instrumentation.logUnexpected(error, { method: context.method });
  return { code: mapped.code, details: mapped.details };
}

function wrapHandler(
  method: string,
  requestStream: boolean,
  responseStream: boolean,
  handler: ServiceHandlers[string],
  instrumentation: Instrumentation,
): UntypedHandleCall {
  const call = handler as (...args: unknown[]) => Promise<unknown>;
  if (!responseStream) {
    return ((grpcCall: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const startedMs = performance.now();
      const context = new ServerCallContext(method, new GrpcJsCall(grpcCall), instrumentation);
      const run = requestStream ? () => call(grpcCall, context) : () => call(grpcCall.request, context);
      invoke(run).then(
        (response) => {
          context.finish();
          instrumentation.record(method, Status.OK, startedMs);
          callback(null, response);
        },
        (error: unknown) => {
          context.finish();
          const status = failure(error, context, instrumentation);
          instrumentation.record(method, status.code, startedMs);
          callback(status);
        },
      );
    }) as never;
  }
  return ((grpcCall: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>) => {
    const startedMs = performance.now();
    const context = new ServerCallContext(method, new GrpcJsCall(grpcCall), instrumentation);
    const run = requestStream ? () => call(grpcCall, context) : () => call((grpcCall as ServerWritableStream<unknown, unknown>).request, grpcCall, context);
    invoke(run).then(
      () => {
        context.finish();
        instrumentation.record(method, Status.OK, startedMs);
        if (!grpcCall.writableEnded) grpcCall.end();
      },
      (error: unknown) => {
        context.finish();
        const status = failure(error, context, instrumentation);
        instrumentation.record(method, status.code, startedMs);
        grpcCall.emit('error', status);
      },
    );
  }) as never;
}
