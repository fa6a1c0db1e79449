// etcd's Watch, relayed: one internal stream to a raft-node per client stream that creates a
// watcher. Client messages travel as the bytes the client sent, each tagged with the caller's
// identity (resolved from the stream's token at every create, as etcd does); the raft-node
// implements watch semantics and the permission check at creation, and its responses travel back
// as bytes. Before anything is spent, a stream is counted against its connection and its caller
// (StreamAccounting); the internal stream is opened by the first create, and a stream that creates
// nothing within the idle bound is closed. Creates refused here are answered the way etcd answers
// them, on the stream, which stays open: an invalid token, and a create beyond the watcher bounds.
import { status as Status, type ClientDuplexStream, type ServerDuplexStream } from '@grpc/grpc-js';
import type { CallContext, Cancellation } from '@ward/platform/grpc-server';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { etcdMessageType, type NodeStatusResponse__Output, type NodeWatchRequest, type NodeWatchResponse__Output } from '@ward/etcd/proto';
import { goStatusString, isWireError, wireError, wireErrorNameByMessage, WIRE_ERRORS, type WireErrorName } from '@ward/etcd/wire-errors';
import { discardStream } from '../cluster/cluster-client';
import type { Credentials, Identity } from '../identity/identity';
import type { IdentityResolver } from '../identity/identity-resolver';
import { grpcCredentials } from '../identity/token-extraction';
import { responseHeaderOf } from './response-header';
import { admitStream, idleStreamError, type StreamAccounting, type StreamSlot } from './stream-accounting';
import { watchResponseFlags } from './watch-response-flags';

export interface WatchRelayOptions {
  readonly openStream: () => Promise<ClientDuplexStream<NodeWatchRequest, NodeWatchResponse__Output>>;
  readonly identities: IdentityResolver;
  readonly status: (signal?: Cancellation) => Promise<NodeStatusResponse__Output>;
  /** Client Watch streams open at once, all callers together (the last resort). */
  readonly maxStreamsCount: number;
  /** Per-caller bounds on streams and watchers, shared with LeaseKeepAlive. */
  readonly accounting: StreamAccounting;
  /** A stream that asks for no watcher within this is closed (see idleStreamError). */
  readonly idleTimeoutMs: number;
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

  /**
   * The gRPC handler of etcdserverpb.Watch/Watch. Settles when the client stream is done. The
   * stream is counted against its caller before anything else is spent on it; the member stream
   * is opened only by the first create that needs it.
   */
  async handle(call: ClientStream, context: CallContext): Promise<void> {
    if (this.openCount >= this.options.maxStreamsCount) throw wireError('TooManyRequests');
    const credentials = grpcCredentials(context);
    const slot = await admitStream(this.options.accounting, this.options.identities, context.peer, credentials, context.signal);
    if (call.cancelled || context.signal.aborted) {
      slot.release();
      return;
    }
    if (this.openCount >= this.options.maxStreamsCount) {
      slot.release();
      throw wireError('TooManyRequests');
    }
    this.openCount += 1;
    this.options.onStreamsChange?.(this.openCount);
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      let node: NodeStream | undefined;
      const idle = setTimeout(() => finish(idleStreamError(this.options.idleTimeoutMs)), this.options.idleTimeoutMs);
      const finish = (error?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(idle);
        slot.release();
        this.openCount -= 1;
        this.options.onStreamsChange?.(this.openCount);
        node?.cancel();
        if (error === undefined) resolve();
        else reject(error);
      };
      const stream: RelayedStream = {
        call,
        context,
        credentials,
        slot,
        finish,
        get node() {
          return node;
        },
        busy: () => clearTimeout(idle),
        openNode: async () => {
          const opened = await this.options.openStream();
          if (settled) {
            discardStream(opened);
            return undefined;
          }
          node = opened;
          this.pipeNodeToClient(stream, opened);
          return opened;
        },
      };
      this.pipeClientToNode(stream);
      call.on('cancelled', () => finish());
    });
  }

  private pipeNodeToClient({ call, slot, finish, context }: RelayedStream, node: NodeStream): void {
    node.on('data', (message: NodeWatchResponse__Output) => {
      // A canceled response ends one watcher, or refuses one create: either way a slot is free.
      if (watchResponseFlags(message.response).canceled) slot.removeWatcher();
      if (!call.write(message.response)) {
        node.pause();
        call.once('drain', () => node.resume());
      }
    });
    node.on('end', () => finish());
    node.on('error', (error: { code?: number; details?: string }) => {
      if (error.code === Status.CANCELLED) return finish();
      // The member's own etcd error (e.g. `too many requests` for a client that does not read)
      // reaches the client as the member said it; anything else is the member failing.
      const name = memberWireError(error);
      if (name !== undefined) return finish(wireError(name));
      context.logger.warn({ code: error.code }, 'internal watch stream failed');
      finish(wireError('Unhealthy'));
    });
  }

  private pipeClientToNode(stream: RelayedStream): void {
    const { call, context, credentials, slot, finish } = stream;
    let identity: Identity = { username: '', authRevision: 0 };
    const forward = async (bytes: Buffer): Promise<void> => {
      let node = stream.node;
      if (isCreateRequest(bytes)) {
        stream.busy();
        try {
          identity = await this.options.identities.identify(credentials, context.signal, { fresh: true });
        } catch (error) {
          if (!isWireError(error, 'InvalidAuthToken')) throw error;
          call.write(await this.refusedCreate(context.signal, 'InvalidAuthToken'));
          return;
        }
        // Refused here, as the member refuses a create beyond its own bound; the stream stays open.
        if (!slot.addWatcher()) {
          call.write(await this.refusedCreate(context.signal, 'TooManyRequests'));
          return;
        }
        node ??= await stream.openNode();
      }
      // Before the first create there is no watcher: a progress request or a cancel has nothing
      // to act on, and the member answers neither.
      if (node === undefined || node.writableEnded || node.destroyed) return;
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
    call.on('end', () => {
      // A half-close with no member stream leaves nothing that could still answer.
      if (stream.node === undefined) finish();
      else stream.node.end();
    });
    call.on('error', () => finish());
  }

  /** etcd's answer to a create refused before the member: created and canceled at once, watch id -1. */
  private async refusedCreate(signal: AbortSignal, reason: 'InvalidAuthToken' | 'TooManyRequests'): Promise<object> {
    return {
      header: responseHeaderOf(await this.options.status(signal)),
      watch_id: '-1',
      created: true,
      canceled: true,
      cancel_reason: goStatusString(reason),
    };
  }
}

/** One client stream being relayed, as the two pipes see it. */
interface RelayedStream {
  readonly call: ClientStream;
  readonly context: CallContext;
  readonly credentials: Credentials;
  readonly slot: StreamSlot;
  readonly finish: (error?: unknown) => void;
  /** The member stream, once the first create opened it. */
  readonly node: NodeStream | undefined;
  /** The client asked for work: the stream is not idle. */
  busy(): void;
  /** Opens the member stream (undefined when the client left meanwhile). */
  openNode(): Promise<NodeStream | undefined>;
}

/** The etcd error a member ended its stream with, when its code and text are etcd's. */
function memberWireError(error: { code?: number; details?: string }): WireErrorName | undefined {
  const name = wireErrorNameByMessage(error.details ?? '');
  return name !== undefined && WIRE_ERRORS[name].code === error.code ? name : undefined;
}
