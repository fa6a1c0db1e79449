import { Metadata, type Client, type ClientWritableStream } from '@grpc/grpc-js';
import { backoffDelayMs, type BackoffOptions } from './backoff';
import { encodeBatch, type FrameRoute } from './frame-codec';
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
  /** Streams opened after a failure. */
  readonly reconnects: number;
  readonly queuedMessages: number;
  readonly queuedBytes: number;
  readonly connected: boolean;
}

export interface PeerSenderOptions {
  readonly peer: bigint;
  readonly route: FrameRoute;
  readonly client: Client;
  readonly limits: TransportLimits;
  readonly backoff: BackoffOptions;
  /** How long to wait for a connection before counting an attempt as failed. */
  readonly connectTimeoutMs: number;
  readonly hooks: TransportHooks;
  readonly random: () => number;
}

type State = 'idle' | 'connecting' | 'open' | 'waiting' | 'closed';

/**
 * One peer's outgoing messages: a bounded queue drained into a long-lived client stream in batch
 * frames. `send` never blocks: when the queue is full (a slow or unreachable peer) the message is
 * dropped and counted. A failed stream is reopened after a jittered exponential backoff.
 */
export class PeerSender {
  private readonly queue: MessageQueue;
  private state: State = 'idle';
  private call: ClientWritableStream<Uint8Array> | undefined;
  private writable = false;
  private flushScheduled = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private openedAtMs = 0;
  private readonly counters = { sentMessages: 0, sentBytes: 0, sentBatches: 0, droppedQueueFull: 0, droppedTooLarge: 0, reconnects: 0 };

  constructor(private readonly options: PeerSenderOptions) {
    this.queue = new MessageQueue(options.limits.maxQueuedMessages, options.limits.maxQueuedBytes);
  }

  /** Queues a message; false when it was dropped (queue full, too large, sender closed). */
  send(message: Uint8Array): boolean {
    if (this.state === 'closed') return this.drop(1, 'closed');
    if (message.length > this.options.limits.maxMessageBytes) return this.drop(1, 'too-large');
    if (!this.queue.push(message)) return this.drop(1, 'queue-full');
    this.scheduleFlush();
    return true;
  }

  stats(): PeerSendStats {
    const c = this.counters;
    return { ...c, droppedMessages: c.droppedQueueFull + c.droppedTooLarge, queuedMessages: this.queue.length, queuedBytes: this.queue.queuedBytes, connected: this.state === 'open' };
  }

  /** Stops the stream and the retries; queued messages are dropped. */
  close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    const dropped = this.queue.clear();
    if (dropped > 0) this.options.hooks.onDropped?.(this.options.peer, dropped, 'closed');
    this.call?.end();
    this.call = undefined;
  }

  private drop(count: number, reason: DropReason): false {
    if (reason === 'queue-full') this.counters.droppedQueueFull += count;
    else if (reason === 'too-large') this.counters.droppedTooLarge += count;
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
    if (this.state !== 'open' || this.call === undefined) return;
    const { maxBatchMessages, maxBatchBytes } = this.options.limits;
    while (this.writable && this.queue.length > 0) {
      const batch = this.queue.take(maxBatchMessages, maxBatchBytes);
      const frame = encodeBatch(this.options.route, batch);
      this.writable = this.call.write(frame);
      this.counters.sentMessages += batch.length;
      this.counters.sentBytes += frame.length;
      this.counters.sentBatches++;
      this.options.hooks.onSent?.(this.options.peer, batch.length, frame.length);
    }
  }

  /** Waits (bounded) for a connection, then opens the stream; a failure schedules a retry. */
  private connect(): void {
    this.state = 'connecting';
    this.options.client.waitForReady(Date.now() + this.options.connectTimeoutMs, (error) => {
      if (this.state !== 'connecting') return;
      if (error) this.retry(error);
      else this.openStream();
    });
  }

  private openStream(): void {
    const call = this.options.client.makeClientStreamRequest<Uint8Array, Buffer>(
      SEND_PATH,
      serializeFrame,
      deserializeFrame,
      new Metadata(),
      {},
      (error) => this.onStreamEnd(call, error ?? new Error('peer ended the message stream')),
    );
    call.on('drain', () => {
      if (this.call !== call) return;
      this.writable = true;
      this.scheduleFlush();
    });
    this.call = call;
    this.writable = true;
    this.state = 'open';
    this.openedAtMs = performance.now();
    this.scheduleFlush();
  }

  private onStreamEnd(call: ClientWritableStream<Uint8Array>, error: unknown): void {
    if (this.call !== call || this.state === 'closed') return;
    this.call = undefined;
    this.writable = false;
    // A stream that lived longer than the longest backoff was healthy: start the backoff over.
    if (performance.now() - this.openedAtMs > this.options.backoff.maxMs) this.attempt = 0;
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
