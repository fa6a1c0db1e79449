// The gateway's side of the framed Exchange (@ward/etcd/node-calls' exchange-frames.ts): a plain
// TCP connection, or mutual TLS with the gateway's node certificate, to a member's internal API
// port, carrying the Exchange's messages without HTTP/2.
import { EXCHANGE_ALIVE_INTERVAL_MS, EXCHANGE_FRAMES, EXCHANGE_SILENCE_LIMIT_MS, exchangeCodecs } from '@ward/etcd/node-calls';
import type { ExchangeAnswers__Output, ExchangeCalls } from '@ward/etcd/proto';
import { FramedStream, dialSocket, type TlsMaterial } from '@ward/platform/grpc-server';
import type { ExchangeStream } from './node-exchange';

export interface ExchangeFramesOptions {
  /** TLS towards the member: the gateway's certificate and key, and the CA the member's chains to. */
  readonly tls: TlsMaterial | null;
  /** Largest frame of answers accepted (a big Range). */
  readonly maxReceiveBytes: number;
  /** A connection not established (TLS handshake included) within this fails. */
  readonly connectTimeoutMs: number;
}

/** Opens framed Exchange streams to one member's API address, for NodeExchange. */
export function framedExchange(address: string, options: ExchangeFramesOptions): () => ExchangeStream {
  const codecs = exchangeCodecs();
  const tls = options.tls;
  return () => {
    const { socket } = dialSocket({ address, tls, alpn: EXCHANGE_FRAMES.alpn, connectTimeoutMs: options.connectTimeoutMs });
    // Written once the connection is up, before anything the stream writes.
    socket.write(EXCHANGE_FRAMES.preface);
    return new FramedStream<ExchangeCalls, ExchangeAnswers__Output>(socket, {
      serialize: codecs.serializeCalls,
      deserialize: codecs.deserializeAnswers,
      maxReceiveBytes: options.maxReceiveBytes,
      aliveIntervalMs: EXCHANGE_ALIVE_INTERVAL_MS,
      silenceLimitMs: EXCHANGE_SILENCE_LIMIT_MS,
      // A member greets every framed connection: other first bytes are a member that predates them.
      expectGreeting: true,
      // The member stops reading calls while its answers wait: this side always reads.
      pauseReadsWhileBlocked: false,
      ...(tls === null ? {} : { requireAlpn: EXCHANGE_FRAMES.alpn }),
    });
  };
}
