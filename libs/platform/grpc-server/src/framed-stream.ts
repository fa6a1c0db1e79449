// A message stream on a plain TCP (or TLS) connection, without HTTP/2 and gRPC around it: what a
// long-lived stream of batched calls (batched-calls.ts) needs, at about half the CPU per message
// of a grpc-js stream and without the event-loop turn Node's HTTP/2 waits before it writes.
//
//   client -> server: the protocol's preface, then frames; server -> client: frames
//   frame: [length u32 LE][kind u8][body: length - 1 bytes]
//     MESSAGE  a serialized message
//     END      the sender ends the stream in order (a server: it answered every call it served)
//     ALIVE    nothing; each side sends one every interval (the protocol's), and a side that
//              hears nothing for its silence limit closes the connection; a greeting server
//              sends one first of all, which tells a client that it speaks the protocol
//
// A frame longer than the reader's bound, a kind it does not know, a body that does not decode
// or a connection that ends without END is an error of the stream; the connection is closed.
import { EventEmitter } from 'node:events';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { TlsMaterial } from './tls';

const LENGTH_BYTES = 4;
const KIND_BYTES = 1;
const enum FrameKind {
  Message = 0,
  End = 1,
  Alive = 2,
}
/** A greeting server's first bytes: a keepalive frame. */
const GREETING = Buffer.of(1, 0, 0, 0, FrameKind.Alive);
/** Chunks smaller than this are joined as they come (a trickle of tiny reads is one buffer). */
const SMALL_CHUNK_BYTES = 4 * 1024;

/**
 * Cuts a byte stream into length-prefixed frames ([length u32 LE][frame]). Bytes are kept as the
 * chunks that brought them and joined once per frame, so a large frame arriving in many chunks is
 * copied once.
 */
export class LengthPrefixedReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly oversized: (length: number, maxFrameBytes: number) => Error,
  ) {}

  /** The frames these bytes complete, in order; throws `oversized`'s error on a frame over the bound. */
  push(chunk: Buffer): Buffer[] {
    const last = this.chunks.at(-1);
    // Tiny chunks (a peer trickling bytes) are copied together: each kept chunk costs an object
    // and may hold a whole read buffer alive, so many of them would cost far more than the frame.
    if (last !== undefined && last.length < SMALL_CHUNK_BYTES && chunk.length < SMALL_CHUNK_BYTES) this.chunks[this.chunks.length - 1] = Buffer.concat([last, chunk]);
    else this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    while (this.buffered >= LENGTH_BYTES) {
      const length = this.peekLength();
      if (length > this.maxFrameBytes) throw this.oversized(length, this.maxFrameBytes);
      if (this.buffered < LENGTH_BYTES + length) break;
      frames.push(this.take(LENGTH_BYTES + length).subarray(LENGTH_BYTES));
    }
    return frames;
  }

  private peekLength(): number {
    const first = this.chunks[0]!;
    if (first.length >= LENGTH_BYTES) return first.readUInt32LE(0);
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined.readUInt32LE(0);
  }

  private take(bytes: number): Buffer {
    const first = this.chunks[0]!;
    let taken: Buffer;
    if (first.length >= bytes) {
      taken = first.subarray(0, bytes);
      if (first.length === bytes) this.chunks.shift();
      else this.chunks[0] = first.subarray(bytes);
    } else {
      // Only the frame's own bytes are copied (into a buffer of its own, not the shared pool);
      // what follows it stays where it arrived.
      taken = Buffer.allocUnsafeSlow(bytes);
      let filled = 0;
      while (filled < bytes) {
        const chunk = this.chunks[0]!;
        const copied = chunk.copy(taken, filled, 0, Math.min(chunk.length, bytes - filled));
        filled += copied;
        if (copied === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(copied);
      }
    }
    this.buffered -= bytes;
    return taken;
  }
}

/** `host:port` (the host in brackets for IPv6) into its parts. */
export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon);
  return { host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host, port: Number(address.slice(colon + 1)) };
}

export interface DialOptions {
  /** `host:port`. */
  readonly address: string;
  /** TLS with this side's certificate and key, the other side's chaining to `ca`; null: plain TCP. */
  readonly tls: TlsMaterial | null;
  /** The ALPN id offered under TLS. */
  readonly alpn: string;
  /** A connection not up (TLS handshake included) within this is destroyed with an error. */
  readonly connectTimeoutMs: number;
}

/**
 * Opens a connection for a framed protocol: TCP without Nagle, or TLS offering `alpn` and naming
 * the host for verification (an IP address is checked against the certificate's IP names).
 * `connected` is the event that says it is up; writes before it wait in the socket.
 */
export function dialSocket(options: DialOptions): { socket: Socket; connected: 'connect' | 'secureConnect' } {
  const { host, port } = splitAddress(options.address);
  const tls = options.tls;
  const socket: Socket =
    tls === null
      ? netConnect({ host, port, noDelay: true })
      : tlsConnect({
          host,
          port,
          cert: tls.cert,
          key: tls.key,
          ...(tls.ca === null ? {} : { ca: tls.ca }),
          ALPNProtocols: [options.alpn],
          ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
        });
  const connected = tls === null ? 'connect' : 'secureConnect';
  const timer = setTimeout(() => socket.destroy(new Error(`no connection to ${options.address} within ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
  socket.once(connected, () => clearTimeout(timer));
  socket.once('close', () => clearTimeout(timer));
  return { socket, connected };
}

/** A framed stream's protocol: what the client sends first, and its ALPN id under TLS. */
export interface FramedProtocol {
  readonly preface: Buffer;
  readonly alpn: string;
}

export interface FramedStreamOptions<Out, In> {
  readonly serialize: (message: Out) => Buffer;
  readonly deserialize: (bytes: Buffer) => In;
  /** Largest frame accepted from the other side. */
  readonly maxReceiveBytes: number;
  /**
   * This side sends a keepalive frame this often, and judges the other side as often. Both sides
   * of one protocol use the same interval (a protocol constant, not each side's setting).
   */
  readonly aliveIntervalMs: number;
  /**
   * The connection is cut when nothing was heard for this long, nor (while this side has stopped
   * reading, `pauseReadsWhileBlocked`) were any of its written bytes taken. Above the interval,
   * with room for the other side's stalls.
   */
  readonly silenceLimitMs: number;
  /**
   * Stop reading the other side while what this side wrote is not taken (a server: no new calls
   * while the answers wait). Never on both sides of one connection.
   */
  readonly pauseReadsWhileBlocked: boolean;
  /** Send a keepalive frame at once (a server: tells a client that it speaks the protocol). */
  readonly greet?: boolean;
  /**
   * A client's side of a greeting server: the first bytes must be that keepalive frame. Other
   * first bytes (an HTTP/2 server's SETTINGS, say) fail the stream as foreign at once.
   */
  readonly expectGreeting?: boolean;
  /**
   * A TLS client's side: the ALPN id the server must choose. A server that chooses none does not
   * speak the protocol (an HTTP/2 server that predates it goes on without ALPN, then drops it).
   */
  readonly requireAlpn?: string;
}

/** Why a framed stream failed: the connection, its keepalive, or a frame. */
export class FramedStreamError extends Error {
  constructor(
    message: string,
    /**
     * The other side does not speak this protocol: its first bytes were not the greeting
     * (`expectGreeting`), or under TLS it refused the protocol's ALPN id (or chose none). Then it
     * read nothing of what this side sent as this protocol's messages.
     */
    readonly foreign = false,
  ) {
    super(message);
    this.name = 'FramedStreamError';
  }
}

/** True for a framed stream that failed because the other side does not speak the protocol. */
export function isForeignFramedStream(error: unknown): boolean {
  return error instanceof FramedStreamError && error.foreign;
}

/** A TLS server took none of the ALPN ids offered: OpenSSL's alert 120 (no_application_protocol). */
function refusesAlpn(error: Error): boolean {
  return (error as { code?: unknown }).code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL' || /alert no application protocol/.test(error.message);
}

/**
 * One side of a framed stream on a connected (or connecting: writes wait in the socket) socket.
 * Events: 'data' (a message), 'end' (the other side's END), 'error' (the connection closed or
 * failed without END first; emitted once, and the socket is gone).
 */
export class FramedStream<Out, In> extends EventEmitter {
  private readonly reader: LengthPrefixedReader;
  /** The other side's END came. */
  private peerEnded = false;
  /** This side ended (END) or cancelled: what follows on the connection is no error. */
  private closing = false;
  private failed = false;
  /** The first bytes heard, while they may still be the greeting (`expectGreeting`). */
  private greeting: Buffer | undefined;
  /** Set once the other side is known not to speak the protocol. */
  private foreign = false;
  private lastHeardMs = performance.now();
  /** Reads paused because this side's writes wait (`pauseReadsWhileBlocked`). */
  private blocked = false;
  /** Frames the socket has finished writing, and their count at the last judgement. */
  private framesWritten = 0;
  private framesWrittenJudged = 0;
  /** When the other side last took what this side wrote, sent a message, or nothing waited to be taken. */
  private lastTakenMs = performance.now();
  private readonly onFrameWritten = (): void => {
    this.framesWritten += 1;
  };
  private readonly liveness: NodeJS.Timeout;

  constructor(
    private readonly socket: Duplex,
    private readonly options: FramedStreamOptions<Out, In>,
    /** A server's side: the preface the client sends first, checked and skipped. */
    private expectedPreface?: Buffer,
  ) {
    super();
    this.reader = new LengthPrefixedReader(options.maxReceiveBytes + KIND_BYTES, (length, max) => new FramedStreamError(`frame of ${length} bytes exceeds ${max}`));
    (socket as Partial<Socket>).setNoDelay?.(true);
    (socket as Partial<Socket>).setKeepAlive?.(true, options.aliveIntervalMs);
    this.greeting = options.expectGreeting === true ? Buffer.alloc(0) : undefined;
    // Timers run before the event loop reads its sockets: after a stall of this process what the
    // other side sent meanwhile is still unread when the timer fires, so the verdict waits for
    // that read (setImmediate runs once the loop has polled).
    const judge = (): void => {
      const now = performance.now();
      const taken = this.framesWritten > this.framesWrittenJudged;
      this.framesWrittenJudged = this.framesWritten;
      // Not reading while blocked: the other side is alive while it takes what this side wrote.
      if (this.blocked && taken) this.lastHeardMs = now;
      if (taken || socket.writableLength === 0) this.lastTakenMs = now;
      if (now - this.lastHeardMs > options.silenceLimitMs) this.fail(new FramedStreamError(`nothing heard for ${options.silenceLimitMs} ms`));
      // A side that sends only keepalives and takes nothing holds what is written to it here: cut.
      else if (now - this.lastTakenMs > options.silenceLimitMs) this.fail(new FramedStreamError(`nothing taken for ${options.silenceLimitMs} ms`));
    };
    this.liveness = setInterval(() => {
      // A keepalive behind a backlog tells the other side nothing sooner.
      if (!this.blocked) this.writeFrame(FrameKind.Alive, undefined);
      setImmediate(judge);
    }, options.aliveIntervalMs);
    this.liveness.unref();
    socket.on('data', (chunk: Buffer) => this.onBytes(chunk));
    socket.on('drain', () => {
      this.lastHeardMs = performance.now();
      if (!this.blocked) return;
      this.blocked = false;
      socket.resume();
    });
    socket.on('end', () => this.fail(new FramedStreamError('the connection ended without END')));
    socket.on('error', (error: Error) => {
      if (refusesAlpn(error)) this.foreign = true;
      this.fail(new FramedStreamError(`connection failed: ${error.message}`));
    });
    socket.once('close', () => this.fail(new FramedStreamError('the connection closed')));
    if (options.requireAlpn !== undefined) {
      socket.once('secureConnect', () => {
        const chosen = (socket as TLSSocket).alpnProtocol;
        if (chosen === options.requireAlpn) return;
        this.foreign = true;
        this.fail(new FramedStreamError(`the server chose ALPN ${String(chosen)}, not ${options.requireAlpn}`));
      });
    }
    socket.resume();
    if (options.greet === true) this.writeFrame(FrameKind.Alive, undefined);
  }

  /** Bytes written to this stream that the socket has not handed to the connection yet. */
  get unsentBytes(): number {
    return this.socket.writableLength;
  }

  /** Sends one message; false while the socket's buffer is over its high-water mark. */
  write(message: Out): boolean {
    return this.writeFrame(FrameKind.Message, this.options.serialize(message));
  }

  /** Ends this side in order: END, then the connection's end once written. */
  end(): void {
    if (this.closing || this.failed) return;
    this.writeFrame(FrameKind.End, undefined);
    this.closing = true;
    clearInterval(this.liveness);
    this.socket.end();
    // The other side closes once it has read the END; one that does not is cut.
    setTimeout(() => this.socket.destroy(), this.options.silenceLimitMs).unref();
  }

  /** Closes the connection at once; the other side sees an error. */
  cancel(): void {
    this.closing = true;
    this.socket.destroy();
    this.fail(new FramedStreamError('cancelled'));
  }

  private writeFrame(kind: FrameKind, body: Buffer | undefined): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    const header = Buffer.allocUnsafe(LENGTH_BYTES + KIND_BYTES);
    header.writeUInt32LE(KIND_BYTES + (body?.length ?? 0), 0);
    header[LENGTH_BYTES] = kind;
    let writable: boolean;
    if (body === undefined) writable = this.socket.write(header, this.onFrameWritten);
    else {
      this.socket.cork();
      this.socket.write(header);
      writable = this.socket.write(body, this.onFrameWritten);
      this.socket.uncork();
    }
    if (!writable && this.options.pauseReadsWhileBlocked && !this.blocked) {
      this.blocked = true;
      this.socket.pause();
    }
    return writable;
  }

  private onBytes(chunk: Buffer): void {
    this.lastHeardMs = performance.now();
    if (this.expectedPreface !== undefined) {
      const expected = this.expectedPreface;
      const n = Math.min(expected.length, chunk.length);
      if (chunk.subarray(0, n).compare(expected.subarray(0, n)) !== 0) return this.fail(new FramedStreamError('the connection did not start with the preface'));
      this.expectedPreface = n === expected.length ? undefined : expected.subarray(n);
      chunk = chunk.subarray(n);
      if (chunk.length === 0) return;
    }
    if (this.greeting !== undefined) {
      // The greeting is the first frame: an empty keepalive. Checked as its bytes come.
      const seen = Buffer.concat([this.greeting, chunk.subarray(0, GREETING.length - this.greeting.length)]);
      if (seen.compare(GREETING.subarray(0, seen.length)) !== 0) {
        this.foreign = true;
        return this.fail(new FramedStreamError('the first bytes are not the greeting'));
      }
      this.greeting = seen.length === GREETING.length ? undefined : seen;
    }
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      return this.fail(error as Error);
    }
    for (const frame of frames) {
      if (this.failed) return;
      const kind = frame[0];
      if (kind === FrameKind.Alive) continue;
      if (kind === FrameKind.End) {
        // Nothing follows an END: the stream is over for both sides (a server that ends answers
        // nothing more; a client never ends before its calls are answered).
        this.peerEnded = true;
        this.emit('end');
        this.fail(new FramedStreamError('ended'));
        return;
      }
      if (kind !== FrameKind.Message || frame.length === 0) return this.fail(new FramedStreamError(`unknown frame kind ${kind}`));
      let message: In;
      try {
        message = this.options.deserialize(frame.subarray(KIND_BYTES));
      } catch (error) {
        return this.fail(new FramedStreamError(`a message did not decode: ${(error as Error).message}`));
      }
      // A side busy sending messages may leave what it is sent unread meanwhile (it pauses its
      // reads while its own writes wait): that is progress, not a side that takes nothing.
      this.lastTakenMs = this.lastHeardMs;
      this.emit('data', message);
    }
  }

  /** Closes the connection; an error unless the stream ended in order (END either way) or was cancelled. */
  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = true;
    clearInterval(this.liveness);
    // After our END the socket is left to close once it is written (or to end()'s timer).
    if (!this.closing) this.socket.destroy();
    if (this.peerEnded || this.closing) return;
    this.emit('error', this.foreign ? new FramedStreamError(`the other side does not speak this protocol (${error.message})`, true) : error);
  }
}
