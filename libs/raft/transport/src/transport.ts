import type { Duplex } from 'node:stream';
import type { ChannelCredentials, Client, ServiceDefinition } from '@grpc/grpc-js';
import type { ServiceHandlers, TlsMaterial } from '@ward/platform/grpc-server';
import type { BackoffOptions } from './backoff';
import { createPeerClient } from './channel';
import { SnapshotBusyError, TransportClosedError, UnknownPeerError } from './errors';
import type { TransportHooks } from './hooks';
import { DEFAULT_KEEPALIVE, maxFrameBytes, resolveBackoff, resolveLimits, type KeepaliveOptions, type TransportLimits } from './options';
import { createPeerService, type PeerReceiver, type ReceiveStats } from './peer-receiver';
import type { MessageBytes } from './frame-codec';
import { frameStreamLink } from './frame-stream';
import { PeerSender, grpcLink, type PeerSendStats } from './peer-sender';
import { sendSnapshotStream } from './snapshot-sender';

export interface PeerTransportOptions {
  /** This member's id (a uint64; 0 is not a member id). */
  readonly localId: bigint;
  /** Frames from another cluster are refused. Default 0. */
  readonly clusterId?: bigint;
  /** Where received batches and snapshots go. */
  readonly receiver: PeerReceiver;
  /** Initial peers: member id → `host:port`. */
  readonly peers?: Iterable<readonly [bigint, string]>;
  readonly limits?: Partial<TransportLimits>;
  readonly backoff?: Partial<BackoffOptions>;
  readonly keepalive?: Partial<KeepaliveOptions>;
  /** Wait for a connection this long before counting an attempt as failed. Default 2,000 ms. */
  readonly connectTimeoutMs?: number;
  /** How to reach peers over gRPC (snapshots; messages too without the frame stream): e.g. TLS with this member's certificate; default plaintext. */
  readonly credentials?: ChannelCredentials;
  /**
   * Send messages on the frame stream (frame-stream.ts) instead of the peer service's gRPC `Send`
   * stream. Default true. Every peer port accepts both; turn it off while members of a version
   * without it are still in the cluster.
   */
  readonly frameStream?: boolean;
  /** TLS of the frame stream: the material behind `credentials`. Required with TLS `credentials`; without it messages stay on gRPC. */
  readonly frameStreamTls?: TlsMaterial;
  readonly hooks?: TransportHooks;
  /** Randomness for backoff jitter, a float in [0, 1). Default Math.random. */
  readonly random?: () => number;
}

export interface PeerStats extends PeerSendStats {
  readonly peer: bigint;
  readonly address: string;
  readonly snapshotsSent: number;
}

export interface TransportStats {
  readonly peers: readonly PeerStats[];
  readonly received: Readonly<ReceiveStats>;
}

interface Peer {
  readonly address: string;
  readonly sender: PeerSender;
  /** The gRPC connection of messages, when they do not travel on the frame stream. */
  readonly client: Client | undefined;
  /** A separate connection for snapshots, so a large transfer does not hold up messages. */
  readonly snapshotClient: Client;
  snapshotInFlight: boolean;
  snapshotsSent: number;
}

/**
 * Raft's peer transport: opaque message bytes to member ids, batched into frames on one
 * long-lived stream per peer (the frame stream on its own TCP or TLS connection, or gRPC's `Send`), with a bounded queue per peer (drop and count beyond it: a slow
 * peer never blocks the sender or the others), reconnects with jittered exponential backoff, and
 * snapshots streamed in chunks on their own gRPC connection. Serve `service` on the peer port to
 * receive (startPeerServer).
 */
export class PeerTransport {
  /** The peer service: register it on this member's peer gRPC server. */
  readonly service: { readonly definition: ServiceDefinition; readonly handlers: ServiceHandlers; readonly frameStream: (socket: Duplex) => void };
  readonly limits: TransportLimits;
  private readonly peers = new Map<bigint, Peer>();
  private readonly receiveStats: ReceiveStats;
  private readonly backoff: BackoffOptions;
  private readonly keepalive: KeepaliveOptions;
  private readonly hooks: TransportHooks;
  private readonly connectTimeoutMs: number;
  /** Messages go on the frame stream (decided once from the options), else on gRPC's Send. */
  private readonly onFrameStream: boolean;
  private closed = false;

  constructor(private readonly options: PeerTransportOptions) {
    if (typeof options.localId !== 'bigint' || options.localId <= 0n) throw new TypeError('PeerTransport: localId must be a positive bigint');
    this.limits = resolveLimits(options.limits);
    this.backoff = resolveBackoff(options.backoff);
    this.keepalive = { ...DEFAULT_KEEPALIVE, ...options.keepalive };
    this.hooks = options.hooks ?? {};
    this.connectTimeoutMs = options.connectTimeoutMs ?? 2000;
    if (!Number.isFinite(this.connectTimeoutMs) || this.connectTimeoutMs <= 0) throw new TypeError('PeerTransport: connectTimeoutMs must be positive');
    this.onFrameStream = options.frameStream !== false && (options.credentials === undefined || options.frameStreamTls !== undefined);
    // A batch from a peer shows it is up: a stream to it waiting out a backoff is retried at once.
    const hooks: TransportHooks = {
      ...this.hooks,
      onReceived: (peer, messages, bytes) => {
        this.peers.get(peer)?.sender.heardFrom();
        this.hooks.onReceived?.(peer, messages, bytes);
      },
    };
    const service = createPeerService({ localId: options.localId, clusterId: options.clusterId ?? 0n, limits: this.limits, receiver: options.receiver, hooks, keepalive: this.keepalive });
    this.service = { definition: service.definition, handlers: service.handlers, frameStream: service.frameStream };
    this.receiveStats = service.stats;
    for (const [id, address] of options.peers ?? []) this.setPeer(id, address);
  }

  /** Frame size the peer gRPC server must accept (`maxReceiveMessageBytes`). */
  get maxFrameBytes(): number {
    return maxFrameBytes(this.limits);
  }

  /** Adds a peer, or moves it to a new address (its queue and streams start afresh). */
  setPeer(id: bigint, address: string): void {
    if (this.closed) throw new TransportClosedError();
    if (typeof id !== 'bigint' || id <= 0n || id === this.options.localId) throw new TypeError(`PeerTransport.setPeer: invalid peer id ${String(id)}`);
    if (typeof address !== 'string' || !/^[^\s]+:\d{1,5}$/.test(address)) throw new TypeError(`PeerTransport.setPeer: address must be host:port, got ${JSON.stringify(address)}`);
    const existing = this.peers.get(id);
    if (existing?.address === address) return;
    if (existing !== undefined) this.removePeer(id);
    const frameBytes = maxFrameBytes(this.limits);
    const connectTimeoutMs = this.connectTimeoutMs;
    const client = this.onFrameStream ? undefined : createPeerClient(address, frameBytes, this.keepalive, this.backoff, this.options.credentials);
    const snapshotClient = createPeerClient(address, frameBytes, this.keepalive, this.backoff, this.options.credentials);
    const sender = new PeerSender({
      peer: id,
      route: { clusterId: this.options.clusterId ?? 0n, from: this.options.localId, to: id },
      open:
        client === undefined
          ? frameStreamLink({ address, tls: this.options.frameStreamTls ?? null, connectTimeoutMs, keepalive: this.keepalive })
          : grpcLink(client, connectTimeoutMs),
      limits: this.limits,
      backoff: this.backoff,
      hooks: this.hooks,
      random: this.options.random ?? Math.random,
    });
    this.peers.set(id, { address, sender, client, snapshotClient, snapshotInFlight: false, snapshotsSent: 0 });
  }

  /** Opens a stream to every peer that has none yet (etcd's transport dials its peers at start). */
  dialAll(): void {
    if (this.closed) return;
    for (const peer of this.peers.values()) peer.sender.dial();
  }

  /** Forgets a peer: its queue is dropped and its connections closed. */
  removePeer(id: bigint): void {
    const peer = this.peers.get(id);
    if (peer === undefined) return;
    this.peers.delete(id);
    peer.sender.close();
    peer.client?.close();
    peer.snapshotClient.close();
  }

  /**
   * Queues `message` (one buffer, or pieces sent back to back) for peer `to`; never blocks. False when it was dropped: unknown peer, queue
   * full, message over maxMessageBytes, or transport closed (each counted and reported).
   */
  send(to: bigint, message: MessageBytes): boolean {
    const peer = this.peers.get(to);
    if (peer === undefined || this.closed) {
      this.hooks.onDropped?.(to, 1, this.closed ? 'closed' : 'unknown-peer');
      return false;
    }
    return peer.sender.send(message);
  }

  /**
   * Streams a snapshot to `to` (one at a time per peer). Resolves when the peer has accepted it.
   * Rejects with UnknownPeerError, SnapshotBusyError, SnapshotTooLargeError or SnapshotSendError.
   */
  async sendSnapshot(to: bigint, metadata: Uint8Array, data: Uint8Array | AsyncIterable<Uint8Array>, totalBytes: number): Promise<void> {
    if (this.closed) throw new TransportClosedError();
    const peer = this.peers.get(to);
    if (peer === undefined) throw new UnknownPeerError(to);
    if (peer.snapshotInFlight) throw new SnapshotBusyError(to);
    peer.snapshotInFlight = true;
    try {
      const route = { clusterId: this.options.clusterId ?? 0n, from: this.options.localId, to };
      await sendSnapshotStream({ route, client: peer.snapshotClient, limits: this.limits, metadata, data, totalBytes });
      peer.snapshotsSent++;
    } finally {
      peer.snapshotInFlight = false;
    }
  }

  stats(): TransportStats {
    const peers = [...this.peers].map(([peer, p]) => ({ peer, address: p.address, snapshotsSent: p.snapshotsSent, ...p.sender.stats() }));
    return { peers, received: { ...this.receiveStats } };
  }

  /** Closes every peer stream and connection; later sends are dropped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.peers.keys()]) this.removePeer(id);
  }
}
