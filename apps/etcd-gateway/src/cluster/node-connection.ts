// Three grpc-js channels to one raft-node's internal API (wardnode.Node) and one framed Exchange
// connection (Propose, Read, ReadIndex and AuthCheck without HTTP/2: exchange-frames.ts). The
// channels: one for the unary calls (and the Exchange stream when GATEWAY_NODE_EXCHANGE=grpc), one for the
// long-lived streams (Watch, WatchLeader, Follow), one for Snapshot streams. Each channel has a
// subchannel pool of its own, so each is its own HTTP/2 connection: streams can neither use up the
// member's per-connection stream limit (RAFT_NODE_MAX_GRPC_STREAMS_COUNT) that unary calls need,
// nor hold the connection's flow-control window while Propose and Read wait behind them. The
// snapshot channel grants the member a larger flow-control window (SNAPSHOT_FLOW_CONTROL_WINDOW_BYTES)
// than the other two; it connects on the first Snapshot only.
import { connectivityState, credentials, Metadata, status as Status, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import { wardNodeGrpc, type AuthCheckResponse__Output, type NodeClient, type NodeResponse__Output } from '@ward/etcd/proto';
import { NodeExchange, type ExchangeCallKind, type ExchangeStream } from './node-exchange';
import { framedExchange } from './exchange-frames';
import { isForeignFramedStream, type Cancellation, type TlsMaterial } from '@ward/platform/grpc-server';

/** A framed Exchange connection not up within this fails its calls (UNAVAILABLE): grpc-js's own connect timeout is 20 s. */
const EXCHANGE_CONNECT_TIMEOUT_MS = 5_000;

export interface NodeConnectionOptions {
  /** Largest answer accepted from a node (a big Range). */
  readonly maxReceiveBytes: number;
  /** Largest request sent to a node (an entry plus framing). */
  readonly maxSendBytes: number;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  /** TLS with the gateway's certificate when the raft-nodes take only mutual TLS; default plaintext. */
  readonly credentials?: ChannelCredentials;
  /** The same certificate, key and CA, for the framed Exchange's connections. */
  readonly tls?: TlsMaterial;
  /**
   * How the Exchange travels: `frames`, a plain connection to the API port (about half the CPU of
   * a grpc-js stream per message, and no HTTP/2 write turn); `grpc`, a grpc-js stream on the
   * unary channel. Default `frames`, which turns to `grpc` for a member that does not take framed
   * streams (one that predates them).
   */
  readonly exchangeTransport?: ExchangeTransport;
}

export type ExchangeTransport = 'frames' | 'grpc';

/** The unary methods of wardnode.Node. */
export type NodeUnaryMethod = 'Propose' | 'Read' | 'AuthCheck' | 'ResolveToken' | 'Status' | 'MemberList' | 'MemberChange' | 'Lease' | 'Maintain';

/** Unary methods that change no replicated state: asked again elsewhere when abandoned. */
const IDEMPOTENT_METHODS: ReadonlySet<NodeUnaryMethod> = new Set(['Read', 'AuthCheck', 'ResolveToken', 'Status', 'MemberList', 'Lease']);

type UnaryFunction = (
  request: unknown,
  metadata: Metadata,
  options: { deadline: number },
  callback: (error: ServiceError | null, value?: unknown) => void,
) => { cancel(): void };

/** True when a grpc-js error says the call failed in transport (no answer from the node's code). */
export function isTransportFailure(error: unknown): error is ServiceError {
  const code = (error as { code?: unknown } | null)?.code;
  return code === Status.UNAVAILABLE || code === Status.DEADLINE_EXCEEDED || code === Status.CANCELLED || code === Status.INTERNAL;
}

/** Which of a member's three channels. */
export type ChannelKind = 'unary' | 'streams' | 'snapshots';

export class NodeConnection {
  /** The channel of unary calls. */
  readonly client: NodeClient;
  /** The channel of Watch, WatchLeader and Follow streams, on a connection of its own. */
  readonly streamClient: NodeClient;
  /** The channel of Snapshot streams, on a connection of its own with a larger flow-control window. */
  readonly snapshotClient: NodeClient;
  /** Propose, Read, ReadIndex and AuthCheck, multiplexed on one stream of the unary channel (the request path's hot calls). */
  private readonly exchange: NodeExchange;
  /** How the Exchange travels now: `frames` until the member turns out to predate them. */
  private exchangeTransportValue: ExchangeTransport;
  /** False once the member refused an Exchange AuthCheck (it predates it): the unary call then. */
  private exchangeServesAuthCheck = true;
  /** Unary calls in flight that may be asked again elsewhere (see abandonIdempotent). */
  private readonly idempotentCalls = new Set<{ cancel(): void }>();
  /** Calls waiting for this member's channel to connect (see waitReady); abandonIdempotent ends the waits. */
  private readonly readyWaits = new Set<(ready: boolean) => void>();

  constructor(
    readonly address: string,
    options: NodeConnectionOptions,
  ) {
    this.client = nodeClient(address, options, 'unary');
    this.streamClient = nodeClient(address, options, 'streams');
    this.snapshotClient = nodeClient(address, options, 'snapshots');
    this.exchangeTransportValue = options.exchangeTransport ?? 'frames';
    const openFramed = framedExchange(address, {
      tls: options.tls ?? null,
      maxReceiveBytes: options.maxReceiveBytes,
      connectTimeoutMs: EXCHANGE_CONNECT_TIMEOUT_MS,
    });
    const openExchange = (): ExchangeStream => {
      if (this.exchangeTransportValue === 'grpc') return this.client.Exchange() as unknown as ExchangeStream;
      const stream = openFramed();
      // A member older than the framed Exchange answers the connection as gRPC (or refuses its
      // ALPN id): the gRPC stream from then on, as with AuthCheck below. The calls of the failed
      // stream were never served there (NodeExchange fails them as such: sent again at once).
      stream.on('error', (error: Error) => {
        if (isForeignFramedStream(error)) this.exchangeTransportValue = 'grpc';
      });
      return stream;
    };
    this.exchange = new NodeExchange(openExchange, { maxSendBytes: options.maxSendBytes, nowMs: Date.now });
  }

  /**
   * AuthCheck on the member's Exchange stream, answered as the unary AuthCheck would. A member older
   * than the Exchange's `auth_check` call refuses it (INVALID_ARGUMENT, served nothing): it is asked
   * with the unary call then and from then on, so gateways can be upgraded before the members.
   */
  async authCheck(name: string, deadlineMs: number, signal?: Cancellation): Promise<AuthCheckResponse__Output> {
    if (this.exchangeServesAuthCheck) {
      try {
        const answer = await this.exchange.call({ auth_check: { name } }, deadlineMs, signal);
        if (answer.result === 'auth_check') return { check: answer.auth_check, result: 'check' };
        if (answer.result === 'not_leader') return { not_leader: answer.not_leader, result: 'not_leader' };
        return { error: answer.error ?? null, result: 'error' };
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code !== Status.INVALID_ARGUMENT) throw error;
        this.exchangeServesAuthCheck = false;
      }
    }
    return this.call<AuthCheckResponse__Output>('AuthCheck', { name }, deadlineMs, signal);
  }

  /** A Propose, Read or ReadIndex on the member's Exchange stream; rejects like `call` (grpc-js status codes). */
  exchangeCall(call: ExchangeCallKind, deadlineMs: number, signal?: Cancellation): Promise<NodeResponse__Output> {
    return this.exchange.call(call, deadlineMs, signal);
  }

  /** How the Exchange travels to this member now (for tests and logs). */
  get exchangeTransport(): ExchangeTransport {
    return this.exchangeTransportValue;
  }

  /**
   * Resolves true when the channel is connected (a call sent now reaches the node), false as soon
   * as a connection attempt fails or `deadlineMs` (epoch ms) passes: a request not sent is safe to
   * send elsewhere. grpc-js keeps reconnecting in the background (backoff ≤ 2 s). Also false
   * once abandonIdempotent is called (another member leads now).
   */
  waitReady(deadlineMs: number, kind: ChannelKind = 'unary'): Promise<boolean> {
    const channel = this.clientOf(kind).getChannel();
    return new Promise((resolve) => {
      let settled = false;
      const settle = (ready: boolean): void => {
        if (settled) return;
        settled = true;
        this.readyWaits.delete(settle);
        resolve(ready);
      };
      const check = (): void => {
        if (settled) return;
        const state = channel.getConnectivityState(true);
        if (state === connectivityState.READY) return settle(true);
        if (state === connectivityState.TRANSIENT_FAILURE || state === connectivityState.SHUTDOWN || Date.now() >= deadlineMs) return settle(false);
        channel.watchConnectivityState(state, deadlineMs, (error) => (error ? settle(false) : check()));
      };
      check();
      // A connected channel (every call's case but after a member's loss) settles at once.
      if (!settled) this.readyWaits.add(settle);
    });
  }

  private clientOf(kind: ChannelKind): NodeClient {
    if (kind === 'unary') return this.client;
    return kind === 'streams' ? this.streamClient : this.snapshotClient;
  }

  /** One unary call with an absolute deadline; the signal cancels it. Rejects with grpc-js's ServiceError. */
  call<Res>(method: NodeUnaryMethod, request: object, deadlineMs: number, signal?: Cancellation): Promise<Res> {
    const fn = (this.client as unknown as Record<string, UnaryFunction>)[method]!.bind(this.client);
    return new Promise<Res>((resolve, reject) => {
      if (signal?.aborted) {
        reject(Object.assign(new Error('cancelled before sending'), { code: Status.CANCELLED, details: 'cancelled' }));
        return;
      }
      const onAbort = (): void => call.cancel();
      const idempotent = IDEMPOTENT_METHODS.has(method);
      const call = fn(request, new Metadata(), { deadline: deadlineMs }, (error, value) => {
        signal?.removeEventListener('abort', onAbort);
        if (idempotent) this.idempotentCalls.delete(call);
        if (error) reject(error);
        else resolve(value as Res);
      });
      if (idempotent) this.idempotentCalls.add(call);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Another member leads now: the calls in flight here that may be asked again fail at once as
   * transport failures (the cluster client retries them at the leader) instead of waiting for a
   * member that may have gone silent. Proposals and membership changes keep waiting: they may
   * have reached the log, and only their answer tells. Calls of any kind still waiting for this
   * member's channel to connect (waitReady) were not sent: they go elsewhere at once.
   */
  abandonIdempotent(): void {
    const calls = [...this.idempotentCalls];
    this.idempotentCalls.clear();
    for (const call of calls) call.cancel();
    // Calls not sent yet, whatever they are, go elsewhere now rather than wait for a silent member's connection.
    for (const settle of [...this.readyWaits]) settle(false);
    this.exchange.abandonReads();
  }

  close(): void {
    this.exchange.close();
    this.client.close();
    this.streamClient.close();
    this.snapshotClient.close();
  }
}

/**
 * The HTTP/2 flow-control window (per stream and for the connection) that the snapshot channel
 * grants the member, instead of HTTP/2's 64 KiB: with 64 KiB a Snapshot stream of 32 KiB messages
 * waits for a window update every two messages, a turn of both processes each time. Bounds what a
 * member may send ahead of a client that reads slowly: 4 MiB per member connection. The Watch
 * streams keep 64 KiB: the member bounds what a watcher leaves unread by what its stream takes,
 * and a larger window would let a client that reads nothing take far more.
 */
const SNAPSHOT_FLOW_CONTROL_WINDOW_BYTES = 4 * 1024 * 1024;

function nodeClient(address: string, options: NodeConnectionOptions, kind: ChannelKind): NodeClient {
  const Node = wardNodeGrpc().Node;
  return new Node(address, options.credentials ?? credentials.createInsecure(), {
    'grpc.max_receive_message_length': options.maxReceiveBytes,
    'grpc.max_send_message_length': options.maxSendBytes,
    'grpc.keepalive_time_ms': options.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': options.keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
    // Reconnect quickly after a node restarts (grpc-js defaults to 1 s initial, 120 s max).
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 2000,
    // Our own retry loop decides what may be retried.
    'grpc.enable_retries': 0,
    // No channelz service reads them: skip its per-call trackers.
    'grpc.enable_channelz': 0,
    // A pool of its own: never the subchannel (the connection) of the member's other channel.
    'grpc.use_local_subchannel_pool': 1,
    // Names the channel's use; as a distinct option it also keeps the channels apart.
    'grpc.primary_user_agent': `ward-etcd-gateway-${kind}`,
    ...(kind === 'snapshots' ? { 'grpc-node.flow_control_window': SNAPSHOT_FLOW_CONTROL_WINDOW_BYTES } : {}),
  });
}
