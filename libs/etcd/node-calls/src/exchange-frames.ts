// The framed Exchange: wardnode.Node/Exchange's messages on a plain TCP (or TLS) connection to a
// raft-node's internal API port, without HTTP/2 (@ward/platform/grpc-server's framed-stream.ts
// has the framing). The port tells it from gRPC by the preface, or under TLS by the ALPN id.
import { wardNodeServiceDefinition, type ExchangeAnswers, type ExchangeAnswers__Output, type ExchangeCalls, type ExchangeCalls__Output } from '@ward/etcd/proto';
import type { FramedProtocol } from '@ward/platform/grpc-server';

export const EXCHANGE_FRAMES: FramedProtocol = Object.freeze({ preface: Buffer.from('WARD-NODE-EXCHANGE/1\r\n', 'latin1'), alpn: 'ward-node-exchange/1' });

/** Both sides send a keepalive frame this often: part of the protocol, not a setting of either side. */
export const EXCHANGE_ALIVE_INTERVAL_MS = 5_000;
/** A side that hears nothing for this long (three intervals) cuts the connection. */
export const EXCHANGE_SILENCE_LIMIT_MS = 15_000;

/**
 * The largest message a member's API sends (its gRPC server's send bound): one answer (a big
 * Range), or a batch of Exchange answers. A gateway takes any such message from a member: its own
 * bound on a client's answer (GATEWAY_GRPC_MAX_SEND_BYTES) applies to each answer alone, later, so
 * an answer or a batch over it costs no call but the one answer over it.
 */
export const NODE_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

export interface ExchangeCodecs {
  readonly serializeCalls: (message: ExchangeCalls) => Buffer;
  readonly deserializeCalls: (bytes: Buffer) => ExchangeCalls__Output;
  readonly serializeAnswers: (message: ExchangeAnswers) => Buffer;
  readonly deserializeAnswers: (bytes: Buffer) => ExchangeAnswers__Output;
}

/** The gRPC method's own (de)serializers: both transports carry the same bytes per message. */
export function exchangeCodecs(): ExchangeCodecs {
  const method = wardNodeServiceDefinition().Exchange!;
  return {
    serializeCalls: method.requestSerialize as ExchangeCodecs['serializeCalls'],
    deserializeCalls: method.requestDeserialize as ExchangeCodecs['deserializeCalls'],
    serializeAnswers: method.responseSerialize as ExchangeCodecs['serializeAnswers'],
    deserializeAnswers: method.responseDeserialize as ExchangeCodecs['deserializeAnswers'],
  };
}
