import { frameSizeBytes, writeFrame } from './frame';
import type { WalHardState, WalSnapshotMarker } from './record';
import { RecordType, encodeCrcPayload, encodeRecordPayload } from './record';

/** A record ready to be framed: its type and encoded payload (`payload`, then `payloadTail` if any). */
export interface PendingFrame {
  readonly type: number;
  readonly payload: Uint8Array;
  readonly payloadTail?: Uint8Array;
}

/** Bytes of a pending frame's payload. */
export function payloadBytes(frame: PendingFrame): number {
  return frame.payload.length + (frame.payloadTail?.length ?? 0);
}

/**
 * The records every segment starts with: the chain value it continues from, the log's metadata,
 * and (when known) the latest snapshot marker and hard state, so that a segment is readable on
 * its own after older ones are released. A repeated marker never restarts the log.
 */
export function segmentHeaderFrames(
  startCrc: number,
  metadata: Uint8Array,
  snapshot: WalSnapshotMarker | undefined,
  hardState: WalHardState | undefined,
): PendingFrame[] {
  const frames: PendingFrame[] = [
    { type: RecordType.Crc, payload: encodeCrcPayload(startCrc) },
    { type: RecordType.Metadata, payload: metadata },
  ];
  if (snapshot !== undefined) {
    const copy = { index: snapshot.index, term: snapshot.term, restartsLog: false };
    frames.push(encodeRecordPayload({ kind: 'snapshot', snapshot: copy }));
  }
  if (hardState !== undefined) frames.push(encodeRecordPayload({ kind: 'hardState', hardState }));
  return frames;
}

/** Frames `frames` back to back, chaining from `previousCrc`; returns the bytes and the new chain value. */
export function encodeFrames(frames: readonly PendingFrame[], previousCrc: number): { bytes: Uint8Array; crc: number } {
  let size = 0;
  for (const frame of frames) size += frameSizeBytes(payloadBytes(frame));
  // Every byte (header, body, padding) is written by writeFrame, so uninitialised memory is fine.
  const bytes = Buffer.allocUnsafe(size);
  let offset = 0;
  let crc = previousCrc;
  for (const frame of frames) {
    // The checksum record's own crc is seeded with the value it carries.
    const seed = frame.type === RecordType.Crc ? new DataView(frame.payload.buffer, frame.payload.byteOffset).getUint32(0, true) : crc;
    crc = writeFrame(bytes, offset, frame.type, frame.payload, seed, frame.payloadTail);
    offset += frameSizeBytes(payloadBytes(frame));
  }
  return { bytes, crc };
}
