export type { TransportErrorCode } from './errors';
export {
  TRANSPORT_ERROR_CODES,
  FrameInvalidError,
  SnapshotBusyError,
  SnapshotSendError,
  SnapshotTooLargeError,
  TransportClosedError,
  TransportError,
  UnknownPeerError,
} from './errors';
export type { BackoffOptions } from './backoff';
export { DEFAULT_BACKOFF, backoffDelayMs } from './backoff';
export type { DropReason, TransportHooks } from './hooks';
export type { KeepaliveOptions, TransportLimits } from './options';
export { DEFAULT_KEEPALIVE, DEFAULT_LIMITS } from './options';
export type { FrameRoute, MessageBytes } from './frame-codec';
export { FRAME_VERSION, decodeBatch, encodeBatch } from './frame-codec';
export { PEER_SERVICE_NAME, peerServiceDefinition } from './peer-service';
export type { PeerReceiver, ReceiveStats, SnapshotSink } from './peer-receiver';
export type { PeerSendStats } from './peer-sender';
export type { PeerStats, PeerTransportOptions, TransportStats } from './transport';
export { PeerTransport } from './transport';
export type { PeerServer, PeerServerOptions } from './peer-server';
export { PEER_FRAMES_ALPN, PEER_FRAMES_PREFACE } from './frame-stream';
export { startPeerServer } from './peer-server';
export type { RaftMessengerOptions } from './raft-messenger';
export { RaftMessenger } from './raft-messenger';
export { transportMetricsHooks } from './transport-metrics';
