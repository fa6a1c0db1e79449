// The gateway side of the BullMQ tier: a PasswordVerifier whose work runs on password-verifier
// workers. Requests are sealed (payload-sealer.ts), bounded in number, and time out; results
// arrive through one QueueEvents subscription and are matched to requests by job id.
import {
  PASSWORD_JOB_SCHEMA_VERSION,
  PasswordError,
  checkResultEnvelope,
  checkedBcryptHash,
  decodeResultPlaintext,
  encodeRequestPlaintext,
  passwordBytesForHashing,
  passwordBytesForVerifying,
  sealAssociatedData,
  type PasswordJobName,
  type PasswordRequest,
  type PasswordRequestEnvelope,
  type PasswordResult,
  type PasswordResultEnvelope,
  type PasswordVerifier,
} from '@ward/auth/password-jobs';
import type { Clock } from '@ward/shared/clock';
import { assert } from '@ward/shared/errors';
import { createQueue, createQueueEvents, type JobRetention, type QueueEvents, type RedisConnectionOptions } from '@ward/platform/redis-queue';
import { newRequestId, type PayloadSealer } from './payload-sealer';

export interface QueuePasswordVerifierOptions {
  readonly queueName: string;
  readonly prefix: string;
  readonly connection: RedisConnectionOptions;
  readonly sealer: PayloadSealer;
  /** A request not answered within this fails with TIER_TIMEOUT; it is also the job's deadline. */
  readonly requestTimeoutMs: number;
  /** Requests in flight at once; one more fails at once with TIER_BUSY. */
  readonly maxOutstanding: number;
  /** Tries per job (a worker crash is a stall, not a try: see the worker's maxStalledCount). */
  readonly attempts: number;
  readonly backoffDelayMs: number;
  /** Failed jobs kept for diagnosis (their data is sealed). Completed jobs are removed at once. */
  readonly failedRetention: JobRetention;
  readonly eventsMaxLenCount: number;
  readonly clock: Clock;
}

interface Pending {
  readonly name: PasswordJobName;
  readonly resolve: (result: PasswordResult) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** Largest job data: the sealed verify envelope is about 300 bytes. */
const JOB_DATA_LIMIT_BYTES = 1024;

export class QueuePasswordVerifier implements PasswordVerifier {
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  private constructor(
    private readonly options: QueuePasswordVerifierOptions,
    private readonly queue: ReturnType<typeof createQueue<PasswordRequestEnvelope, PasswordResultEnvelope, PasswordJobName>>,
    private readonly events: QueueEvents,
  ) {
    // Connection errors while Redis is away: the calls fail on their own (TIER_FAILED, TIMEOUT) and
    // the service's Redis probe logs the outage once; BullMQ would print each reconnection attempt.
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    events.on('completed', (args) => this.onCompleted(args.jobId, args.returnvalue));
    events.on('failed', (args) => this.onFailed(args.jobId, args.failedReason));
  }

  /** Connects the producer and the event subscription (ready before it returns). */
  static async create(options: QueuePasswordVerifierOptions): Promise<QueuePasswordVerifier> {
    for (const name of ['requestTimeoutMs', 'maxOutstanding'] as const) {
      if (!Number.isSafeInteger(options[name]) || options[name] < 1) throw new TypeError(`QueuePasswordVerifier: ${name} must be a positive integer`);
    }
    const queue = createQueue<PasswordRequestEnvelope, PasswordResultEnvelope, PasswordJobName>({
      name: options.queueName,
      prefix: options.prefix,
      connection: options.connection,
      jobs: {
        attempts: options.attempts,
        backoffDelayMs: options.backoffDelayMs,
        removeOnComplete: true,
        removeOnFail: options.failedRetention,
        stackTraceLimit: 0,
        dataLimitBytes: JOB_DATA_LIMIT_BYTES,
      },
      eventsMaxLenCount: options.eventsMaxLenCount,
    });
    await queue.waitUntilReady();
    const events = await createQueueEvents({ name: options.queueName, prefix: options.prefix, connection: options.connection, blockingTimeoutMs: 5000 });
    return new QueuePasswordVerifier(options, queue, events);
  }

  /** Requests in flight. */
  get outstanding(): number {
    return this.pending.size;
  }

  async hash(password: Uint8Array): Promise<Uint8Array> {
    const result = await this.submit({ name: 'hash', password: passwordBytesForHashing(password) });
    assert(result.name === 'hash', 'a hash request gets a hash result');
    return result.hash;
  }

  async verify(password: Uint8Array, hash: Uint8Array): Promise<boolean> {
    checkedBcryptHash(hash); // fail fast, before Redis, on a hash the worker would refuse
    const result = await this.submit({ name: 'verify', password: passwordBytesForVerifying(password), hash });
    assert(result.name === 'verify', 'a verify request gets a verify result');
    return result.match;
  }

  /** Fails every request in flight with TIER_CLOSED and closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [requestId, pending] of this.pending) this.settle(requestId, pending, () => pending.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED')));
    await Promise.allSettled([this.events.close(), this.queue.close()]);
  }

  private async submit(request: PasswordRequest): Promise<PasswordResult> {
    const plaintext = encodeRequestPlaintext(request);
    request.password.fill(0);
    try {
      if (this.closed) throw new PasswordError('ERR_AUTH_PASSWORD_TIER_CLOSED');
      if (this.pending.size >= this.options.maxOutstanding) throw new PasswordError('ERR_AUTH_PASSWORD_TIER_BUSY', { limit: this.options.maxOutstanding });
      const envelope = this.sealRequest(request.name, plaintext);
      return await this.enqueue(request.name, envelope);
    } finally {
      plaintext.fill(0);
    }
  }

  private sealRequest(name: PasswordJobName, plaintext: Uint8Array): PasswordRequestEnvelope {
    const requestId = newRequestId();
    const keyId = this.options.sealer.activeKeyId;
    const deadlineMs = this.options.clock.nowMs() + this.options.requestTimeoutMs;
    const associatedData = sealAssociatedData({ direction: 'request', name, requestId, keyId, deadlineMs });
    const sealed = this.options.sealer.seal({ keyId, requestId, direction: 'request', associatedData, plaintext });
    return { v: PASSWORD_JOB_SCHEMA_VERSION, requestId, keyId, deadlineMs, nonce: sealed.nonce, sealed: sealed.sealed };
  }

  private enqueue(name: PasswordJobName, envelope: PasswordRequestEnvelope): Promise<PasswordResult> {
    const { requestId } = envelope;
    return new Promise<PasswordResult>((resolve, reject) => {
      const timer = setTimeout(() => this.onTimeout(requestId), this.options.requestTimeoutMs);
      // Registered before the job exists, so its completion cannot be missed.
      this.pending.set(requestId, { name, resolve, reject, timer });
      this.queue.add(name, envelope, { jobId: requestId }).catch((error: unknown) => {
        const pending = this.pending.get(requestId);
        if (pending) this.settle(requestId, pending, () => pending.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'enqueue', cause: error })));
      });
    });
  }

  private onCompleted(jobId: string, returnvalue: unknown): void {
    const pending = this.pending.get(jobId);
    if (pending === undefined) return; // another gateway's job, or one that timed out
    const opened = this.openResult(jobId, pending.name, returnvalue);
    this.settle(jobId, pending, () =>
      opened === undefined ? pending.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: 'result-invalid' })) : pending.resolve(opened),
    );
  }

  private openResult(requestId: string, name: PasswordJobName, returnvalue: unknown): PasswordResult | undefined {
    const checked = checkResultEnvelope(name, returnvalue);
    if (!checked.ok || checked.value.requestId !== requestId) return undefined;
    const { keyId, nonce, sealed } = checked.value;
    const associatedData = sealAssociatedData({ direction: 'result', name, requestId, keyId });
    const plaintext = this.options.sealer.open({ keyId, requestId, direction: 'result', associatedData, nonce, sealed });
    if (plaintext === undefined) return undefined;
    const decoded = decodeResultPlaintext(name, plaintext);
    plaintext.fill(0);
    return decoded.ok ? decoded.value : undefined;
  }

  private onFailed(jobId: string, failedReason: string): void {
    const pending = this.pending.get(jobId);
    if (pending === undefined) return;
    this.settle(jobId, pending, () => pending.reject(errorFromFailure(failedReason)));
  }

  private onTimeout(requestId: string): void {
    const pending = this.pending.get(requestId);
    if (pending === undefined) return;
    this.settle(requestId, pending, () => pending.reject(new PasswordError('ERR_AUTH_PASSWORD_TIER_TIMEOUT', { limit: this.options.requestTimeoutMs })));
    // Best effort: a waiting job is removed; a running one finishes and its result is ignored.
    this.queue.remove(requestId).catch(() => undefined);
  }

  private settle(requestId: string, pending: Pending, action: () => void): void {
    clearTimeout(pending.timer);
    this.pending.delete(requestId);
    action();
  }
}

/** Maps a worker's failure reason (`CODE: reason`) back to a PasswordError. */
export function errorFromFailure(failedReason: string): PasswordError {
  const code = failedReason.split(':', 1)[0] ?? '';
  if (code === 'ERR_AUTH_PASSWORD_TOO_LONG' || code === 'ERR_AUTH_PASSWORD_HASH_MALFORMED') return new PasswordError(code, { reason: 'worker' });
  return new PasswordError('ERR_AUTH_PASSWORD_TIER_FAILED', { reason: /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'job-failed' });
}

