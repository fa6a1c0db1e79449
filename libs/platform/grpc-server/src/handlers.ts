import type {
  Metadata,
  ServerDuplexStream,
  ServerReadableStream,
  ServerWritableStream,
} from '@grpc/grpc-js';
import type { Logger } from '@ward/platform/logging';

/** What every handler receives besides its request. */
export interface CallContext {
  readonly metadata: Metadata;
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
