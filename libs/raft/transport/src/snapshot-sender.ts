import { Metadata, type Client, type ClientWritableStream } from '@grpc/grpc-js';
import { crc32c } from '@ward/shared/checksum';
import { SnapshotSendError, SnapshotTooLargeError } from './errors';
import { encodeSnapshotChunk, encodeSnapshotHeader, encodeSnapshotTrailer, type FrameRoute } from './frame-codec';
import type { TransportLimits } from './options';
import { SEND_SNAPSHOT_PATH, deserializeFrame, serializeFrame } from './peer-service';

export interface SnapshotTransfer {
  readonly route: FrameRoute;
  readonly client: Client;
  readonly limits: TransportLimits;
  /** Opaque description of the snapshot (for Raft: the snapshot message without its data). */
  readonly metadata: Uint8Array;
  /** The data, whole or as a stream of pieces of any size (re-chunked to snapshotChunkBytes). */
  readonly data: Uint8Array | AsyncIterable<Uint8Array>;
  /** Exact size of the data; the receiver allocates it and checks it. */
  readonly totalBytes: number;
}

/**
 * Streams a snapshot to a peer in chunks (header, chunks, trailer with the data's CRC-32C) on its
 * own stream, honouring flow control. Resolves once the receiver has accepted it; rejects with
 * SnapshotSendError when the peer refuses it, the stream breaks or the deadline passes.
 */
export async function sendSnapshotStream(transfer: SnapshotTransfer): Promise<void> {
  const { limits, totalBytes } = transfer;
  if (!Number.isSafeInteger(totalBytes) || totalBytes < 0) throw new TypeError(`sendSnapshot: totalBytes must be a safe non-negative integer, got ${totalBytes}`);
  if (totalBytes > limits.maxSnapshotBytes) throw new SnapshotTooLargeError(totalBytes, limits.maxSnapshotBytes);
  if (transfer.metadata.length > limits.maxSnapshotMetadataBytes) throw new TypeError(`sendSnapshot: metadata exceeds ${limits.maxSnapshotMetadataBytes} bytes`);
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const answered = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  const call = transfer.client.makeClientStreamRequest<Uint8Array, Buffer>(
    SEND_SNAPSHOT_PATH,
    serializeFrame,
    deserializeFrame,
    new Metadata(),
    { deadline: Date.now() + limits.snapshotTimeoutMs },
    (error) => (error ? settle!.reject(error) : settle!.resolve()),
  );
  // If the call fails mid-way, `answered` rejects; writing stops at the next backpressure wait.
  answered.catch(() => undefined);
  try {
    await write(call, encodeSnapshotHeader({ ...transfer.route, totalBytes, metadata: transfer.metadata }), answered);
    const { chunkCount, dataCrc, sentBytes } = await writeChunks(call, transfer, answered);
    if (sentBytes !== totalBytes) throw new Error(`snapshot data had ${sentBytes} bytes, ${totalBytes} announced`);
    await write(call, encodeSnapshotTrailer(chunkCount, dataCrc), answered);
    call.end();
    await answered;
  } catch (error) {
    call.cancel();
    throw new SnapshotSendError(transfer.route.to, error);
  }
}

async function writeChunks(call: ClientWritableStream<Uint8Array>, transfer: SnapshotTransfer, answered: Promise<void>): Promise<{ chunkCount: number; dataCrc: number; sentBytes: number }> {
  const chunkBytes = transfer.limits.snapshotChunkBytes;
  let chunkCount = 0;
  let dataCrc = 0;
  let sentBytes = 0;
  const pieces = transfer.data instanceof Uint8Array ? [transfer.data] : transfer.data;
  for await (const piece of pieces) {
    if (!(piece instanceof Uint8Array)) throw new TypeError('sendSnapshot: data pieces must be Uint8Arrays');
    if (sentBytes + piece.length > transfer.totalBytes) throw new Error(`snapshot data exceeds the announced ${transfer.totalBytes} bytes`);
    for (let offset = 0; offset < piece.length; offset += chunkBytes) {
      const chunk = piece.subarray(offset, Math.min(piece.length, offset + chunkBytes));
      await write(call, encodeSnapshotChunk(chunkCount++, chunk), answered);
      dataCrc = crc32c(chunk, dataCrc);
      sentBytes += chunk.length;
    }
  }
  return { chunkCount, dataCrc, sentBytes };
}

/** Writes a frame; when the stream's buffer is full, waits for it to drain (or for the call to end). */
async function write(call: ClientWritableStream<Uint8Array>, frame: Uint8Array, answered: Promise<void>): Promise<void> {
  if (call.write(frame)) return;
  await Promise.race([
    new Promise<void>((resolve) => call.once('drain', resolve)),
    answered.then(() => {
      throw new Error('receiver answered before the snapshot was complete');
    }),
  ]);
}
