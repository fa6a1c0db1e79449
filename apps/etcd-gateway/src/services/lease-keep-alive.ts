// etcd's LeaseKeepAlive: a bidi stream where each request renews one lease at the leader and is
// answered {ID, TTL} (TTL 0 for an unknown or expired lease). Requests are handled one at a time
// in order, with the identity of the stream's token resolved for each (etcd checks every renewal);
// any error (permission denied, old auth revision, invalid token, no leader) ends the stream with
// that status, as in etcd.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { LeaseKeepAliveRequest__Output } from '@ward/etcd/proto';
import type { CallContext } from '@ward/platform/grpc-server';
import { wireError } from '@ward/etcd/wire-errors';
import { grpcCredentials } from '../identity/token-extraction';
import type { LeaseApi } from './lease-api';

export interface KeepAliveRelayOptions {
  readonly lease: LeaseApi;
  readonly maxStreamsCount: number;
}

type KeepAliveStream = ServerDuplexStream<LeaseKeepAliveRequest__Output, Buffer>;

export class KeepAliveRelay {
  private openCount = 0;

  constructor(private readonly options: KeepAliveRelayOptions) {}

  /** The gRPC handler of etcdserverpb.Lease/LeaseKeepAlive. Settles when the stream is done. */
  async handle(call: KeepAliveStream, context: CallContext): Promise<void> {
    if (this.openCount >= this.options.maxStreamsCount) throw wireError('TooManyRequests');
    this.openCount += 1;
    const credentials = grpcCredentials(call.metadata, context);
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
        call.on('data', (request: LeaseKeepAliveRequest__Output) => {
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
      this.openCount -= 1;
    }
  }
}
