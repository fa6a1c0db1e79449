export { abortSignalOf, createGrpcServer, type GrpcServer, type GrpcServerOptions } from './server';
export { serveBatchedCalls, serveFramedCalls, type BatchedAnswer, type BatchedCallsOptions, type FramedCallsOptions } from './batched-calls';
export { FramedStream, FramedStreamError, LengthPrefixedReader, dialSocket, isForeignFramedStream, splitAddress, type DialOptions, type FramedProtocol, type FramedStreamOptions } from './framed-stream';
export { GrpcStatusError, INTERNAL_ERROR_DETAILS, toGrpcStatus, type ErrorMapper, type GrpcStatusLike } from './status';
export type {
  BidiStreamHandler,
  CallContext,
  Cancellation,
  ClientStreamHandler,
  ServerStreamHandler,
  ServiceHandlers,
  UnaryHandler,
} from './handlers';
export { TlsConfigError, loadTlsMaterial, tlsChannelCredentials, tlsServerCredentials, type TlsFiles, type TlsMaterial } from './tls';
export { HTTP2_PREFACE, protocolOf, startSharedListener, type SharedListener, type SharedListenerOptions, type SharedProtocol } from './shared-listener';
