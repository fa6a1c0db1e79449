// Unary calls multiplexed on one bidi stream, the server's side: the client sends messages
// `{ calls: [{ id, ... }] }`, each call is served by `serve` on its own, and answers go back as
// `{ answers: [{ id, answer } | { id, status }] }`, batched to one write per event-loop turn. A
// long-lived stream of these costs one HTTP/2 stream instead of one per call (metadata, deadline
// timer, stream set-up on both sides). Calls in flight and bytes per answer batch are bounded.
import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { Duplex } from 'node:stream';
import type { Logger } from '@ward/platform/logging';
import { FramedStream, type FramedStreamOptions } from './framed-stream';
import { toGrpcStatus, type ErrorMapper } from './status';

export interface BatchedCallsOptions<Call, Answer> {
  /** Serves one call, as the unary method would; a rejection becomes the call's `status`. */
  readonly serve: (call: Call) => Promise<Answer>;
  /** The answer to a call beyond `maxInFlightCount` (e.g. etcd's `too many requests`). */
  readonly overloaded: Answer;
  /** Approximate encoded size of an answer, for the batch bound. */
  readonly answerBytes: (answer: Answer) => number;
  readonly maxInFlightCount: number;
  /** A batch is written as soon as it holds this many bytes (a single answer may be larger). */
  readonly maxBatchBytes: number;
  readonly logger: Logger;
  readonly mapError?: ErrorMapper;
  /**
   * Aborted when the server stops: calls still arriving are not served (nor answered), and once
   * the calls in flight are answered the stream ends with status OK. So an OK end from the server
   * tells the client that every call it has no answer for was never served: safe to send elsewhere.
   */
  readonly drain?: AbortSignal;
}

export interface BatchedAnswer<Answer> {
  readonly id: string;
  readonly answer?: Answer;
  readonly status?: { code: number; message: string };
}

const STATUS_BYTES = 64;

/** Serves one stream until the client ends or cancels it. */
export function serveBatchedCalls<Call extends { id: string }, Answer>(
  stream: ServerDuplexStream<{ calls: Call[] }, { answers: BatchedAnswer<Answer>[] }>,
  options: BatchedCallsOptions<Call, Answer>,
): Promise<void> {
  let inFlight = 0;
  let ended = false;
  let closed = false;
  let batch: BatchedAnswer<Answer>[] = [];
  let batchBytes = 0;
  let flushScheduled = false;
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  let draining = false;
  /** Draining and nothing left to answer: the answers so far, then the OK end. */
  const endIfDrained = (): void => {
    if (!draining || inFlight > 0 || closed) return;
    if (batch.length > 0) stream.write({ answers: batch });
    batch = [];
    batchBytes = 0;
    closed = true;
    stream.end();
    finish();
  };

  const flush = (): void => {
    flushScheduled = false;
    if (batch.length > 0 && !closed) stream.write({ answers: batch });
    batch = [];
    batchBytes = 0;
    if (ended && inFlight === 0) finish();
    endIfDrained();
  };
  const send = (answered: BatchedAnswer<Answer>, bytes: number): void => {
    if (closed) return;
    batch.push(answered);
    batchBytes += bytes;
    if (batchBytes >= options.maxBatchBytes) flush();
    else if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };
  const serveOne = (call: Call): void => {
    if (draining) return; // never served: the OK end tells the client so
    const id = call.id;
    if (inFlight >= options.maxInFlightCount) return send({ id, answer: options.overloaded }, STATUS_BYTES);
    inFlight += 1;
    let running: Promise<Answer>;
    try {
      running = options.serve(call);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (answer) => {
        inFlight -= 1;
        send({ id, answer }, options.answerBytes(answer));
      },
      (error: unknown) => {
        inFlight -= 1;
        const status = toGrpcStatus(error, options.mapError);
        if (status.unmapped) options.logger.error({ err: error }, 'unmapped error answered as internal');
        send({ id, status: { code: status.code, message: status.details } }, STATUS_BYTES);
      },
    );
  };

  stream.on('data', (message: { calls: Call[] }) => {
    for (const call of message.calls) serveOne(call);
  });
  stream.on('end', () => {
    ended = true;
    if (inFlight === 0 && !flushScheduled) finish();
  });
  const close = (): void => {
    closed = true;
    finish();
  };
  stream.on('cancelled', close);
  stream.on('error', close);
  const startDrain = (): void => {
    draining = true;
    if (!flushScheduled) endIfDrained();
  };
  if (options.drain?.aborted) startDrain();
  else options.drain?.addEventListener('abort', startDrain, { once: true });
  void done.then(() => options.drain?.removeEventListener('abort', startDrain));
  return done;
}

/** The framing of the calls' stream: its codecs, bounds and keepalive, and the client's preface. */
export type FramedCallsOptions<Call, Answer> = Pick<
  FramedStreamOptions<{ answers: BatchedAnswer<Answer>[] }, { calls: Call[] }>,
  'serialize' | 'deserialize' | 'maxReceiveBytes' | 'aliveIntervalMs' | 'silenceLimitMs'
> & {
  /** What the client sends first (checked and skipped). */
  readonly preface: Buffer;
};

/**
 * The same calls on a framed stream (framed-stream.ts) instead of a gRPC stream: a connection the
 * client opened with `framing.preface`. No new calls are read while the answers wait unwritten.
 * Resolves when the stream is over (the connection then ends, after END when this side drained).
 */
export function serveFramedCalls<Call extends { id: string }, Answer>(socket: Duplex, framing: FramedCallsOptions<Call, Answer>, options: BatchedCallsOptions<Call, Answer>): Promise<void> {
  const stream = new FramedStream<{ answers: BatchedAnswer<Answer>[] }, { calls: Call[] }>(
    socket,
    {
      ...framing,
      pauseReadsWhileBlocked: true,
      // Tells the client at once that this side speaks the protocol (see FramedStreamError.foreign).
      greet: true,
    },
    framing.preface,
  );
  return serveBatchedCalls(stream as never, options).then(() => stream.end());
}
