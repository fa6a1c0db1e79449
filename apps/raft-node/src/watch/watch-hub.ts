// Every Watch stream of this member, fed after each applied batch and snapshot install.
import { uint64ToNumber, type ResponseContext } from '@ward/etcd/api-mapping';
import type { Applier } from '@ward/etcd/apply';
import { status, type ServerDuplexStream } from '@grpc/grpc-js';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import type { NodeWatchRequest__Output, NodeWatchResponse } from '@ward/etcd/proto';
import type { Logger } from '@ward/platform/logging';
import { wireError } from '@ward/etcd/wire-errors';
import { WatchStream, type WatchStreamLimits } from './watch-stream';

export interface WatchHubOptions {
  readonly applier: () => Applier;
  readonly context: () => ResponseContext;
  readonly limits: WatchStreamLimits;
  readonly maxStreams: number;
  readonly progressIntervalMs: number;
  readonly logger: Logger;
}

type WatchCall = ServerDuplexStream<NodeWatchRequest__Output, NodeWatchResponse>;

export class WatchHub {
  /** Each live stream and how to end it. */
  private readonly streams = new Map<WatchStream, () => void>();
  private readonly progressTimer: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: WatchHubOptions) {
    this.progressTimer = setInterval(() => {
      for (const stream of this.streams.keys()) stream.progressTick();
    }, options.progressIntervalMs);
    this.progressTimer.unref();
  }

  get streamCount(): number {
    return this.streams.size;
  }

  get watcherCount(): number {
    let count = 0;
    for (const stream of this.streams.keys()) count += stream.watcherCount;
    return count;
  }

  /** New events were applied (or the state was replaced): every stream pages forward. */
  notify(): void {
    for (const stream of this.streams.keys()) stream.pump();
  }

  /** Serves one bidi Watch call until the client ends it or the member stops. */
  serve(call: WatchCall): Promise<void> {
    if (this.stopped || this.streams.size >= this.options.maxStreams) return Promise.reject(wireError('TooManyRequests'));
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (error?: Error): void => {
        if (done) return;
        done = true;
        stream.close();
        this.streams.delete(stream);
        if (error === undefined) resolve();
        else reject(error);
      };
      const stream = new WatchStream({
        applier: this.options.applier,
        context: this.options.context,
        limits: this.options.limits,
        write: (bytes) => call.write({ response: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }),
        fail: (error) => finish(error),
      });
      this.streams.set(stream, () => finish());
      call.on('drain', () => stream.drained());
      call.on('data', (message: NodeWatchRequest__Output) => {
        try {
          const identity = { username: message.username, authRevision: uint64ToNumber(message.auth_revision, 'NodeWatchRequest.auth_revision') };
          stream.handle(identity, message.request);
        } catch (error) {
          this.options.logger.warn({ err: error }, 'watch request refused');
          const carriesStatus = typeof (error as { grpcCode?: unknown }).grpcCode === 'number';
          finish(carriesStatus ? (error as Error) : new GrpcStatusError(status.INVALID_ARGUMENT, 'invalid watch request', { cause: error }));
        }
      });
      // A client half-close does not end the stream (etcd's recvLoop returns quietly on EOF and
      // the responses keep flowing until the client cancels).
      call.on('cancelled', () => finish());
      call.on('error', () => finish());
    });
  }

  /** Ends every stream (their calls complete normally). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.progressTimer);
    for (const finish of [...this.streams.values()]) finish();
  }
}
