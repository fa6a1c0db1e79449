/** Why a message was not sent. */
export type DropReason = 'queue-full' | 'too-large' | 'unknown-peer' | 'closed' | 'expired';

/**
 * Observers of the transport, for metrics and logs. They run synchronously on the hot path:
 * keep them cheap and never throw.
 */
export interface TransportHooks {
  /** A batch frame was handed to a peer's stream. */
  readonly onSent?: (peer: bigint, messages: number, bytes: number) => void;
  /** Messages were dropped instead of queued (Raft tolerates loss and retransmits). */
  readonly onDropped?: (peer: bigint, messages: number, reason: DropReason) => void;
  /** A new stream to a peer is being opened after a failure, after `delayMs`. */
  readonly onReconnect?: (peer: bigint, attempt: number, delayMs: number) => void;
  /** A peer's stream failed or could not connect; Raft's reportUnreachable belongs here. */
  readonly onUnreachable?: (peer: bigint, error: unknown) => void;
  /** A batch was received and delivered. */
  readonly onReceived?: (peer: bigint, messages: number, bytes: number) => void;
  /** A received frame or stream was refused (malformed, checksum, limit, wrong cluster). */
  readonly onRejected?: (reason: string) => void;
}
