import type {
  Metadata,
  MetadataValue,
  ServerDuplexStream,
  ServerReadableStream,
  ServerWritableStream,
} from '@grpc/grpc-js';
import type { Logger } from '@ward/platform/logging';

/** What every handler receives besides its request. */
export interface CallContext {
  readonly metadata: Metadata;
  /**
   * The first value of request metadata `key`: what `metadata.get(key)[0]` gives, without building
   * the call's Metadata where the serving path can read its request headers directly (a Metadata
   * per call, to read one token from it, is a cost of every unary call).
   */
  metadataValue(key: string): MetadataValue | undefined;
  readonly peer: string;
  /**
   * The subject CommonName of the client's TLS certificate when the server verified one ('' for a
   * verified certificate without a CommonName; the last one when it has several, as Go reads it);
   * undefined on a plaintext connection or without a verified client certificate.
   */
  readonly peerCommonName: string | undefined;
  /** `service/method`, e.g. `etcdserverpb.KV/Range`. */
  readonly method: string;
  /** A child logger bound to this call's `reqId` and `method`. */
  readonly logger: Logger;
  /** Aborted when the client cancels or the deadline passes. */
  readonly signal: AbortSignal;
  /**
   * The same cancellation as `signal`, without making it: its AbortController is made only when
   * something listens (or asks for the reason of an abort). Most unary calls end without anything
   * waiting on them, and an AbortController per call is the largest JavaScript cost of a read
   * served without a hop.
   */
  readonly cancellation: Cancellation;
}

/**
 * What waiting on a call's cancellation takes of an AbortSignal (an AbortSignal is one): whether it
 * was aborted, and listeners for when it is.
 */
export interface Cancellation {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
  throwIfAborted(): void;
}

export type UnaryHandler<Req, Res> = (request: Req, context: CallContext) => Promise<Res>;
export type ClientStreamHandler<Req, Res> = (call: ServerReadableStream<Req, Res>, context: CallContext) => Promise<Res>;
export type ServerStreamHandler<Req, Res> = (request: Req, call: ServerWritableStream<Req, Res>, context: CallContext) => Promise<void>;
export type BidiStreamHandler<Req, Res> = (call: ServerDuplexStream<Req, Res>, context: CallContext) => Promise<void>;

/** Handlers by method name; the service definition says which kind each method is. */
export type ServiceHandlers = Record<
  string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  UnaryHandler<any, any> | ClientStreamHandler<any, any> | ServerStreamHandler<any, any> | BidiStreamHandler<any, any>
>;
