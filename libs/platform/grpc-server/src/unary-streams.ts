// Unary calls served straight off node:http2 streams. grpc-js spends tens of µs of CPU per call on
// machinery a unary call does not need (an intercepting call object, a metadata copy with header
// removals, a message-decoder state machine, a promise per message, a writable call wrapper);
// for a server answering small requests that is most of its cost per call. This path does what
// the gRPC protocol asks of a unary call and no more: read one length-prefixed message until the
// client half-closes, run the handler, answer with headers, one message and trailers (or a
// trailers-only status). Its answers are grpc-js's, byte for byte where the protocol lets a client
// tell: the same response headers, status texts, limits and errors.
//
// Only plain calls take this path: an unregistered method, a content type that is not gRPC, a
// compressed request (`grpc-encoding` other than identity) and every call of a draining server go
// to grpc-js's own handler, which answers them as it always did.
import { constants as http2, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { TLSSocket } from 'node:tls';
import { Metadata, status as Status, type MetadataValue } from '@grpc/grpc-js';

/** One registered unary method. */
export interface UnaryStreamMethod {
  readonly path: string;
  readonly deserialize: (bytes: Buffer) => unknown;
  readonly serialize: (value: unknown) => Buffer;
  /** Runs the call; `call` is what the handler may ask about the call itself. */
  readonly run: (request: unknown, call: UnaryStreamCall) => Promise<unknown>;
}

/** What a handler can learn about a call served on this path (grpc-js's ServerUnaryCall subset). */
export interface UnaryStreamCall {
  readonly metadata: Metadata;
  /** `metadata.get(key)[0]`, read from the request headers when that gives the same. */
  metadataValue(key: string): MetadataValue | undefined;
  /** Set once the client cancelled, the stream closed or the deadline passed. */
  readonly cancelled: boolean;
  getPeer(): string;
  /** As grpc-js's getAuthContext: the verified client certificate of a TLS connection. */
  getAuthContext(): { sslPeerCertificate?: { subject?: Record<string, unknown> } };
  /** Runs `listener` once when the call is cancelled (never after it was answered). */
  onCancel(listener: () => void): void;
  offCancel(listener: () => void): void;
}

export interface UnaryStreamLimits {
  readonly maxReceiveMessageBytes: number;
  readonly maxSendMessageBytes: number;
}

// What grpc-js sends (server-interceptors.ts: defaultResponseHeaders + defaultCompressionHeaders).
const CONTENT_TYPE = 'application/grpc+proto';
const RESPONSE_HEADERS = {
  [http2.HTTP2_HEADER_STATUS]: http2.HTTP_STATUS_OK,
  [http2.HTTP2_HEADER_CONTENT_TYPE]: CONTENT_TYPE,
  'grpc-accept-encoding': 'identity,deflate,gzip',
  'grpc-encoding': 'identity',
};
const OK_TRAILERS = { 'grpc-status': '0', 'grpc-message': 'OK' };
const RESPOND_WITH_TRAILERS = { waitForTrailers: true };
const RESPOND_AND_END = { endStream: true };
const FRAME_HEADER_BYTES = 5;
/** grpc-js's deadline syntax and unit table (the gRPC spec's TimeoutValue and TimeoutUnit). */
const TIMEOUT_PATTERN = /(\d{1,8})\s*([HMSmun])/;
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

function noop(): void {}

/**
 * Whether this path may serve the call: a gRPC content type and an uncompressed request. Anything
 * else is grpc-js's to answer (a 415, a decompression), exactly as before.
 */
export function servableUnary(headers: IncomingHttpHeaders): boolean {
  const contentType = headers[http2.HTTP2_HEADER_CONTENT_TYPE];
  if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) return false;
  const encoding = headers['grpc-encoding'];
  return encoding === undefined || encoding === 'identity';
}

/** The details percent-encoded as grpc-js encodes them (encodeURI); a lone surrogate reads as U+FFFD. */
function encodeDetails(details: string): string {
  try {
    return encodeURI(details);
  } catch {
    return encodeURI(details.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
  }
}

/** A status as grpc-js writes it in a trailers-only answer. */
function statusTrailers(code: Status, details: string): Record<string, string | number> {
  return { 'grpc-status': String(code), 'grpc-message': encodeDetails(details), [http2.HTTP2_HEADER_STATUS]: http2.HTTP_STATUS_OK, [http2.HTTP2_HEADER_CONTENT_TYPE]: CONTENT_TYPE };
}

/** Headers that are transport, not metadata: a grpc-js handler never sees them. */
const TRANSPORT_HEADERS: ReadonlySet<string> = new Set(['grpc-timeout', 'grpc-encoding', 'grpc-accept-encoding', 'accept-encoding', 'te', 'content-type']);

/** The request metadata a grpc-js handler sees: the headers minus pseudo and transport ones. */
function requestMetadata(headers: IncomingHttpHeaders): Metadata {
  const metadata = Metadata.fromHttp2Headers(headers);
  for (const name of TRANSPORT_HEADERS) metadata.remove(name);
  return metadata;
}

/** grpc-js's rules for a metadata key and for a text (not `-bin`) value. */
const TEXT_METADATA_KEY = /^[0-9a-z_.-]+$/;
const TEXT_METADATA_VALUE = /^[ -~]*$/;

/** Whether `key` is text metadata that firstHeaderValue can read off the headers (not binary, not transport). */
function isTextMetadataKey(key: string): boolean {
  return TEXT_METADATA_KEY.test(key) && !key.endsWith('-bin') && !TRANSPORT_HEADERS.has(key);
}

/**
 * The first value of text metadata `key` (isTextMetadataKey) straight from the headers, as
 * requestMetadata's `get(key)[0]` would give it: Metadata.fromHttp2Headers drops a header whose
 * first value has characters metadata may not hold.
 */
function firstHeaderValue(headers: IncomingHttpHeaders, key: string): string | undefined {
  const value = headers[key];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && TEXT_METADATA_VALUE.test(first) ? first : undefined;
}

/** What the server does around a call on this path: its bookkeeping and its error mapping. */
export interface UnaryStreamHooks {
  /** The call ended with `code` (exactly once per call; CANCELLED when the client went first). */
  settled(code: Status): void;
  /** The status a handler's failure is answered with. */
  statusOf(error: unknown): { readonly code: Status; readonly details: string };
}

/**
 * Each session's peer (`address:port`), read once per connection: `session.socket` is a Proxy, and
 * every property read through it is a trap.
 */
const peers = new WeakMap<Http2Session, string>();

function peerOf(session: Http2Session | undefined): string {
  if (session === undefined) return 'unknown';
  const known = peers.get(session);
  if (known !== undefined) return known;
  const socket = session.socket;
  if (!socket?.remoteAddress) return 'unknown';
  const peer = socket.remotePort ? `${socket.remoteAddress}:${socket.remotePort}` : socket.remoteAddress;
  peers.set(session, peer);
  return peer;
}

/**
 * A call on this path as its handler sees it. A class, not an object literal: a literal with
 * getters gets a hidden class of its own each time it is made (its accessors are new closures),
 * and that old-space map keeps the call's young objects alive through every scavenge until the
 * next full collection.
 */
class StreamCall implements UnaryStreamCall {
  /** open: the handler may still answer; answered: it did (or failed); cancelled: nobody will. */
  state: 'open' | 'answered' | 'cancelled' = 'open';
  private parsedMetadata: Metadata | undefined;
  private cancelListeners: (() => void)[] | undefined;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
  ) {}

  get metadata(): Metadata {
    this.parsedMetadata ??= requestMetadata(this.headers);
    return this.parsedMetadata;
  }

  metadataValue(key: string): MetadataValue | undefined {
    return this.parsedMetadata === undefined && isTextMetadataKey(key) ? firstHeaderValue(this.headers, key) : this.metadata.get(key)[0];
  }

  get cancelled(): boolean {
    return this.state === 'cancelled';
  }

  getPeer(): string {
    return peerOf(this.stream.session);
  }

  getAuthContext(): { sslPeerCertificate?: { subject?: Record<string, unknown> } } {
    const socket = this.stream.session?.socket;
    if (!(socket instanceof TLSSocket) || !socket.authorized) return {};
    const certificate = socket.getPeerCertificate();
    return certificate.raw ? { sslPeerCertificate: certificate as unknown as { subject?: Record<string, unknown> } } : {};
  }

  onCancel(listener: () => void): void {
    if (this.state === 'open') (this.cancelListeners ??= []).push(listener);
  }

  offCancel(listener: () => void): void {
    const at = this.cancelListeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.cancelListeners!.splice(at, 1);
  }

  /** The call is over: answered, or cancelled (its cancel listeners run now). */
  end(next: 'answered' | 'cancelled'): void {
    this.state = next;
    const listeners = this.cancelListeners;
    this.cancelListeners = undefined;
    if (next === 'cancelled' && listeners !== undefined) for (const listener of listeners) listener();
  }
}

/** Serves one unary call on `stream`. */
export function serveUnaryStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, method: UnaryStreamMethod, limits: UnaryStreamLimits, hooks: UnaryStreamHooks): void {
  // An error on the stream is followed by its close, which is what this path acts on.
  stream.on('error', noop);
  const call = new StreamCall(stream, headers);
  let deadline: NodeJS.Timeout | undefined;

  const end = (next: 'answered' | 'cancelled', code: Status): void => {
    if (deadline !== undefined) clearTimeout(deadline);
    call.end(next);
    hooks.settled(code);
  };
  const writable = (): boolean => !stream.destroyed && !stream.closed;
  /** Ends the call with a status sent as trailers only (nothing was sent before it). */
  const respondStatus = (code: Status, details: string): void => {
    if (writable()) stream.respond(statusTrailers(code, details), RESPOND_AND_END);
  };
  /** A limit, a malformed request or the deadline: the status is sent and the handler is told to stop. */
  const fail = (code: Status, details: string): void => {
    if (call.state !== 'open') return;
    end('cancelled', code);
    respondStatus(code, details);
  };

  // Closed before an answer: the client reset the stream or the connection went away.
  stream.once('close', () => {
    if (call.state === 'open') end('cancelled', Status.CANCELLED);
  });

  const timeout = headers['grpc-timeout'];
  if (timeout !== undefined) {
    const match = TIMEOUT_PATTERN.exec(String(timeout));
    if (match === null) {
      fail(Status.INTERNAL, `Invalid grpc-timeout value "${String(timeout)}"`);
      return;
    }
    const ms = (Number(match[1]) * TIMEOUT_UNIT_MS[match[2]!]!) | 0;
    deadline = setTimeout(() => fail(Status.DEADLINE_EXCEEDED, 'Deadline exceeded'), ms);
  }

  let first: Buffer | undefined;
  let parts: Buffer[] | undefined;
  let received = 0;
  /** Length the first message declared (-1 until its five header bytes arrived). */
  let firstLength = -1;
  /** The bytes so far in one buffer (chunks are joined only when a header straddles them). */
  const joined = (): Buffer => {
    if (parts !== undefined) {
      first = Buffer.concat(parts, received);
      parts = undefined;
    }
    return first!;
  };
  stream.on('data', (chunk: Buffer) => {
    if (call.state !== 'open') return;
    received += chunk.length;
    if (first === undefined) first = chunk;
    else (parts ??= [first]).push(chunk);
    // Messages are checked as their headers arrive, as grpc-js's StreamDecoder does, so at most
    // two messages' worth is ever buffered: an oversized message is refused before it is read,
    // and a second whole message ends the call at once, whether or not the client half-closes.
    if (firstLength < 0) {
      if (received < FRAME_HEADER_BYTES) return;
      firstLength = joined().readUInt32BE(1);
      if (firstLength > limits.maxReceiveMessageBytes) return refuseLarger(firstLength);
    }
    const secondAt = FRAME_HEADER_BYTES + firstLength;
    if (received < secondAt + FRAME_HEADER_BYTES) return;
    const secondLength = joined().readUInt32BE(secondAt + 1);
    if (secondLength > limits.maxReceiveMessageBytes) return refuseLarger(secondLength);
    if (received >= secondAt + FRAME_HEADER_BYTES + secondLength) {
      first = parts = undefined;
      fail(Status.UNIMPLEMENTED, `Received a second request message for server streaming method ${method.path}`);
    }
  });
  const refuseLarger = (declared: number): void => {
    first = parts = undefined;
    fail(Status.RESOURCE_EXHAUSTED, `Received message larger than max (${declared} vs ${limits.maxReceiveMessageBytes})`);
  };
  stream.on('end', () => {
    if (call.state !== 'open') return;
    const bytes = parts === undefined ? first : Buffer.concat(parts, received);
    first = parts = undefined;
    // grpc-js's reading: the first whole message is the request (a second whole one already ended
    // the call as it arrived); no whole message before the half-close is answered with its text;
    // a partial one after the first is never read.
    const length = firstLength;
    if (bytes === undefined || length < 0 || FRAME_HEADER_BYTES + length > bytes.length) {
      return fail(Status.UNIMPLEMENTED, `Received no request message for server streaming method ${method.path}`);
    }
    let request: unknown;
    try {
      // A set compressed flag under identity encoding is read as it is, as grpc-js reads it.
      request = method.deserialize(bytes.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length));
    } catch {
      return fail(Status.INTERNAL, 'Error deserializing request');
    }
    let running: Promise<unknown>;
    try {
      running = method.run(request, call);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(answer, (error: unknown) => {
      if (call.state !== 'open') return;
      const status = hooks.statusOf(error);
      end('answered', status.code);
      respondStatus(status.code, status.details);
    });
  });

  const answer = (response: unknown): void => {
    if (call.state !== 'open') return;
    let payload: Buffer;
    try {
      payload = method.serialize(response);
    } catch {
      return fail(Status.INTERNAL, 'Error serializing response');
    }
    if (payload.length > limits.maxSendMessageBytes) {
      return fail(Status.RESOURCE_EXHAUSTED, `Sent message larger than max (${payload.length + FRAME_HEADER_BYTES} vs. ${limits.maxSendMessageBytes})`);
    }
    end('answered', Status.OK);
    if (!writable()) return;
    const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
    frame[0] = 0;
    frame.writeUInt32BE(payload.length, 1);
    payload.copy(frame, FRAME_HEADER_BYTES);
    stream.respond(RESPONSE_HEADERS, RESPOND_WITH_TRAILERS);
    stream.once('wantTrailers', () => stream.sendTrailers(OK_TRAILERS));
    stream.end(frame);
  };
}
