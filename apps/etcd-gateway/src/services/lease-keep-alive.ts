// etcd's LeaseKeepAlive: a bidi stream where each request renews one lease at the leader and is
// answered {ID, TTL} (TTL 0 for an unknown or expired lease). Requests are handled one at a time
// in order, with the identity of the stream's token resolved for each (etcd checks every renewal);
// any error (permission denied, old auth revision, invalid token, no leader) ends the stream with
// that status, as in etcd. A stream is counted against its caller (StreamAccounting) before its
// first renewal, and one that sends none within the idle bound is closed.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { LeaseKeepAliveRequest__Output } from '@ward/etcd/proto';
import type { CallContext } from '@ward/platform/grpc-server';
import { wireError } from '@ward/etcd/wire-errors';
import { grpcCredentials } from '../identity/token-extraction';
import type { LeaseApi } from './lease-api';
import { admitStream, idleStreamError, type CallerNames, type StreamAccounting } from './stream-accounting';

export interface KeepAliveRelayOptions {
  readonly lease: LeaseApi;
  /** Client LeaseKeepAlive streams open at once, all callers together (the last resort). */
  readonly maxStreamsCount: number;
  /** Per-caller bounds on streams, shared with Watch. */
  readonly accounting: StreamAccounting;
  readonly identities: CallerNames;
  /** A stream that sends no renewal within this is closed (see idleStreamError). */
  readonly idleTimeoutMs: number;
}

type KeepAliveStream = ServerDuplexStream<LeaseKeepAliveRequest__Output, Buffer>;

export class KeepAliveRelay {
  private openCount = 0;

  constructor(private readonly options: KeepAliveRelayOptions) {}

  /** The gRPC handler of etcdserverpb.Lease/LeaseKeepAlive. Settles when the stream is done. */
  async handle(call: KeepAliveStream, context: CallContext): Promise<void> {
    if (this.openCount >= this.options.maxStreamsCount) throw wireError('TooManyRequests');
    const credentials = grpcCredentials(context);
    const slot = await admitStream(this.options.accounting, this.options.identities, context.peer, credentials, context.signal);
    if (call.cancelled || context.signal.aborted) return slot.release();
    if (this.openCount >= this.options.maxStreamsCount) {
      slot.release();
      throw wireError('TooManyRequests');
    }
    this.openCount += 1;
    let idle: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        let settled = false;
        let pending = 0;
        let ended = false;
        const finish = (error?: unknown): void => {
          if (settled) return;
          settled = true;
          if (error === undefined) resolve();
          else reject(error);
        };
        idle = setTimeout(() => finish(idleStreamError(this.options.idleTimeoutMs)), this.options.idleTimeoutMs);
        call.on('data', (request: LeaseKeepAliveRequest__Output) => {
          clearTimeout(idle);
          pending += 1;
          call.pause();
          this.options.lease.keepAlive(request, credentials, context.signal).then(
            (response) => {
              pending -= 1;
              if (settled) return;
              const flushed = call.write(response);
              if (ended && pending === 0) finish();
              // A client that does not read its answers is not sent more work (one renewal at a time).
              else if (flushed) call.resume();
              else call.once('drain', () => call.resume());
            },
            (error: unknown) => finish(error),
          );
        });
        call.on('end', () => {
          ended = true;
          if (pending === 0) finish();
        });
        call.on('cancelled', () => finish());
        call.on('error', () => finish());
      });
    } finally {
      clearTimeout(idle);
      slot.release();
      this.openCount -= 1;
    }
  }
}
