// wardnode.Node/Exchange on a socket of its own: the same protobuf messages (ExchangeCalls one way,
// ExchangeAnswers the other) as length-prefixed frames on a plain TCP or TLS connection to the
// member's internal API port, without HTTP/2 and grpc-js around each one. The port tells the
// connection from HTTP/2 by its preface (under TLS by ALPN).
//
//   gateway -> member: EXCHANGE_PREFACE, then frames [kind 1][ExchangeCalls]
//   member -> gateway: frames [kind 2][ExchangeAnswers]; [kind 3] once, when the member stops
//                      (every call it has not answered was never served: gRPC's OK end); [kind 4]
//                      every keepalive interval, so the gateway finds a silently dead connection
//
// A frame over the reader's bound, an unknown kind or a message that does not decode closes the
// connection: the gateway fails the calls still waiting on it as UNAVAILABLE (outcome unknown for
// a proposal), as it does for a broken gRPC stream.
import { EventEmitter } from 'node:events';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { FrameReader, splitAddress, writeFrame, type TlsMaterial } from '@ward/platform/grpc-server';
import { wardNodeServiceDefinition, type ExchangeAnswers, type ExchangeAnswers__Output, type ExchangeCalls, type ExchangeCalls__Output } from '@ward/etcd/proto';

/** What an Exchange connection starts with; its first byte already differs from HTTP/2's preface. */
export const EXCHANGE_PREFACE = Buffer.from('WARD-NODE-EXCHANGE/1\r\n', 'latin1');
/** The ALPN id of an Exchange connection under TLS. */
export const EXCHANGE_ALPN = 'ward-node-exchange/1';

const Kind = { Calls: 1, Answers: 2, End: 3, Alive: 4 } as const;
const KIND_BYTES = { calls: Uint8Array.of(Kind.Calls), answers: Uint8Array.of(Kind.Answers), end: Uint8Array.of(Kind.End), alive: Uint8Array.of(Kind.Alive) };

interface Codec {
  encodeCalls(message: ExchangeCalls): Uint8Array;
  decodeCalls(bytes: Buffer): ExchangeCalls__Output;
  encodeAnswers(message: ExchangeAnswers): Uint8Array;
  decodeAnswers(bytes: Buffer): ExchangeAnswers__Output;
}

let codec: Codec | undefined;
/** The Exchange method's own serializers (what grpc-js would use), loaded once. */
function exchangeCodec(): Codec {
  if (codec !== undefined) return codec;
  const method = wardNodeServiceDefinition()['Exchange']!;
  codec = {
    encodeCalls: (message) => method.requestSerialize(message),
    decodeCalls: (bytes) => method.requestDeserialize(bytes) as ExchangeCalls__Output,
    encodeAnswers: (message) => method.responseSerialize(message),
    decodeAnswers: (bytes) => method.responseDeserialize(bytes) as ExchangeAnswers__Output,
  };
  return codec;
}

export interface ExchangeKeepalive {
  readonly timeMs: number;
  readonly timeoutMs: number;
}

export interface ExchangeSocketOptions {
  /** The member's internal API address, `host:port`. */
  readonly address: string;
  /** Mutual TLS: the gateway's certificate and key, and the CA the member's certificate chains to. */
  readonly tls: TlsMaterial | null;
  /** Largest answer frame accepted. */
  readonly maxReceiveBytes: number;
  readonly connectTimeoutMs: number;
  readonly keepalive: ExchangeKeepalive;
}

/**
 * The gateway's end of one Exchange connection, with the events of grpc-js's client stream that
 * NodeExchange listens to: 'data' (an ExchangeAnswers), 'end' (the member stopped: unanswered
 * calls were not served) or 'error' (anything else that ends it), exactly one of the two.
 */
export class ExchangeSocket extends EventEmitter {
  private readonly socket: Socket;
  private readonly reader: FrameReader;
  private finished = false;
  private failure: Error | undefined;
  private lastHeardMs = performance.now();
  private liveness: NodeJS.Timeout | undefined;
  private readonly connectTimer: NodeJS.Timeout;

  constructor(private readonly options: ExchangeSocketOptions) {
    super();
    const { host, port } = splitAddress(options.address);
    this.reader = new FrameReader(options.maxReceiveBytes);
    this.socket =
      options.tls === null
        ? netConnect({ host, port, noDelay: true })
        : tlsConnect({
            host,
            port,
            cert: options.tls.cert,
            key: options.tls.key,
            ...(options.tls.ca === null ? {} : { ca: options.tls.ca }),
            ALPNProtocols: [EXCHANGE_ALPN],
            ...(/^[\d.]+$|:/.test(host) ? {} : { servername: host }),
          });
    // Written once connected, ahead of any calls (the socket queues writes until then).
    this.socket.write(EXCHANGE_PREFACE);
    this.connectTimer = setTimeout(() => this.fail(new Error(`no connection to ${options.address} within ${options.connectTimeoutMs} ms`)), options.connectTimeoutMs);
    this.socket.once(options.tls === null ? 'connect' : 'secureConnect', () => this.onConnect());
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', (error) => (this.failure ??= error));
    this.socket.once('close', () => this.onClose());
  }

  /** Sends one message of calls. */
  write(message: ExchangeCalls): boolean {
    if (this.finished) return false;
    return writeFrame(this.socket, KIND_BYTES.calls, exchangeCodec().encodeCalls(message));
  }

  /** Closes the connection; no event follows. */
  cancel(): void {
    this.finished = true;
    this.stopTimers();
    this.socket.destroy();
  }

  private onConnect(): void {
    clearTimeout(this.connectTimer);
    this.socket.setNoDelay(true);
    this.socket.setKeepAlive(true, this.options.keepalive.timeMs);
    this.lastHeardMs = performance.now();
    const { timeMs, timeoutMs } = this.options.keepalive;
    this.liveness = setInterval(() => {
      if (performance.now() - this.lastHeardMs > timeMs + timeoutMs) this.fail(new Error(`member ${this.options.address} silent for ${timeMs + timeoutMs} ms`));
    }, timeoutMs);
  }

  private onData(chunk: Buffer): void {
    this.lastHeardMs = performance.now();
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch (error) {
      this.fail(error as Error);
      return;
    }
    for (const frame of frames) {
      if (this.finished) return;
      const kind = frame[0];
      if (kind === Kind.Answers) {
        let answers: ExchangeAnswers__Output;
        try {
          answers = exchangeCodec().decodeAnswers(frame.subarray(1));
        } catch {
          this.fail(new Error('an Exchange answer that does not decode'));
          return;
        }
        this.emit('data', answers);
      } else if (kind === Kind.End) {
        this.finished = true;
        this.stopTimers();
        this.socket.end();
        this.emit('end');
      } else if (kind !== Kind.Alive) {
        this.fail(new Error(`an Exchange frame of unknown kind ${kind}`));
      }
    }
  }

  private onClose(): void {
    this.stopTimers();
    if (this.finished) return;
    this.finished = true;
    this.emit('error', this.failure ?? new Error(`member ${this.options.address} closed the Exchange connection`));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.socket.destroy();
  }

  private stopTimers(): void {
    clearTimeout(this.connectTimer);
    clearInterval(this.liveness);
  }
}

export interface ServeExchangeSocketOptions {
  /** Largest calls frame accepted (the API's request bound). */
  readonly maxReceiveBytes: number;
  /** Answers waiting in the socket beyond this close the connection (a caller that stopped reading). */
  readonly maxBufferedBytes: number;
  /** Interval of the keepalive frame. */
  readonly keepaliveTimeMs: number;
}

/**
 * The member's end of one Exchange connection (the API port hands it over with the preface unread),
 * as the subset of grpc-js's server duplex stream that serveBatchedCalls uses: 'data' (an
 * ExchangeCalls), 'end' (the gateway ended its side), 'cancelled' (the connection went away or was
 * refused), `write(answers)`, and `end()` (the OK end: the End frame, then the close).
 */
export class ExchangeConnection extends EventEmitter {
  private readonly reader: FrameReader;
  private prefaceLeft = EXCHANGE_PREFACE.length;
  private closed = false;
  private readonly alive: NodeJS.Timeout;

  constructor(
    private readonly socket: Duplex,
    private readonly options: ServeExchangeSocketOptions,
  ) {
    super();
    this.reader = new FrameReader(options.maxReceiveBytes);
    (socket as Partial<Socket>).setKeepAlive?.(true, options.keepaliveTimeMs);
    this.alive = setInterval(() => this.send(KIND_BYTES.alive), options.keepaliveTimeMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.emit('end'));
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      clearInterval(this.alive);
      if (this.closed) return;
      this.closed = true;
      this.emit('cancelled');
    });
    socket.resume();
  }

  write(message: ExchangeAnswers): boolean {
    return this.send(KIND_BYTES.answers, exchangeCodec().encodeAnswers(message));
  }

  /** The OK end: everything written so far, then the End frame, then the close. */
  end(): void {
    if (this.closed) return;
    this.send(KIND_BYTES.end);
    this.closed = true;
    clearInterval(this.alive);
    this.socket.end();
  }

  /** Cuts the connection at once (the gateway sees a broken stream). */
  destroy(): void {
    this.socket.destroy();
  }

  /** Closes the connection without the End frame (the gateway's side has ended already). */
  close(): void {
    this.closed = true;
    clearInterval(this.alive);
    this.socket.end();
  }

  private send(...parts: Uint8Array[]): boolean {
    if (this.closed) return false;
    const writable = writeFrame(this.socket, ...parts);
    if (this.socket.writableLength > this.options.maxBufferedBytes) this.socket.destroy();
    return writable;
  }

  private onData(chunk: Buffer): void {
    if (this.prefaceLeft > 0) {
      const skipped = Math.min(this.prefaceLeft, chunk.length);
      this.prefaceLeft -= skipped;
      chunk = chunk.subarray(skipped);
      if (chunk.length === 0) return;
    }
    let frames: Buffer[];
    try {
      frames = this.reader.push(chunk);
    } catch {
      this.socket.destroy();
      return;
    }
    for (const frame of frames) {
      if (this.closed) return;
      let calls: ExchangeCalls__Output;
      try {
        if (frame[0] !== Kind.Calls) throw new Error('not a calls frame');
        calls = exchangeCodec().decodeCalls(frame.subarray(1));
      } catch {
        this.socket.destroy();
        return;
      }
      this.emit('data', calls);
    }
  }
}
