// The frame stream: a peer's batch frames on a plain TCP (or TLS) connection to the peer port,
// without HTTP/2 and gRPC around them. The peer port tells it from HTTP/2 by its preface (or, under
// TLS, by its ALPN id); snapshots stay on gRPC.
//
//   sender -> receiver: PEER_FRAMES_PREFACE, then ([length u32 LE][batch frame])*
//   receiver -> sender: one byte (0) every keepalive interval, so a sender finds a silently dead
//                       connection (its writes alone could sit in the kernel for minutes)
//
// A frame longer than the receiver's bound, or one that does not decode, closes the connection;
// the sender reconnects with its backoff, as after any failure.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { LengthPrefixedReader, dialSocket, type TlsMaterial } from '@ward/platform/grpc-server';
import { FrameInvalidError } from './errors';
import type { KeepaliveOptions } from './options';
import type { FrameLink, LinkEvents, OpenLink } from './peer-sender';

/** What a frame stream starts with: its first byte already differs from HTTP/2's preface. */
export const PEER_FRAMES_PREFACE = Buffer.from('WARD-RAFT-FRAMES/1\r\n', 'latin1');
/** The ALPN id of the frame stream under TLS. */
export const PEER_FRAMES_ALPN = 'ward-raft-frames/1';

const LENGTH_BYTES = 4;
const ALIVE = Buffer.of(0);

/** Cuts a byte stream into length-prefixed frames; a frame over the bound throws FrameInvalidError. */
export class FrameStreamReader extends LengthPrefixedReader {
  constructor(maxFrameBytes: number) {
    super(maxFrameBytes, (length, max) => new FrameInvalidError(`frame of ${length} bytes exceeds ${max}`));
  }
}


export interface FrameStreamLinkOptions {
  readonly address: string;
  /** TLS towards the peer: this member's certificate and key, and the cluster CA its certificate must chain to (naming the address's host). */
  readonly tls: TlsMaterial | null;
  readonly connectTimeoutMs: number;
  readonly keepalive: KeepaliveOptions;
}

/** Opens frame streams to one peer address, for PeerSender. */
export function frameStreamLink(options: FrameStreamLinkOptions): OpenLink {
  return (events: LinkEvents): FrameLink => {
    const { socket, connected } = dialSocket({ address: options.address, tls: options.tls, alpn: PEER_FRAMES_ALPN, connectTimeoutMs: options.connectTimeoutMs });
    const { timeMs, timeoutMs } = options.keepalive;
    let failure: unknown;
    let lastHeardMs = performance.now();
    let liveness: NodeJS.Timeout | undefined;
    socket.once(connected, () => {
      socket.setNoDelay(true);
      socket.setKeepAlive(true, timeMs);
      socket.write(PEER_FRAMES_PREFACE);
      lastHeardMs = performance.now();
      // Timers run before the event loop reads its sockets: after a stall of this process (GC, a
      // starved CPU) what the peer sent meanwhile is still unread when the timer fires. The
      // verdict is given after that read (setImmediate runs once the loop has polled).
      const judge = (): void => {
        if (performance.now() - lastHeardMs > timeMs + timeoutMs) socket.destroy(new Error(`peer ${options.address} silent for ${timeMs + timeoutMs} ms`));
      };
      liveness = setInterval(() => setImmediate(judge), timeoutMs);
      events.onOpen();
    });
    socket.on('data', () => {
      lastHeardMs = performance.now();
    });
    socket.on('drain', () => events.onDrain());
    socket.on('error', (error) => {
      failure ??= error;
    });
    socket.once('close', () => {
      clearInterval(liveness);
      events.onEnd(failure ?? new Error(`peer ${options.address} closed the frame stream`));
    });
    return {
      write(frame, frameBytes) {
        const prefix = Buffer.allocUnsafe(LENGTH_BYTES);
        prefix.writeUInt32LE(frameBytes, 0);
        // One writev for the prefix and every piece.
        socket.cork();
        let writable = socket.write(prefix);
        for (const piece of frame) writable = socket.write(piece);
        socket.uncork();
        return writable;
      },
      close() {
        // Queued frames are dropped with the sender; nothing waits for them.
        socket.destroy();
      },
    };
  };
}

export interface FrameStreamServeOptions {
  readonly maxFrameBytes: number;
  readonly keepalive: KeepaliveOptions;
  /**
   * Handles one frame; a returned promise holds back the next frames (and the socket's reads)
   * until it settles. A throw or rejection closes the connection (the handler reports it).
   */
  readonly onFrame: (frame: Buffer) => void | Promise<void>;
  /** The stream was closed for a frame over the bound. */
  readonly onOversized: (reason: string) => void;
}

/**
 * Serves one accepted frame-stream connection (the peer port hands it over with the preface
 * unread): frames are handed to `onFrame` in order, and a byte goes back every keepalive interval.
 */
export function serveFrameStream(socket: Duplex, options: FrameStreamServeOptions): void {
  const reader = new FrameStreamReader(options.maxFrameBytes);
  let prefaceLeft = PEER_FRAMES_PREFACE.length;
  const ready: Buffer[] = [];
  let waiting = false;
  (socket as Partial<Socket>).setKeepAlive?.(true, options.keepalive.timeMs);
  const alive = setInterval(() => socket.write(ALIVE), options.keepalive.timeMs);
  const fail = (): void => {
    ready.length = 0;
    socket.destroy();
  };
  /** Hands ready frames over in order; pauses the socket while a handler's promise is pending. */
  const drain = (): void => {
    while (ready.length > 0 && !waiting) {
      let pending: void | Promise<void>;
      try {
        pending = options.onFrame(ready.shift()!);
      } catch {
        fail();
        return;
      }
      if (pending !== undefined) {
        waiting = true;
        socket.pause();
        pending.then(
          () => {
            waiting = false;
            socket.resume();
            drain();
          },
          fail,
        );
      }
    }
  };
  socket.on('data', (chunk: Buffer) => {
    if (prefaceLeft > 0) {
      const skipped = Math.min(prefaceLeft, chunk.length);
      prefaceLeft -= skipped;
      chunk = chunk.subarray(skipped);
      if (chunk.length === 0) return;
    }
    try {
      ready.push(...reader.push(chunk));
    } catch (error) {
      options.onOversized((error as FrameInvalidError).reason);
      fail();
      return;
    }
    drain();
  });
  socket.on('error', () => socket.destroy());
  socket.once('close', () => clearInterval(alive));
  socket.resume();
}
