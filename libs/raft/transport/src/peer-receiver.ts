import type { Duplex } from 'node:stream';
import { status as GrpcStatus, type ServerReadableStream, type ServiceDefinition } from '@grpc/grpc-js';
import { crc32c } from '@ward/shared/checksum';
import { GrpcStatusError, type ClientStreamHandler, type ServiceHandlers } from '@ward/platform/grpc-server';
import { FrameInvalidError } from './errors';
import { decodeBatch, decodeSnapshotFrame, type FrameRoute, type SnapshotHeader } from './frame-codec';
import type { TransportHooks } from './hooks';
import { serveFrameStream } from './frame-stream';
import { maxFrameBytes, type KeepaliveOptions, type TransportLimits } from './options';
import { EMPTY_RESPONSE, peerServiceDefinition } from './peer-service';

/** What the node does with what arrives. */
export interface PeerReceiver {
  /**
   * A batch from peer `from`, in the order sent. A returned promise holds back that peer's
   * stream until it settles (backpressure); other peers' streams are not affected.
   */
  onMessages(from: bigint, messages: Uint8Array[]): void | Promise<void>;
  /**
   * A complete snapshot, size and checksum verified. The sender is answered once the promise
   * resolves; a rejection fails the transfer.
   */
  onSnapshot?(from: bigint, metadata: Uint8Array, data: Uint8Array): Promise<void>;
  /**
   * Takes a snapshot's data as it arrives instead (never whole in memory; used over onSnapshot
   * when given): called at the stream's header, it returns where the data goes. The chunks follow
   * in order, each checked as it comes; `finish` once the trailer verified size and checksum (the
   * sender is answered once it resolves), `abort` when the transfer fails anywhere.
   */
  receiveSnapshot?(from: bigint, metadata: Uint8Array, totalBytes: number): Promise<SnapshotSink>;
}

/** Where a received snapshot's data goes, chunk by chunk (PeerReceiver.receiveSnapshot). */
export interface SnapshotSink {
  write(chunk: Uint8Array): Promise<void>;
  finish(): Promise<void>;
  abort(): Promise<void>;
}

export interface PeerServiceOptions {
  readonly localId: bigint;
  readonly clusterId: bigint;
  readonly limits: TransportLimits;
  readonly receiver: PeerReceiver;
  readonly hooks: TransportHooks;
  /** The frame stream's liveness byte interval (the sender's keepalive). */
  readonly keepalive: KeepaliveOptions;
}

/** Counters of the receiving side. */
export interface ReceiveStats {
  receivedMessages: number;
  receivedBatches: number;
  receivedBytes: number;
  rejectedFrames: number;
  snapshotsReceived: number;
  snapshotChunksReceived: number;
  inboundSnapshots: number;
}

/**
 * The server side of the peer service, as handlers for `@ward/platform/grpc-server`, and of the
 * frame stream (frame-stream.ts), which carries the same batch frames. Malformed, oversized or
 * misrouted frames end the offending gRPC stream with INVALID_ARGUMENT or FAILED_PRECONDITION, and
 * close the offending frame-stream connection; nothing a peer sends can crash the process.
 */
export function createPeerService(options: PeerServiceOptions): { definition: ServiceDefinition; handlers: ServiceHandlers; frameStream: (socket: Duplex) => void; stats: ReceiveStats } {
  const stats: ReceiveStats = { receivedMessages: 0, receivedBatches: 0, receivedBytes: 0, rejectedFrames: 0, snapshotsReceived: 0, snapshotChunksReceived: 0, inboundSnapshots: 0 };
  const reject = (reason: string, code: GrpcStatus): GrpcStatusError => {
    stats.rejectedFrames++;
    options.hooks.onRejected?.(reason);
    return new GrpcStatusError(code, reason);
  };
  const checkRoute = (route: FrameRoute): void => {
    if (route.clusterId !== options.clusterId) throw reject(`frame for cluster ${route.clusterId.toString(16)}, this is ${options.clusterId.toString(16)}`, GrpcStatus.FAILED_PRECONDITION);
    if (route.to !== options.localId) throw reject(`frame for member ${route.to.toString(16)}, this is ${options.localId.toString(16)}`, GrpcStatus.FAILED_PRECONDITION);
  };
  /** One batch frame, from either stream; throws (a GrpcStatusError) on a frame it refuses. */
  const receiveBatch = (frame: Buffer): void | Promise<void> => {
    const batch = decodeOrReject(() => decodeBatch(frame, options.limits), reject);
    checkRoute(batch);
    stats.receivedBatches++;
    stats.receivedMessages += batch.messages.length;
    stats.receivedBytes += frame.length;
    options.hooks.onReceived?.(batch.from, batch.messages.length, frame.length);
    return options.receiver.onMessages(batch.from, batch.messages);
  };
  const send: ClientStreamHandler<Buffer, Buffer> = (call) => readStream(call, reject, async (frame) => receiveBatch(frame)).then(() => EMPTY_RESPONSE);
  const frameStream = (socket: Duplex): void =>
    serveFrameStream(socket, {
      maxFrameBytes: maxFrameBytes(options.limits),
      keepalive: options.keepalive,
      onFrame: receiveBatch,
      onOversized: (reason) => {
        stats.rejectedFrames++;
        options.hooks.onRejected?.(reason);
      },
    });
  const sendSnapshot: ClientStreamHandler<Buffer, Buffer> = async (call) => {
    const { onSnapshot, receiveSnapshot } = options.receiver;
    const openSink =
      receiveSnapshot?.bind(options.receiver) ??
      (onSnapshot === undefined ? undefined : async (from: bigint, metadata: Uint8Array, totalBytes: number) => bufferedSink(totalBytes, (data) => onSnapshot.call(options.receiver, from, metadata, data)));
    if (openSink === undefined) throw reject('this member does not accept snapshots', GrpcStatus.UNIMPLEMENTED);
    if (stats.inboundSnapshots >= options.limits.maxInboundSnapshots) throw reject('too many snapshots in flight', GrpcStatus.RESOURCE_EXHAUSTED);
    stats.inboundSnapshots++;
    const receiver = new SnapshotReceiver(options.limits, checkRoute, reject, (header) => openSink(header.from, header.metadata, header.totalBytes));
    try {
      await readStream(call, reject, (frame) => receiver.add(frame));
      stats.snapshotChunksReceived += await receiver.finish();
      stats.snapshotsReceived++;
      return EMPTY_RESPONSE;
    } catch (error) {
      await receiver.abort();
      throw error;
    } finally {
      stats.inboundSnapshots--;
    }
  };
  return { definition: peerServiceDefinition, handlers: { Send: send, SendSnapshot: sendSnapshot }, frameStream, stats };
}

type Reject = (reason: string, code: GrpcStatus) => GrpcStatusError;

function decodeOrReject<T>(decode: () => T, reject: Reject): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof FrameInvalidError) throw reject(error.reason, GrpcStatus.INVALID_ARGUMENT);
    throw error;
  }
}

/** Reads frames one at a time (the next is pulled only after `onFrame` settles). */
async function readStream(call: ServerReadableStream<Buffer, Buffer>, reject: Reject, onFrame: (frame: Buffer) => Promise<void>): Promise<void> {
  try {
    for await (const frame of call as AsyncIterable<Buffer>) await onFrame(frame);
  } catch (error) {
    if (error instanceof GrpcStatusError) throw error;
    // The stream itself failed: the client went away, or grpc-js refused an oversized message.
    const code = (error as { code?: unknown }).code;
    const details = (error as { details?: unknown }).details;
    throw reject(typeof details === 'string' ? details : 'peer stream failed', typeof code === 'number' && code > 0 && code <= 16 ? code : GrpcStatus.CANCELLED);
  }
}

/** A sink holding the data in one buffer, handed to `deliver` at the end (PeerReceiver.onSnapshot). */
function bufferedSink(totalBytes: number, deliver: (data: Uint8Array) => Promise<void>): SnapshotSink {
  const data = new Uint8Array(totalBytes);
  let received = 0;
  return {
    write: async (chunk) => {
      data.set(chunk, received);
      received += chunk.length;
    },
    finish: () => deliver(data),
    abort: async () => undefined,
  };
}

/**
 * Takes a snapshot stream's frames in order, checking order, sizes and checksums as they come,
 * and passes the data on to the sink opened at the header.
 */
class SnapshotReceiver {
  private header: SnapshotHeader | undefined;
  private sink: SnapshotSink | undefined;
  private nextSeq = 0;
  private received = 0;
  private dataCrc = 0;
  private complete = false;

  constructor(
    private readonly limits: TransportLimits,
    private readonly checkRoute: (route: FrameRoute) => void,
    private readonly reject: Reject,
    private readonly openSink: (header: SnapshotHeader) => Promise<SnapshotSink>,
  ) {}

  async add(frame: Uint8Array): Promise<void> {
    const invalid = (reason: string): GrpcStatusError => this.reject(reason, GrpcStatus.INVALID_ARGUMENT);
    if (this.complete) throw invalid('frame after the snapshot trailer');
    const decoded = decodeOrReject(() => decodeSnapshotFrame(frame, this.limits.maxSnapshotMetadataBytes), this.reject);
    if (decoded.kind === 'header') {
      if (this.header !== undefined) throw invalid('second snapshot header');
      this.checkRoute(decoded);
      if (decoded.totalBytes > this.limits.maxSnapshotBytes) throw this.reject(`snapshot of ${decoded.totalBytes} bytes exceeds ${this.limits.maxSnapshotBytes}`, GrpcStatus.RESOURCE_EXHAUSTED);
      this.header = decoded;
      this.sink = await this.stored(() => this.openSink(decoded));
      return;
    }
    const header = this.header;
    const sink = this.sink;
    if (header === undefined || sink === undefined) throw invalid('snapshot stream does not start with a header');
    if (decoded.kind === 'chunk') {
      if (decoded.seq !== this.nextSeq) throw invalid(`chunk ${decoded.seq} arrived, expected ${this.nextSeq}`);
      if (decoded.data.length > this.limits.snapshotChunkBytes) throw invalid(`chunk of ${decoded.data.length} bytes exceeds ${this.limits.snapshotChunkBytes}`);
      if (this.received + decoded.data.length > header.totalBytes) throw invalid('chunks exceed the announced snapshot size');
      this.dataCrc = crc32c(decoded.data, this.dataCrc);
      this.received += decoded.data.length;
      this.nextSeq++;
      await this.stored(() => sink.write(decoded.data));
      return;
    }
    if (decoded.chunkCount !== this.nextSeq) throw invalid(`trailer counts ${decoded.chunkCount} chunks, ${this.nextSeq} arrived`);
    if (this.received !== header.totalBytes) throw invalid(`snapshot has ${this.received} of ${header.totalBytes} bytes`);
    if (decoded.dataCrc !== this.dataCrc) throw invalid('snapshot data checksum mismatch');
    this.complete = true;
  }

  /** Hands the verified snapshot over (the sink's finish); returns the chunks it came in. */
  async finish(): Promise<number> {
    const sink = this.sink;
    if (!this.complete || sink === undefined) throw this.reject('snapshot stream ended before its trailer', GrpcStatus.INVALID_ARGUMENT);
    this.sink = undefined;
    await sink.finish();
    return this.nextSeq;
  }

  /** Gives up a transfer that failed (its sink's abort), if it has not been handed over. */
  async abort(): Promise<void> {
    const sink = this.sink;
    this.sink = undefined;
    await sink?.abort().catch(() => undefined);
  }

  /** A sink's step; its failure (the disk's, say) ends the transfer as this member's, not the sender's. */
  private async stored<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof GrpcStatusError) throw error;
      throw this.reject(`snapshot not taken: ${(error as Error).message}`, GrpcStatus.INTERNAL);
    }
  }
}
