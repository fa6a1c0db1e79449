// Exchange: a gateway's Propose, Read, ReadIndex and AuthCheck calls multiplexed on one long-lived
// stream, each served exactly as its unary method serves it (propose.ts, read.ts, auth.ts); answers
// go back batched.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { Duplex } from 'node:stream';
import type { AuthCheckRequest__Output, ExchangeAnswers, ExchangeCall__Output, ExchangeCalls__Output, NodeResponse } from '@ward/etcd/proto';
import { GrpcStatusError, serveBatchedCalls, serveFramedCalls, type BatchedAnswer, type BatchedCallsOptions, type CallContext } from '@ward/platform/grpc-server';
import type { Logger } from '@ward/platform/logging';
import { EXCHANGE_ALIVE_INTERVAL_MS, EXCHANGE_FRAMES, EXCHANGE_SILENCE_LIMIT_MS, exchangeCodecs } from '@ward/etcd/node-calls';
import { status } from '@grpc/grpc-js';
import { wireErrorAnswer } from './answers';
import type { NodeCore } from './node-core';
import { authCheck } from './auth';
import { propose } from './propose';
import { read, readIndex } from './read';

/** Calls one stream may have in flight; more are answered `too many requests` at once. */
export const MAX_EXCHANGE_IN_FLIGHT_COUNT = 10_000;
/** An answer batch is written once it holds this many bytes of responses. */
export const MAX_EXCHANGE_ANSWER_BATCH_BYTES = 4 * 1024 * 1024;

const ANSWER_OVERHEAD_BYTES = 64;

function serveCall(core: NodeCore, call: ExchangeCall__Output): Promise<NodeResponse> {
  if (call.call === 'propose' && call.propose) return propose(core, call.propose);
  if (call.call === 'read' && call.read) return read(core, call.read);
  if (call.call === 'read_index' && call.read_index) return readIndex(core, call.read_index);
  if (call.call === 'auth_check' && call.auth_check) return authCheckAnswer(core, call.auth_check);
  return Promise.reject(new GrpcStatusError(status.INVALID_ARGUMENT, 'an Exchange call names neither propose, read, read_index nor auth_check'));
}

/** AuthCheck as the unary method serves it, its answer as a NodeResponse. */
async function authCheckAnswer(core: NodeCore, request: AuthCheckRequest__Output): Promise<NodeResponse> {
  const answer = await authCheck(core, request);
  return answer.check ? { auth_check: answer.check } : { error: answer.error ?? null };
}

function exchangeOptions(core: NodeCore, logger: Logger): BatchedCallsOptions<ExchangeCall__Output, NodeResponse> {
  return {
    serve: (call: ExchangeCall__Output) => serveCall(core, call),
    overloaded: wireErrorAnswer('TooManyRequests'),
    answerBytes: (answer: NodeResponse) => (answer.response?.length ?? 0) + ((answer.auth_check?.password_hash as Uint8Array | undefined)?.length ?? 0) + ANSWER_OVERHEAD_BYTES,
    maxInFlightCount: MAX_EXCHANGE_IN_FLIGHT_COUNT,
    maxBatchBytes: MAX_EXCHANGE_ANSWER_BATCH_BYTES,
    logger,
    // A stopping member answers what it serves, then ends the stream with OK (on a framed stream:
    // END): the gateway sends the calls left unanswered elsewhere (they were never served).
    drain: core.stopping,
  };
}

export function serveExchange(core: NodeCore, stream: ServerDuplexStream<ExchangeCalls__Output, ExchangeAnswers>, context: CallContext): Promise<void> {
  return serveBatchedCalls(stream as never, exchangeOptions(core, context.logger));
}

export interface ExchangeFramesOptions {
  /** Largest frame of calls accepted (the API's largest request). */
  readonly maxReceiveBytes: number;
  readonly logger: Logger;
}

/**
 * Serves one framed Exchange connection (the API port hands it over with the preface unread): the
 * same calls and answers as the gRPC Exchange, without HTTP/2 around them. A removed member
 * closes it at once, as it fails every gRPC call.
 */
export function serveExchangeFrames(core: NodeCore, socket: Duplex, options: ExchangeFramesOptions): Promise<void> {
  if (core.removed) {
    socket.destroy();
    return Promise.resolve();
  }
  const codecs = exchangeCodecs();
  return serveFramedCalls(
    socket,
    {
      preface: EXCHANGE_FRAMES.preface,
      deserialize: codecs.deserializeCalls,
      serialize: codecs.serializeAnswers as (message: { answers: BatchedAnswer<NodeResponse>[] }) => Buffer,
      maxReceiveBytes: options.maxReceiveBytes,
      aliveIntervalMs: EXCHANGE_ALIVE_INTERVAL_MS,
      silenceLimitMs: EXCHANGE_SILENCE_LIMIT_MS,
    },
    exchangeOptions(core, options.logger),
  );
}
