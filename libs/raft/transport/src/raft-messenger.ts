import {
  DEFAULT_DECODE_LIMITS,
  MessageType,
  decodeMessage,
  encodeMessage,
  encodeMessagePieces,
  message,
  type DecodeLimits,
  type Message,
  type NodeId,
  type Snapshot,
} from '@ward/raft/core';
import { EMPTY_BYTES } from '@ward/shared/bytes';
import { COPY_BELOW_BYTES } from './frame-codec';
import type { TransportHooks } from './hooks';
import type { SnapshotSink } from './peer-receiver';
import { PeerTransport, type PeerTransportOptions } from './transport';

export interface RaftMessengerOptions extends Omit<PeerTransportOptions, 'receiver'> {
  /** A decoded message for this member, ready for `RawNode.step`. */
  readonly onMessage: (message: Message) => void;
  /** How a snapshot transfer ended, for `RawNode.reportSnapshot`. */
  readonly onSnapshotStatus?: (to: NodeId, succeeded: boolean) => void;
  /**
   * Where a MsgSnap's data comes from (default: the message's own `snapshot.data`): for a storage
   * that keeps a snapshot's data in its file, not in the core's memory. A rejection fails the send.
   */
  readonly snapshotData?: (snapshot: Snapshot) => Promise<{ readonly totalBytes: number; readonly data: Uint8Array | AsyncIterable<Uint8Array> }>;
  /**
   * Where a MsgSnap's data goes as it arrives (default: joined in memory and stepped with the
   * message): for a storage that keeps a snapshot's data in its file. Given the message (its data
   * left out) and the data's size; once the sink's `finish` resolves, the message is delivered to
   * onMessage without its data. A rejection refuses the transfer.
   */
  readonly receiveSnapshot?: (message: Message, totalBytes: number) => Promise<SnapshotSink>;
  /** A peer could not be reached, for `RawNode.reportUnreachable`. */
  readonly onUnreachable?: (to: NodeId) => void;
  /** A received message that did not decode or was misaddressed (dropped). */
  readonly onInvalidMessage?: (from: NodeId, reason: string) => void;
  readonly decodeLimits?: DecodeLimits;
}

/**
 * The Raft core's messages over the peer transport: each Message is encoded with the core's
 * codec and sent as one opaque message; a MsgSnap travels on the snapshot stream (the message
 * without its data as metadata, the snapshot data as the chunked body) and is reassembled on
 * the other side.
 */
export class RaftMessenger {
  readonly transport: PeerTransport;
  private readonly localId: NodeId;

  constructor(private readonly options: RaftMessengerOptions) {
    this.localId = options.localId;
    const hooks: TransportHooks = {
      ...options.hooks,
      onUnreachable: (peer, error) => {
        options.hooks?.onUnreachable?.(peer, error);
        options.onUnreachable?.(peer);
      },
    };
    this.transport = new PeerTransport({
      ...options,
      hooks,
      receiver: {
        onMessages: (from, messages) => {
          for (const bytes of messages) this.deliver(from, bytes, undefined);
        },
        onSnapshot: async (from, metadata, data) => this.deliver(from, metadata, data),
        ...(options.receiveSnapshot === undefined ? {} : { receiveSnapshot: (from, metadata, totalBytes) => this.receiveSnapshot(from, metadata, totalBytes, options.receiveSnapshot!) }),
      },
    });
  }

  /**
   * Sends a Ready's messages (never blocks; MsgSnap transfers run in the background). Large entry
   * data goes out uncopied: the appends of one entry to every follower share it.
   */
  send(messages: readonly Message[]): void {
    for (const m of messages) {
      if (m.type === MessageType.Snap && m.snapshot !== undefined) this.sendSnapshot(m);
      else if (m.entries.length === 0 || m.snapshot !== undefined) this.transport.send(m.to, encodeMessage(m));
      else this.transport.send(m.to, encodeMessagePieces(m, COPY_BELOW_BYTES));
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private sendSnapshot(m: Message): void {
    const snapshot = m.snapshot!;
    const metadata = encodeMessage(message(m.type, { ...m, snapshot: { ...snapshot, data: EMPTY_BYTES } }));
    const source = this.options.snapshotData;
    const sent =
      source === undefined
        ? this.transport.sendSnapshot(m.to, metadata, snapshot.data, snapshot.data.length)
        : source(snapshot).then(({ data, totalBytes }) => this.transport.sendSnapshot(m.to, metadata, data, totalBytes));
    sent.then(
      () => this.options.onSnapshotStatus?.(m.to, true),
      () => this.options.onSnapshotStatus?.(m.to, false),
    );
  }

  private deliver(from: NodeId, bytes: Uint8Array, snapshotData: Uint8Array | undefined): void {
    let decoded = this.decode(from, bytes, snapshotData !== undefined);
    if (typeof decoded === 'string') {
      this.options.onInvalidMessage?.(from, decoded);
      return;
    }
    if (snapshotData !== undefined) decoded = message(decoded.type, { ...decoded, snapshot: { ...decoded.snapshot!, data: snapshotData } });
    this.options.onMessage(decoded);
  }

  /** A snapshot stream's data into the sink `open` gives; its message delivered once the data is stored. */
  private async receiveSnapshot(from: NodeId, bytes: Uint8Array, totalBytes: number, open: (message: Message, totalBytes: number) => Promise<SnapshotSink>): Promise<SnapshotSink> {
    const decoded = this.decode(from, bytes, true);
    if (typeof decoded === 'string') {
      this.options.onInvalidMessage?.(from, decoded);
      throw new Error(decoded);
    }
    const sink = await open(decoded, totalBytes);
    return {
      write: (chunk) => sink.write(chunk),
      abort: () => sink.abort(),
      finish: async () => {
        await sink.finish();
        this.options.onMessage(decoded);
      },
    };
  }

  /** A message from peer `from` decoded and checked (a MsgSnap when `snapshot`), or why it is refused. */
  private decode(from: NodeId, bytes: Uint8Array, snapshot: boolean): Message | string {
    let decoded: Message;
    try {
      // Entry data stays a view of the frame, which the transport hands over and never reuses: an
      // entry's data is then copied once on a follower (into its WAL frame), not twice. The frame
      // lives as long as any of its entries (the log keeps consecutive entries together).
      decoded = decodeMessage(bytes, this.options.decodeLimits ?? DEFAULT_DECODE_LIMITS, true);
    } catch (error) {
      return (error as Error).message;
    }
    if (decoded.from !== from || decoded.to !== this.localId) {
      return `message from ${decoded.from.toString(16)} to ${decoded.to.toString(16)} arrived on the stream from ${from.toString(16)}`;
    }
    if (snapshot && (decoded.type !== MessageType.Snap || decoded.snapshot === undefined)) return 'snapshot stream without a snapshot message';
    return decoded;
  }
}
