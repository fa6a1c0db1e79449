import { CodedError } from '@ward/shared/errors';

/** Every code the transport library raises (documented in the library's README). */
export const TRANSPORT_ERROR_CODES = [
  'ERR_TRANSPORT_FRAME_INVALID',
  'ERR_TRANSPORT_UNKNOWN_PEER',
  'ERR_TRANSPORT_SNAPSHOT_TOO_LARGE',
  'ERR_TRANSPORT_SNAPSHOT_BUSY',
  'ERR_TRANSPORT_SNAPSHOT_FAILED',
  'ERR_TRANSPORT_CLOSED',
] as const;
export type TransportErrorCode = (typeof TRANSPORT_ERROR_CODES)[number];

export class TransportError<Code extends TransportErrorCode = TransportErrorCode> extends CodedError<Code> {}

/** A received frame is malformed, fails its checksum, or breaks a limit. */
export class FrameInvalidError extends TransportError<'ERR_TRANSPORT_FRAME_INVALID'> {
  constructor(readonly reason: string) {
    super('ERR_TRANSPORT_FRAME_INVALID', `invalid peer frame: ${reason}`);
  }
}

/** No address is known for the member id. */
export class UnknownPeerError extends TransportError<'ERR_TRANSPORT_UNKNOWN_PEER'> {
  constructor(readonly peer: bigint) {
    super('ERR_TRANSPORT_UNKNOWN_PEER', `no address for peer ${peer.toString(16)}`);
  }
}

/** A snapshot is larger than `maxSnapshotBytes`. */
export class SnapshotTooLargeError extends TransportError<'ERR_TRANSPORT_SNAPSHOT_TOO_LARGE'> {
  constructor(
    readonly sizeBytes: number,
    readonly limitBytes: number,
  ) {
    super('ERR_TRANSPORT_SNAPSHOT_TOO_LARGE', `snapshot of ${sizeBytes} bytes exceeds the limit of ${limitBytes} bytes`);
  }
}

/** A snapshot to this peer is already being sent. */
export class SnapshotBusyError extends TransportError<'ERR_TRANSPORT_SNAPSHOT_BUSY'> {
  constructor(readonly peer: bigint) {
    super('ERR_TRANSPORT_SNAPSHOT_BUSY', `a snapshot to peer ${peer.toString(16)} is already in flight`);
  }
}

/** Sending a snapshot failed (the peer refused it, the stream broke, or the deadline passed). */
export class SnapshotSendError extends TransportError<'ERR_TRANSPORT_SNAPSHOT_FAILED'> {
  constructor(
    readonly peer: bigint,
    cause: unknown,
  ) {
    super('ERR_TRANSPORT_SNAPSHOT_FAILED', `sending a snapshot to peer ${peer.toString(16)} failed`, { cause });
  }
}

/** The transport was closed. */
export class TransportClosedError extends TransportError<'ERR_TRANSPORT_CLOSED'> {
  constructor() {
    super('ERR_TRANSPORT_CLOSED', 'transport is closed');
  }
}
