// The token-service's calls into the cluster, at the leader: the raft-nodes' linearizable
// AuthCheck (the user's stored credential and the auth revision) and proposals of the signing-key
// directory operations. A follower answers NotLeader with the leader's address; unreachable
// members are skipped; every call has one deadline and a bounded number of tries with jittered
// backoff (the gateway's ClusterClient follows the same rules for its many more methods, and reads
// answers and backs off with the same `@ward/etcd/node-calls`). A proposal whose outcome is unknown
// is retried only when repeating it is harmless.
import { credentials, status as Status, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import { backoffDelayMs, nodeWireError, readErrorAttempt, sleep, writeAttempt, type Attempt, type RetryBounds } from '@ward/etcd/node-calls';
import { wardNodeGrpc, type AuthCheck__Output, type AuthCheckResponse__Output, type NodeClient, type NodeResponse__Output } from '@ward/etcd/proto';
import { wireError } from '@ward/etcd/wire-errors';
import type { Logger } from '@ward/platform/logging';
import type { Clock, Rng } from '@ward/shared/clock';

export interface AuthReaderOptions {
  readonly endpoints: readonly string[];
  /** Budget of one read, retries included. */
  readonly requestTimeoutMs: number;
  readonly retry: RetryBounds;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly credentials?: ChannelCredentials;
}

/** Channels held at most: the configured members plus leader addresses learnt from hints. */
const MAX_CHANNELS_COUNT = 32;
/** Largest answer accepted (an AuthCheck, or the signing-key directory: 256 keys of at most 4 KiB). */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** Largest request sent (a name of at most 64 KiB, or a key record). */
const MAX_SEND_BYTES = 128 * 1024;

export class AuthReader {
  private readonly channels = new Map<string, NodeClient>();
  private leader: string | undefined;
  private cursor = 0;
  private closed = false;

  constructor(private readonly options: AuthReaderOptions) {
    if (options.endpoints.length === 0) throw new TypeError('AuthReader: at least one endpoint');
  }

  /** etcd's auth state for `name` at the leader (linearizable). */
  authCheck(name: string, signal?: AbortSignal): Promise<AuthCheck__Output> {
    return this.run(signal, (address, deadlineMs) => this.authCheckAt(address, name, deadlineMs));
  }

  /**
   * Proposes an encoded ApplyRequest; resolves to the encoded response. `idempotent`: a proposal
   * whose outcome is unknown (the connection broke after sending) may be sent again.
   */
  propose(entry: Uint8Array, idempotent: boolean, signal?: AbortSignal): Promise<Buffer> {
    return this.run(signal, (address, deadlineMs) => this.proposeAt(address, entry, idempotent, deadlineMs));
  }

  private async run<T>(signal: AbortSignal | undefined, attempt: (address: string, deadlineMs: number) => Promise<Attempt<T>>): Promise<T> {
    if (this.closed) throw wireError('Stopped');
    const deadlineMs = this.options.clock.nowMs() + this.options.requestTimeoutMs;
    let lastError: Error | undefined;
    for (let tryNumber = 1; tryNumber <= this.options.retry.maxAttemptsCount; tryNumber++) {
      if (signal?.aborted) throw wireError('Canceled');
      if (this.options.clock.nowMs() >= deadlineMs) throw wireError('Timeout');
      const address = this.leader ?? this.options.endpoints[this.cursor % this.options.endpoints.length]!;
      const outcome = await attempt(address, deadlineMs);
      if (outcome.kind === 'done') {
        this.leader = address;
        return outcome.value;
      }
      if (outcome.kind === 'fail') throw outcome.error;
      if (outcome.kind === 'redirect' && outcome.leaderAddress !== '' && outcome.leaderAddress !== address && (this.channels.has(outcome.leaderAddress) || this.channels.size < MAX_CHANNELS_COUNT)) {
        this.leader = outcome.leaderAddress;
        continue;
      }
      if (outcome.kind === 'retry') lastError = outcome.error;
      this.moveOn(address);
      await this.pause(tryNumber, deadlineMs, signal);
    }
    throw lastError ?? wireError('NoLeader');
  }

  close(): void {
    this.closed = true;
    for (const channel of this.channels.values()) channel.close();
    this.channels.clear();
  }

  private transportOutcome(address: string, error: ServiceError, retryable: boolean): Attempt<never> {
    if (error.code === Status.DEADLINE_EXCEEDED) return { kind: 'fail', error: wireError('Timeout') };
    if (error.code === Status.UNAVAILABLE || error.code === Status.CANCELLED || error.code === Status.INTERNAL) {
      return retryable ? { kind: 'retry', error: wireError('NoLeader') } : { kind: 'fail', error: wireError('TimeoutDueToConnectionLost') };
    }
    this.options.logger.warn({ node: address, code: error.code }, 'unexpected answer from a raft-node');
    return { kind: 'fail', error: wireError('Unhealthy') };
  }

  private authCheckAt(address: string, name: string, deadlineMs: number): Promise<Attempt<AuthCheck__Output>> {
    return new Promise((resolve) => {
      this.channel(address).AuthCheck({ name }, { deadline: deadlineMs }, (error: ServiceError | null, answer?: AuthCheckResponse__Output) => {
        if (error !== null) return resolve(this.transportOutcome(address, error, true));
        if (answer?.result === 'check' && answer.check) resolve({ kind: 'done', value: answer.check });
        else if (answer?.result === 'not_leader') resolve({ kind: 'redirect', leaderAddress: answer.not_leader?.leader_address ?? '' });
        else resolve(readErrorAttempt(answer?.error));
      });
    });
  }

  private proposeAt(address: string, entry: Uint8Array, idempotent: boolean, deadlineMs: number): Promise<Attempt<Buffer>> {
    const timeoutMs = Math.max(1, deadlineMs - this.options.clock.nowMs());
    return new Promise((resolve) => {
      this.channel(address).Propose({ entry, timeout_ms: timeoutMs }, { deadline: deadlineMs }, (error: ServiceError | null, answer?: NodeResponse__Output) => {
        if (error !== null) return resolve(this.transportOutcome(address, error, idempotent));
        // Only a NotLeader or `no leader` (refused before proposing) is tried again.
        resolve(answer === undefined ? { kind: 'fail', error: nodeWireError(undefined) } : writeAttempt(answer));
      });
    });
  }

  private moveOn(address: string): void {
    if (this.leader === address) this.leader = undefined;
    const index = this.options.endpoints.indexOf(address);
    this.cursor = index >= 0 ? index + 1 : this.cursor + 1;
  }

  private async pause(tryNumber: number, deadlineMs: number, signal?: AbortSignal): Promise<void> {
    const delayMs = Math.min(backoffDelayMs(tryNumber, this.options.retry, this.options.rng), Math.max(0, deadlineMs - this.options.clock.nowMs()));
    try {
      await sleep(delayMs, signal);
    } catch {
      throw wireError('Canceled');
    }
  }

  private channel(address: string): NodeClient {
    let channel = this.channels.get(address);
    if (channel === undefined) {
      const Node = wardNodeGrpc().Node;
      channel = new Node(address, this.options.credentials ?? credentials.createInsecure(), {
        'grpc.max_receive_message_length': MAX_ANSWER_BYTES,
        'grpc.max_send_message_length': MAX_SEND_BYTES,
        'grpc.initial_reconnect_backoff_ms': 100,
        'grpc.max_reconnect_backoff_ms': 2000,
        'grpc.enable_retries': 0,
        'grpc.enable_channelz': 0,
      });
      this.channels.set(address, channel);
    }
    return channel;
  }
}
