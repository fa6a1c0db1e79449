import { Metadata, type Client, type ClientWritableStream } from '@grpc/grpc-js';
import { joinChunks } from '@ward/shared/binary';
import { backoffDelayMs, type BackoffOptions } from './backoff';
import { byteLength, encodeBatchPieces, type FrameRoute, type MessageBytes } from './frame-codec';
import type { DropReason, TransportHooks } from './hooks';
import { MessageQueue } from './message-queue';
import type { TransportLimits } from './options';
import { SEND_PATH, deserializeFrame, serializeFrame } from './peer-service';

/** Counters of one peer's message stream. */
export interface PeerSendStats {
  readonly sentMessages: number;
  readonly sentBytes: number;
  readonly sentBatches: number;
  readonly droppedMessages: number;
  readonly droppedQueueFull: number;
  readonly droppedTooLarge: number;
  /** Still queued maxQueuedAgeMs after they were sent (the peer was down or slow). */
  readonly droppedExpired: number;
  /** Streams opened after a failure. */
  readonly reconnects: number;
  readonly queuedMessages: number;
  readonly queuedBytes: number;
  readonly connected: boolean;
}

/** One open stream of frames to a peer: a gRPC client stream, or a frame stream on a socket. */
export interface FrameLink {
  /** Sends a frame given as pieces to write back to back; false when the stream wants no more until `onDrain`. */
  write(frame: readonly Uint8Array[], frameBytes: number): boolean;
  /** Ends the stream; frames not yet sent may be lost. */
  close(): void;
}

/** What a link reports, each asynchronously: open (writable), drained, ended (once, with why). */
export interface LinkEvents {
  onOpen(): void;
  onDrain(): void;
  onEnd(error: unknown): void;
}

/** Connects (bounded by its own timeout) and opens a stream; every outcome comes as an event. */
export type OpenLink = (events: LinkEvents) => FrameLink;

/** Frames on the peer service's gRPC `Send` stream (the frame stream's fallback). */
export function grpcLink(client: Client, connectTimeoutMs: number): OpenLink {
  return (events) => {
    let call: ClientWritableStream<Uint8Array> | undefined;
    let closed = false;
    client.waitForReady(Date.now() + connectTimeoutMs, (error) => {
      if (closed) return;
      if (error) {
        events.onEnd(error);
        return;
      }
      call = client.makeClientStreamRequest<Uint8Array, Buffer>(SEND_PATH, serializeFrame, deserializeFrame, new Metadata(), {}, (failure) => events.onEnd(failure ?? new Error('peer ended the message stream')));
      call.on('drain', () => events.onDrain());
      events.onOpen();
    });
    return {
      write: (frame) => call!.write(joinChunks(frame)),
      close: () => {
        closed = true;
        call?.end();
      },
    };
  };
}

export interface PeerSenderOptions {
  readonly peer: bigint;
  readonly route: FrameRoute;
  /** How a stream to the peer is opened. */
  readonly open: OpenLink;
  readonly limits: TransportLimits;
  readonly backoff: BackoffOptions;
  readonly hooks: TransportHooks;
  readonly random: () => number;
}

type State = 'idle' | 'connecting' | 'open' | 'waiting' | 'closed';

/**
 * One peer's outgoing messages: a bounded queue drained into a long-lived stream in batch frames.
 * `send` never blocks: when the queue is full (a slow or unreachable peer) the message is dropped
 * and counted. A failed stream is reopened after a jittered exponential backoff. Messages older
 * than maxQueuedAgeMs are dropped, not delivered: a member back after seconds down would otherwise
 * get every heartbeat of its absence at once, and the leader answers each heartbeat's response to
 * a probing follower with a MsgApp of up to a MiB (measured: 168 MiB in one turn, 1.2 s).
 */
export class PeerSender {
  private readonly queue: MessageQueue;
  private state: State = 'idle';
  private link: FrameLink | undefined;
  private writable = false;
  private flushScheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private openedAtMs = 0;
  /** When (performance.now()) a backoff was last cut short because the peer was heard from. */
  private heardRetryAtMs = Number.NEGATIVE_INFINITY;
  private readonly counters = { sentMessages: 0, sentBytes: 0, sentBatches: 0, droppedQueueFull: 0, droppedTooLarge: 0, droppedExpired: 0, reconnects: 0 };

  constructor(private readonly options: PeerSenderOptions) {
    this.queue = new MessageQueue(options.limits.maxQueuedMessages, options.limits.maxQueuedBytes);
  }

  /** Queues a message; false when it was dropped (queue full, too large, sender closed). */
  send(message: MessageBytes): boolean {
    if (this.state === 'closed') return this.drop(1, 'closed');
    if (byteLength(message) > this.options.limits.maxMessageBytes) return this.drop(1, 'too-large');
    if (!this.queue.push(message, performance.now())) return this.drop(1, 'queue-full');
    this.scheduleFlush();
    return true;
  }

  /** Opens the stream now if none is open or being opened, with nothing to send yet (a member dials its peers at start). */
  dial(): void {
    if (this.state === 'idle') this.connect();
  }

  /**
   * The peer was heard from (a batch came in): it is up. A stream waiting out its backoff is opened
   * now instead, at most once per backoff.maxMs (a peer that reaches this member while this member
   * cannot reach it costs one extra attempt per that interval, no more).
   */
  heardFrom(): void {
    if (this.state !== 'waiting') return;
    const now = performance.now();
    if (now - this.heardRetryAtMs < this.options.backoff.maxMs) return;
    this.heardRetryAtMs = now;
    clearTimeout(this.retryTimer);
    this.counters.reconnects++;
    this.options.hooks.onReconnect?.(this.options.peer, this.attempt, 0);
    this.connect();
  }

  stats(): PeerSendStats {
    const c = this.counters;
    return { ...c, droppedMessages: c.droppedQueueFull + c.droppedTooLarge + c.droppedExpired, queuedMessages: this.queue.length, queuedBytes: this.queue.queuedBytes, connected: this.state === 'open' };
  }

  /** Stops the stream and the retries; queued messages are dropped. */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    const dropped = this.queue.clear();
    if (dropped > 0) this.options.hooks.onDropped?.(this.options.peer, dropped, 'closed');
    this.link?.close();
    this.link = undefined;
  }

  private drop(count: number, reason: DropReason): false {
    if (reason === 'queue-full') this.counters.droppedQueueFull += count;
    else if (reason === 'too-large') this.counters.droppedTooLarge += count;
    else if (reason === 'expired') this.counters.droppedExpired += count;
    this.options.hooks.onDropped?.(this.options.peer, count, reason);
    return false;
  }

  /** Coalesces the sends of one event-loop turn into as few frames as possible. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.state === 'idle') this.connect();
    if (this.state !== 'open' || this.link === undefined) return;
    const { maxBatchMessages, maxBatchBytes, maxQueuedAgeMs } = this.options.limits;
    const expired = this.queue.dropQueuedBefore(performance.now() - maxQueuedAgeMs);
    if (expired > 0) this.drop(expired, 'expired');
    while (this.writable && this.queue.length > 0) {
      const batch = this.queue.take(maxBatchMessages, maxBatchBytes);
      const frame = encodeBatchPieces(this.options.route, batch);
      const frameBytes = byteLength(frame);
      this.writable = this.link.write(frame, frameBytes);
      this.counters.sentMessages += batch.length;
      this.counters.sentBytes += frameBytes;
      this.counters.sentBatches++;
      this.options.hooks.onSent?.(this.options.peer, batch.length, frameBytes);
    }
  }

  /** Opens a stream (its connection bounded by the link's timeout); a failure schedules a retry. */
  private connect(): void {
    this.state = 'connecting';
    const link: FrameLink = this.options.open({
      onOpen: () => {
        if (this.link !== link || this.state !== 'connecting') return;
        this.writable = true;
        this.state = 'open';
        this.openedAtMs = performance.now();
        this.scheduleFlush();
      },
      onDrain: () => {
        if (this.link !== link) return;
        this.writable = true;
        this.scheduleFlush();
      },
      onEnd: (error) => this.onStreamEnd(link, error),
    });
    this.link = link;
  }

  private onStreamEnd(link: FrameLink, error: unknown): void {
    if (this.link !== link || this.state === 'closed') return;
    this.link = undefined;
    this.writable = false;
    // A stream that lived longer than the longest backoff was healthy: start the backoff over.
    if (this.openedAtMs > 0 && performance.now() - this.openedAtMs > this.options.backoff.maxMs) this.attempt = 0;
    this.openedAtMs = 0;
    this.retry(error);
  }

  private retry(error: unknown): void {
    this.state = 'waiting';
    this.options.hooks.onUnreachable?.(this.options.peer, error);
    const delayMs = backoffDelayMs(this.options.backoff, this.attempt, this.options.random);
    this.attempt++;
    this.retryTimer = setTimeout(() => {
      if (this.state !== 'waiting') return;
      this.counters.reconnects++;
      this.options.hooks.onReconnect?.(this.options.peer, this.attempt, delayMs);
      this.connect();
    }, delayMs);
  }
}
