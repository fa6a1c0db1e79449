import { createServer, connect, type Server, type Socket } from 'node:net';
import { DelayLine } from './delay-line';

/** `forward`: from the connecting side to the target; `backward`: from the target back. */
export type Direction = 'forward' | 'backward';

/** What a direction does to the bytes crossing it. */
export type LinkFault =
  | { readonly kind: 'pass' }
  /** Hold every chunk `delayMs` (plus uniform jitter in [0, jitterMs]), keeping order. */
  | { readonly kind: 'delay'; readonly delayMs: number; readonly jitterMs?: number }
  /** Swallow every byte; the connection stays up and looks silent. */
  | { readonly kind: 'blackhole' };

export interface NetProxyOptions {
  readonly targetHost: string;
  readonly targetPort: number;
  readonly listenHost?: string;
  /** 0 (default) picks a free port. */
  readonly listenPort?: number;
  /** Bytes held per connection and direction before the sender is paused. Default 16 MiB. */
  readonly maxHeldBytes?: number;
  /** Randomness for jitter, a float in [0, 1). Default Math.random; pass a seeded one to replay. */
  readonly random?: () => number;
}

export interface DirectionStats {
  passedBytes: number;
  droppedBytes: number;
  /** Highest number of bytes ever held back in one connection. */
  maxHeldBytes: number;
}

export interface NetProxyStats {
  readonly accepted: number;
  readonly refused: number;
  readonly open: number;
  readonly cut: number;
  readonly forward: Readonly<DirectionStats>;
  readonly backward: Readonly<DirectionStats>;
}

/** A TCP proxy that injects faults per direction: delay, blackhole, cut, refuse, heal. */
export interface NetProxy {
  readonly port: number;
  /** Sets the fault of one direction or both; applies to open and future connections. */
  setFault(direction: Direction | 'both', fault: LinkFault): void;
  /** Resets every open connection now (both sides see a reset). */
  cut(): void;
  /** While on, new connections are reset as soon as they are accepted. */
  refuse(on: boolean): void;
  /**
   * Back to pass-through in both directions and accepting connections. Delayed bytes are sent
   * at once; connections that lost bytes to a blackhole are reset, since their byte streams
   * cannot continue coherently (the peers reconnect).
   */
  heal(): void;
  stats(): NetProxyStats;
  /** Stops listening and resets every connection. */
  close(): Promise<void>;
}

interface Link {
  readonly line: DelayLine;
  timer: NodeJS.Timeout | undefined;
  /** Bytes were swallowed: the stream is no longer coherent. */
  tainted: boolean;
  ended: boolean;
}

interface Connection {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly links: Record<Direction, Link>;
}

const DEFAULT_MAX_HELD_BYTES = 16 * 1024 * 1024;

/** Starts a proxy listening on `listenHost:listenPort` that forwards to the target. */
export async function startNetProxy(options: NetProxyOptions): Promise<NetProxy> {
  const proxy = new FaultProxy(options);
  await proxy.listen(options.listenHost ?? '127.0.0.1', options.listenPort ?? 0);
  return proxy;
}

class FaultProxy implements NetProxy {
  private readonly server: Server;
  private readonly connections = new Set<Connection>();
  private readonly faults: Record<Direction, LinkFault> = { forward: { kind: 'pass' }, backward: { kind: 'pass' } };
  private readonly counters = { accepted: 0, refused: 0, cut: 0 };
  private readonly directionStats: Record<Direction, DirectionStats> = {
    forward: { passedBytes: 0, droppedBytes: 0, maxHeldBytes: 0 },
    backward: { passedBytes: 0, droppedBytes: 0, maxHeldBytes: 0 },
  };
  private refusing = false;
  private readonly maxHeldBytes: number;
  private readonly random: () => number;
  port = 0;

  constructor(private readonly options: NetProxyOptions) {
    this.maxHeldBytes = options.maxHeldBytes ?? DEFAULT_MAX_HELD_BYTES;
    if (!Number.isSafeInteger(this.maxHeldBytes) || this.maxHeldBytes <= 0) throw new TypeError('NetProxy: maxHeldBytes must be a positive integer');
    this.random = options.random ?? Math.random;
    this.server = createServer((client) => this.accept(client));
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.port = (this.server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  setFault(direction: Direction | 'both', fault: LinkFault): void {
    if (fault.kind === 'delay' && !(fault.delayMs >= 0 && (fault.jitterMs ?? 0) >= 0)) throw new TypeError('NetProxy: delays must be non-negative');
    for (const d of direction === 'both' ? (['forward', 'backward'] as const) : [direction]) this.faults[d] = fault;
    if (fault.kind !== 'delay') for (const connection of this.connections) for (const d of direction === 'both' ? (['forward', 'backward'] as const) : [direction]) this.release(connection, d, true);
  }

  cut(): void {
    for (const connection of [...this.connections]) this.reset(connection);
  }

  refuse(on: boolean): void {
    this.refusing = on;
  }

  heal(): void {
    this.refusing = false;
    this.faults.forward = { kind: 'pass' };
    this.faults.backward = { kind: 'pass' };
    for (const connection of [...this.connections]) {
      if (connection.links.forward.tainted || connection.links.backward.tainted) this.reset(connection);
      else for (const d of ['forward', 'backward'] as const) this.release(connection, d, true);
    }
  }

  stats(): NetProxyStats {
    return { ...this.counters, open: this.connections.size, forward: { ...this.directionStats.forward }, backward: { ...this.directionStats.backward } };
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.refusing) {
      this.counters.refused++;
      client.resetAndDestroy();
      return;
    }
    this.counters.accepted++;
    const upstream = connect(this.options.targetPort, this.options.targetHost);
    const link = (): Link => ({ line: new DelayLine(), timer: undefined, tainted: false, ended: false });
    const connection: Connection = { client, upstream, links: { forward: link(), backward: link() } };
    this.connections.add(connection);
    this.pump(connection, 'forward', client, upstream);
    this.pump(connection, 'backward', upstream, client);
    const teardown = (): void => this.teardown(connection);
    client.on('error', teardown).on('close', teardown);
    upstream.on('error', teardown).on('close', teardown);
  }

  /** Moves bytes from `source` to `target` through the direction's current fault. */
  private pump(connection: Connection, direction: Direction, source: Socket, target: Socket): void {
    const link = connection.links[direction];
    const stats = this.directionStats[direction];
    source.on('data', (chunk: Buffer) => {
      const fault = this.faults[direction];
      if (fault.kind === 'blackhole') {
        stats.droppedBytes += chunk.length;
        link.tainted = true;
        return;
      }
      if (fault.kind === 'pass' && link.line.isEmpty) {
        this.deliver(direction, target, source, chunk);
        return;
      }
      const delayMs = fault.kind === 'delay' ? fault.delayMs + (fault.jitterMs ?? 0) * this.random() : 0;
      link.line.push(chunk, performance.now(), delayMs);
      stats.maxHeldBytes = Math.max(stats.maxHeldBytes, link.line.heldBytes);
      if (link.line.heldBytes >= this.maxHeldBytes) source.pause();
      this.schedule(connection, direction);
    });
    source.on('end', () => {
      link.ended = true;
      if (link.line.isEmpty) target.end();
    });
  }

  private deliver(direction: Direction, target: Socket, source: Socket, chunk: Uint8Array): void {
    if (target.destroyed) return;
    this.directionStats[direction].passedBytes += chunk.length;
    if (!target.write(chunk)) {
      source.pause();
      target.once('drain', () => source.resume());
    }
  }

  private schedule(connection: Connection, direction: Direction): void {
    const link = connection.links[direction];
    const dueMs = link.line.nextDueMs();
    if (link.timer !== undefined || dueMs === undefined) return;
    link.timer = setTimeout(() => {
      link.timer = undefined;
      this.release(connection, direction, false);
    }, Math.max(0, dueMs - performance.now()));
  }

  /** Sends what is due (or everything, when `all`), then re-arms the timer. */
  private release(connection: Connection, direction: Direction, all: boolean): void {
    const link = connection.links[direction];
    const [source, target] = direction === 'forward' ? [connection.client, connection.upstream] : [connection.upstream, connection.client];
    const chunks = all ? link.line.takeAll() : link.line.takeDue(performance.now());
    for (const chunk of chunks) this.deliver(direction, target, source, chunk);
    if (link.line.heldBytes < this.maxHeldBytes && source.isPaused() && target.writableNeedDrain === false) source.resume();
    if (link.line.isEmpty && link.ended) target.end();
    this.schedule(connection, direction);
  }

  private reset(connection: Connection): void {
    this.counters.cut++;
    connection.client.resetAndDestroy();
    connection.upstream.resetAndDestroy();
    this.teardown(connection);
  }

  private teardown(connection: Connection): void {
    if (!this.connections.delete(connection)) return;
    for (const link of Object.values(connection.links)) clearTimeout(link.timer);
    if (!connection.client.destroyed) connection.client.destroy();
    if (!connection.upstream.destroyed) connection.upstream.destroy();
  }
}
