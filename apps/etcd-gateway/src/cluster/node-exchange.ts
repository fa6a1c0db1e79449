// The gateway's side of wardnode.Node/Exchange: Propose, Read, ReadIndex and AuthCheck calls to one
// member multiplexed on one long-lived stream instead of a grpc-js unary call (a new HTTP/2 stream,
// metadata and a deadline timer) each. The stream is a framed one (a plain connection to the API
// port: exchange-frames.ts) or grpc-js's. Calls made in one event-loop turn travel in one message;
// answers come back matched by id. Failures look exactly like the unary call's (objects with a
// gRPC `code` and `details`), so callers keep one error path: a broken stream fails its calls as
// UNAVAILABLE (outcome unknown for a proposal), an expired call as DEADLINE_EXCEEDED, a cancelled
// one as CANCELLED. A stream the member ends with status OK (it stops: see serveBatchedCalls' drain)
// fails its unanswered calls as UNAVAILABLE marked not served (isNotServed): safe to re-send.
import { status as Status } from '@grpc/grpc-js';
import { wireError } from '@ward/etcd/wire-errors';
import type { AuthCheckRequest, ExchangeAnswers__Output, ExchangeCall, ExchangeCalls, NodeResponse__Output, ProposeRequest, ReadIndexRequest, ReadRequest } from '@ward/etcd/proto';
import { isForeignFramedStream, type Cancellation } from '@ward/platform/grpc-server';

/** Calls waiting for an answer on one member's stream; more are refused with `too many requests`. */
export const MAX_EXCHANGE_PENDING_COUNT = 10_000;
/**
 * Bytes of calls that one member's stream holds unsent at most (written and not yet taken by its
 * connection, plus those queued for the next write; the kernel's socket buffers hold a few MiB
 * more): past it, whatever the cause (a member that reads slowly or not at all, a burst while the
 * connection is still being made), more calls are refused with `too many requests` until the
 * backlog shrinks. A member that takes nothing and sends nothing but keepalives for the
 * silence limit loses the connection (FramedStream). Framed streams only (grpc-js does not say
 * what it holds).
 */
export const MAX_EXCHANGE_UNSENT_BYTES = 64 * 1024 * 1024;
/** How often expired calls are looked for while some are pending. */
const DEADLINE_SWEEP_MS = 50;
/** An expired call still gets this long for the member's own timeout answer. */
const DEADLINE_GRACE_MS = 100;
/** Framing allowance per call on top of its entry. */
const CALL_OVERHEAD_BYTES = 64;

/**
 * One Exchange stream to a member, gRPC (grpc-js's client stream) or framed (a FramedStream):
 * 'error' for a stream that broke, 'end' for one the member ended in order (after answering every
 * call it served).
 */
export interface ExchangeStream {
  write(message: ExchangeCalls): unknown;
  /** Bytes written and not yet taken by the connection (a framed stream; gRPC's leave it out). */
  readonly unsentBytes?: number;
  cancel(): void;
  on(event: 'data', listener: (message: ExchangeAnswers__Output) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

interface Pending {
  readonly resolve: (answer: NodeResponse__Output) => void;
  readonly reject: (error: Error) => void;
  readonly deadlineMs: number;
  readonly signal: Cancellation | undefined;
  readonly onAbort: (() => void) | undefined;
  /** A Read, ReadIndex or AuthCheck: asked again elsewhere when abandoned (a proposal never is). */
  readonly idempotent: boolean;
}

export type ExchangeCallKind = { propose: ProposeRequest } | { read: ReadRequest } | { read_index: ReadIndexRequest } | { auth_check: AuthCheckRequest };

function callError(code: Status, details: string, notServed = false): Error {
  return Object.assign(new Error(details), { code, details, ...(notServed ? { notServed: true } : {}) });
}

/**
 * True for a call the member never served: its stream ended with status OK (a member that stops
 * answers what it serves, then ends the stream) before its answer came. Safe to send elsewhere,
 * a proposal included.
 */
export function isNotServed(error: unknown): boolean {
  return (error as { notServed?: unknown } | null)?.notServed === true;
}

function entryBytes(call: ExchangeCallKind): number {
  if ('read_index' in call) return 0;
  if ('auth_check' in call) return Buffer.byteLength(call.auth_check.name ?? '');
  const request = 'propose' in call ? call.propose : call.read;
  return (request.entry as Uint8Array | undefined)?.length ?? 0;
}

export interface NodeExchangeOptions {
  /** Largest message the channel sends: a batch is flushed before it would grow past it. */
  readonly maxSendBytes: number;
  /**
   * Bytes held unsent at most; at least maxSendBytes. By default MAX_EXCHANGE_UNSENT_BYTES, or room
   * for two of the largest batches when that is more (whatever --max-request-bytes is).
   */
  readonly maxUnsentBytes?: number;
  /** Epoch milliseconds (grpc-js deadlines and the callers' deadlines are wall-clock). */
  readonly nowMs: () => number;
}

export class NodeExchange {
  private stream: ExchangeStream | undefined;
  /** Pending calls of the open stream, by id. */
  private pending = new Map<string, Pending>();
  private queued: ExchangeCall[] = [];
  private queuedBytes = 0;
  private flushScheduled = false;
  private sweepTimer: NodeJS.Timeout | undefined;
  private lastId = 0;
  private closed = false;

  private readonly maxUnsentBytes: number;

  constructor(
    /** Opens a new stream to the member (connecting in the background: writes wait for it). */
    private readonly open: () => ExchangeStream,
    private readonly options: NodeExchangeOptions,
  ) {
    this.maxUnsentBytes = options.maxUnsentBytes ?? Math.max(MAX_EXCHANGE_UNSENT_BYTES, 2 * options.maxSendBytes);
    if (!(this.maxUnsentBytes >= options.maxSendBytes)) throw new RangeError(`maxUnsentBytes (${this.maxUnsentBytes}) must be at least maxSendBytes (${options.maxSendBytes})`);
  }

  /** One Propose or Read; resolves to the member's answer, rejects like grpc-js's unary call. */
  call(call: ExchangeCallKind, deadlineMs: number, signal?: Cancellation): Promise<NodeResponse__Output> {
    if (signal?.aborted) return Promise.reject(callError(Status.CANCELLED, 'cancelled before sending'));
    if (this.closed) return Promise.reject(callError(Status.UNAVAILABLE, 'connection closed'));
    // Not sent: etcd's `too many requests`, final (the cluster client passes etcd errors through).
    if (this.pending.size >= MAX_EXCHANGE_PENDING_COUNT) return Promise.reject(wireError('TooManyRequests'));
    const bytes = entryBytes(call) + CALL_OVERHEAD_BYTES;
    if (this.queuedBytes + bytes > this.options.maxSendBytes) this.flush();
    if ((this.stream?.unsentBytes ?? 0) + this.queuedBytes + bytes > this.maxUnsentBytes) return Promise.reject(wireError('TooManyRequests'));
    this.lastId += 1;
    const id = String(this.lastId);
    const pending = this.pending;
    return new Promise<NodeResponse__Output>((resolve, reject) => {
      const onAbort =
        signal === undefined
          ? undefined
          : () => {
              // The member may still serve it; its answer then finds no one waiting.
              if (pending.delete(id)) reject(callError(Status.CANCELLED, 'cancelled'));
            };
      pending.set(id, { resolve, reject, deadlineMs, signal, onAbort, idempotent: !('propose' in call) });
      signal?.addEventListener('abort', onAbort!, { once: true });
      this.queued.push({ id, ...call });
      this.queuedBytes += bytes;
      this.scheduleFlush();
      this.scheduleSweep();
    });
  }

  /**
   * Another member leads now: pending reads fail at once as UNAVAILABLE (the cluster client asks
   * the leader again); proposals keep waiting for their answer.
   */
  abandonReads(): void {
    for (const [id, waiter] of this.pending) {
      if (!waiter.idempotent) continue;
      this.pending.delete(id);
      if (waiter.onAbort !== undefined) waiter.signal!.removeEventListener('abort', waiter.onAbort);
      waiter.reject(callError(Status.UNAVAILABLE, 'another member leads now'));
    }
  }

  /** Ends the stream; calls still pending fail as UNAVAILABLE. */
  close(): void {
    this.closed = true;
    this.queued = [];
    this.queuedBytes = 0;
    const stream = this.stream;
    this.stream = undefined;
    this.failAll(this.pending, 'connection closed');
    stream?.cancel();
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.queued.length === 0) return;
    const calls = this.queued;
    this.queued = [];
    this.queuedBytes = 0;
    this.openStream().write({ calls });
  }

  private openStream(): ExchangeStream {
    if (this.stream !== undefined) return this.stream;
    const stream = this.open();
    const pending = this.pending;
    this.stream = stream;
    stream.on('data', (message: ExchangeAnswers__Output) => {
      for (const answer of message.answers) {
        const waiter = pending.get(answer.id);
        if (waiter === undefined) continue;
        pending.delete(answer.id);
        if (waiter.onAbort !== undefined) waiter.signal!.removeEventListener('abort', waiter.onAbort);
        if (answer.outcome === 'answer' && answer.answer) waiter.resolve(answer.answer);
        else waiter.reject(callError((answer.status?.code ?? Status.INTERNAL) as Status, answer.status?.message ?? 'no answer'));
      }
    });
    /** `notServed`: the member served none of the calls left (it ended in order, or never spoke the protocol). */
    const broken = (notServed: boolean, details: string): void => {
      if (this.stream === stream) {
        // Calls queued for this stream are in its pending map: they fail with it, unsent.
        this.stream = undefined;
        this.pending = new Map();
        this.queued = [];
        this.queuedBytes = 0;
      }
      this.failAll(pending, details, notServed);
    };
    // grpc-js reports a status other than OK as 'error' before the stream's 'end'; an 'end' with no
    // error before it is the member's OK end (a framed stream's END), after which no unanswered
    // call was served.
    stream.on('error', (error: Error) =>
      isForeignFramedStream(error) ? broken(true, 'the member does not take framed Exchange streams; call not served') : broken(false, 'stream to the member ended'),
    );
    stream.on('end', () => broken(true, 'the member ended the stream (stopping); call not served'));
    return stream;
  }

  private failAll(pending: Map<string, Pending>, details: string, notServed = false): void {
    const waiters = [...pending.values()];
    pending.clear();
    for (const waiter of waiters) {
      if (waiter.onAbort !== undefined) waiter.signal!.removeEventListener('abort', waiter.onAbort);
      waiter.reject(callError(Status.UNAVAILABLE, details, notServed));
    }
  }

  /** One coarse timer instead of one per call: expired calls fail as DEADLINE_EXCEEDED. */
  private scheduleSweep(): void {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = setInterval(() => {
      const nowMs = this.options.nowMs();
      for (const [id, waiter] of this.pending) {
        if (nowMs < waiter.deadlineMs + DEADLINE_GRACE_MS) continue;
        this.pending.delete(id);
        if (waiter.onAbort !== undefined) waiter.signal!.removeEventListener('abort', waiter.onAbort);
        waiter.reject(callError(Status.DEADLINE_EXCEEDED, 'deadline exceeded'));
      }
      if (this.pending.size === 0) {
        clearInterval(this.sweepTimer);
        this.sweepTimer = undefined;
      }
    }, DEADLINE_SWEEP_MS);
    this.sweepTimer.unref();
  }
}
