// etcd's Watch, relayed: one internal stream to a raft-node per client stream. Client messages
// travel as the bytes the client sent, each tagged with the caller's identity (resolved from the
// stream's token at every create, as etcd does); the raft-node implements watch semantics and
// the permission check at creation, and its responses travel back as bytes. Only a create whose
// token is invalid is answered here, the way etcd answers it: on the stream, which stays open.
import { status as Status, type ClientDuplexStream, type ServerDuplexStream } from '@grpc/grpc-js';
import type { CallContext } from '@ward/platform/grpc-server';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { etcdMessageType, type NodeStatusResponse__Output, type NodeWatchRequest, type NodeWatchResponse__Output } from '@ward/etcd/proto';
import { goStatusString, isWireError, wireError } from '@ward/etcd/wire-errors';
import { discardStream } from '../cluster/cluster-client';
import type { Credentials, Identity } from '../identity/identity';
import type { IdentityResolver } from '../identity/identity-resolver';
import { grpcCredentials } from '../identity/token-extraction';
import { responseHeaderOf } from './response-header';

export interface WatchRelayOptions {
  readonly openStream: () => Promise<ClientDuplexStream<NodeWatchRequest, NodeWatchResponse__Output>>;
  readonly identities: IdentityResolver;
  readonly status: (signal?: AbortSignal) => Promise<NodeStatusResponse__Output>;
  readonly maxStreamsCount: number;
  /** Told the number of open streams whenever it changes (metrics). */
  readonly onStreamsChange?: (count: number) => void;
}

type ClientStream = ServerDuplexStream<Buffer, Buffer | object>;
type NodeStream = ClientDuplexStream<NodeWatchRequest, NodeWatchResponse__Output>;

/** Whether the encoded WatchRequest is a create (the only kind that needs an identity check). */
function isCreateRequest(bytes: Buffer): boolean {
  try {
    const message = etcdMessageType('etcdserverpb.WatchRequest').decode(bytes) as { create_request?: unknown };
    return message.create_request !== undefined && message.create_request !== null;
  } catch {
    throw new GrpcStatusError(Status.INTERNAL, 'grpc: error unmarshalling request');
  }
}

/** Resolves once `stream` drained its write buffer, or can no longer be written. */
function writable(stream: NodeStream): Promise<void> {
  return new Promise((resolve) => {
    const events = ['drain', 'error', 'close', 'finish'] as const;
    const done = (): void => {
      for (const event of events) stream.off(event, done);
      resolve();
    };
    for (const event of events) stream.once(event, done);
  });
}

export class WatchRelay {
  private openCount = 0;

  constructor(private readonly options: WatchRelayOptions) {}

  get openStreamsCount(): number {
    return this.openCount;
  }

  /** The gRPC handler of etcdserverpb.Watch/Watch. Settles when the client stream is done. */
  async handle(call: ClientStream, context: CallContext): Promise<void> {
    if (this.openCount >= this.options.maxStreamsCount) throw wireError('TooManyRequests');
    this.openCount += 1;
    this.options.onStreamsChange?.(this.openCount);
    let node: NodeStream;
    try {
      node = await this.options.openStream();
    } catch (error) {
      this.openCount -= 1;
      this.options.onStreamsChange?.(this.openCount);
      throw error;
    }
    if (call.cancelled || context.signal.aborted) {
      // The client left while the internal stream was being opened: its 'cancelled' is past.
      discardStream(node);
      this.openCount -= 1;
      this.options.onStreamsChange?.(this.openCount);
      return;
    }
    const credentials = grpcCredentials(call.metadata, context);
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (error?: unknown): void => {
        if (settled) return;
        settled = true;
        this.openCount -= 1;
        this.options.onStreamsChange?.(this.openCount);
        node.cancel();
        if (error === undefined) resolve();
        else reject(error);
      };
      this.pipeNodeToClient(node, call, finish, context);
      this.pipeClientToNode(call, node, credentials, finish, context);
      call.on('cancelled', () => finish());
    });
  }

  private pipeNodeToClient(node: NodeStream, call: ClientStream, finish: (error?: unknown) => void, context: CallContext): void {
    node.on('data', (message: NodeWatchResponse__Output) => {
      if (!call.write(message.response)) {
        node.pause();
        call.once('drain', () => node.resume());
      }
    });
    node.on('end', () => finish());
    node.on('error', (error: { code?: number; details?: string }) => {
      if (error.code === Status.CANCELLED) return finish();
      context.logger.warn({ code: error.code }, 'internal watch stream failed');
      finish(wireError('Unhealthy'));
    });
  }

  private pipeClientToNode(call: ClientStream, node: NodeStream, credentials: Credentials, finish: (error?: unknown) => void, context: CallContext): void {
    let identity: Identity = { username: '', authRevision: 0 };
    const forward = async (bytes: Buffer): Promise<void> => {
      if (isCreateRequest(bytes)) {
        try {
          identity = await this.options.identities.identify(credentials, context.signal, { fresh: true });
        } catch (error) {
          if (!isWireError(error, 'InvalidAuthToken')) throw error;
          call.write(await this.refusedCreate(context.signal));
          return;
        }
      }
      if (node.writableEnded || node.destroyed) return;
      // The client is read again only once the member takes more: a member that falls behind
      // holds the client back instead of the gateway buffering its requests without bound.
      if (!node.write({ username: identity.username, auth_revision: identity.authRevision, request: bytes })) await writable(node);
    };
    call.on('data', (bytes: Buffer) => {
      call.pause();
      forward(bytes).then(
        () => call.resume(),
        (error: unknown) => finish(error),
      );
    });
    call.on('end', () => node.end());
    call.on('error', () => finish());
  }

  /** etcd's answer to a create whose token is invalid: created and canceled at once, watch id -1. */
  private async refusedCreate(signal: AbortSignal): Promise<object> {
    return {
      header: responseHeaderOf(await this.options.status(signal)),
      watch_id: '-1',
      created: true,
      canceled: true,
      cancel_reason: goStatusString('InvalidAuthToken'),
    };
  }
}
