// The gateway's view of the raft-node cluster: connections to every member, a guess of who leads,
// and one bounded retry loop. Writes go to the leader and are retried only when nothing was
// proposed (NotLeader, no leader, not sent); reads are idempotent and retried on any
// unavailability. Every call has a deadline.
import { status as Status, type ClientDuplexStream, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import type { Logger } from '@ward/platform/logging';
import type { Clock, Rng } from '@ward/shared/clock';
import { assert } from '@ward/shared/errors';
import { isWireError, wireError } from '@ward/etcd/wire-errors';
import type {
  AuthCheck__Output,
  FollowMessage__Output,
  NodeLeaseRequest,
  NodeMaintainRequest,
  NodeMemberChangeRequest,
  NodeMemberListResponse__Output,
  NodeResponse__Output,
  NodeSnapshotRequest,
  NodeStatusResponse__Output,
  NodeWatchRequest,
  NodeWatchResponse__Output,
  ResolveTokenResponse__Output,
} from '@ward/etcd/proto';
import { backoffDelayMs, readAttempt, readErrorAttempt, writeAttempt, type Attempt, type RetryBounds } from '@ward/etcd/node-calls';
import { NodeConnection, isTransportFailure, type ChannelKind, type NodeConnectionOptions, type NodeUnaryMethod } from './node-connection';
import { isNotServed } from './node-exchange';
import { abortSignalOf, type Cancellation } from '@ward/platform/grpc-server';

export interface ClusterClientOptions {
  /** Internal API addresses of the members (host:port). */
  readonly endpoints: readonly string[];
  /** Budget of one request, retries included. */
  readonly requestTimeoutMs: number;
  readonly resolveTokenTimeoutMs: number;
  readonly retry: RetryBounds;
  readonly connection: NodeConnectionOptions;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
}

/** What a simple token resolves to. */
export interface ResolvedToken {
  readonly valid: boolean;
  readonly username: string;
  readonly authRevision: number;
}

/** Connections held at most: the configured members plus leader addresses learnt from hints. */
const MAX_CONNECTIONS_COUNT = 32;
/** How long one try waits for a channel to connect before trying another member. */
const CONNECT_WAIT_MS = 1000;

/** An internal Snapshot stream whose first chunk (an encoded etcd SnapshotResponse) was read. */
export interface OpenedSnapshot {
  readonly first: Buffer;
  readonly stream: ClientReadableStream<NodeResponse__Output>;
}

/** Cancels a stream whose answers are no longer wanted (its CANCELLED error is expected). */
/** Cancels a stream nobody reads any more, silencing the CANCELLED error the cancel reports. */
export function discardStream(stream: { on(event: 'error', listener: () => void): unknown; cancel(): void }): void {
  stream.on('error', () => undefined);
  stream.cancel();
}

/** The first message of a server stream (undefined when it ends without one). */
function firstMessage<T>(stream: ClientReadableStream<T>, signal?: Cancellation): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      stream.off('data', onData);
      stream.off('error', onError);
      stream.off('end', onEnd);
      signal?.removeEventListener('abort', onAbort);
    };
    const onData = (message: T): void => {
      cleanup();
      stream.pause();
      resolve(message);
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(undefined);
    };
    const onAbort = (): void => {
      cleanup();
      discardStream(stream);
      reject(wireError('Canceled'));
    };
    stream.on('data', onData);
    stream.once('error', onError);
    stream.once('end', onEnd);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

type TryFunction<T> = (connection: NodeConnection, deadlineMs: number, signal?: Cancellation) => Promise<Attempt<T>>;

/** A leader the members' leader watches named: its member id and the address calls reach it at. */
export interface NamedLeader {
  readonly id: bigint;
  readonly address: string;
}

/** A member's leader watch that ended is opened again after this, doubling up to the max. */
const LEADER_WATCH_MIN_RETRY_MS = 100;
const LEADER_WATCH_MAX_RETRY_MS = 2000;

/** One member's WatchLeader stream and its reopening. */
interface LeaderWatch {
  stream: ClientReadableStream<NodeStatusResponse__Output> | undefined;
  retryMs: number;
  timer: NodeJS.Timeout | undefined;
}

export class ClusterClient {
  private readonly connections = new Map<string, NodeConnection>();
  private leaderAddress: string | undefined;
  /** The highest term in which a member's leader watch named a leader (0: none yet). */
  private leaderTerm = 0;
  /** The leader the members' watches named last (kept when calls move on from an unreachable one). */
  private namedLeaderValue: NamedLeader | undefined;
  /** Told each time the members' watches name a leader other than the last (onLeaderNamed). */
  private readonly leaderListeners = new Set<(leader: NamedLeader) => void>();
  /**
   * The leader a newer term's leader replaced, until its own leader watch speaks again: a leader
   * that went silent keeps its connections open, so a call sent there would wait for its deadline.
   */
  private deposedAddress: string | undefined;
  private readonly leaderWatches = new Map<string, LeaderWatch>();
  /** Requests pausing between tries (one entry each while it pauses): a new leader ends the pauses. */
  private readonly pausedTries = new Set<() => void>();
  private cursor = 0;
  private highestAppliedIndexValue = 0;
  private closed = false;

  constructor(private readonly options: ClusterClientOptions) {
    if (options.endpoints.length === 0) throw new TypeError('ClusterClient: at least one endpoint');
    if (options.retry.maxAttemptsCount < 1) throw new TypeError('ClusterClient: retry.maxAttemptsCount must be ≥ 1');
  }

  /** The address the next leader-bound request goes to (for logs and tests). */
  get currentTarget(): string {
    if (this.leaderAddress !== undefined) return this.leaderAddress;
    const endpoints = this.options.endpoints;
    const address = endpoints[this.cursor % endpoints.length]!;
    return address === this.deposedAddress && endpoints.length > 1 ? endpoints[(this.cursor + 1) % endpoints.length]! : address;
  }

  /** The leader the members' leader watches named last (undefined until one has). */
  get namedLeader(): NamedLeader | undefined {
    return this.namedLeaderValue;
  }

  /**
   * Calls `listener` each time the members' leader watches name a leader other than the one named
   * last (the first included); returns what removes it.
   */
  onLeaderNamed(listener: (leader: NamedLeader) => void): () => void {
    this.leaderListeners.add(listener);
    return () => this.leaderListeners.delete(listener);
  }

  /** The replaced leader calls pass over for now (for tests). */
  get deposedLeader(): string | undefined {
    return this.deposedAddress;
  }

  /** Proposes an encoded ApplyRequest; resolves to the encoded etcd response. */
  propose(entry: Uint8Array, signal?: Cancellation): Promise<Buffer> {
    return this.run('Propose', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, deadlineMs - this.nowMs());
      try {
        const answer = await connection.exchangeCall({ propose: { entry, timeout_ms: timeoutMs } }, deadlineMs, callSignal);
        const appliedIndex = Number(answer.applied_index);
        if (appliedIndex > this.highestAppliedIndexValue) this.highestAppliedIndexValue = appliedIndex;
        return writeAttempt(answer);
      } catch (error) {
        // A member that stops ends its stream after answering what it proposed: the rest was never proposed.
        if (isNotServed(error) && !callSignal?.aborted) return { kind: 'retry', error: wireError('NoLeader') };
        // The request may have reached the leader: its outcome is unknown, so it is not re-sent.
        return { kind: 'fail', error: this.unknownOutcome(error, callSignal) };
      }
    });
  }

  /** A Range or read-only Txn; linearizable unless `serializable`. */
  read(entry: Uint8Array, serializable: boolean, signal?: Cancellation): Promise<Buffer> {
    return this.run('Read', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, deadlineMs - this.nowMs());
      try {
        const answer = await connection.exchangeCall({ read: { entry, serializable, timeout_ms: timeoutMs } }, deadlineMs, callSignal);
        return readAttempt(answer);
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /**
   * The highest applied index a member reported with an answered proposal: every write this
   * gateway acknowledged is at or below it (a read replica that reached it has them all).
   */
  get highestAppliedIndex(): number {
    return this.highestAppliedIndexValue;
  }

  /** The cluster's read index (Raft ReadIndex, confirmed by a quorum), asked at the leader. */
  readIndex(signal?: Cancellation): Promise<number> {
    return this.run('Read', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, deadlineMs - this.nowMs());
      try {
        const answer = await connection.exchangeCall({ read_index: { timeout_ms: timeoutMs } }, deadlineMs, callSignal);
        if (answer.result === 'read_index') return { kind: 'done', value: Number(answer.read_index) };
        const attempt = readAttempt(answer);
        return attempt.kind === 'done' ? { kind: 'fail', error: this.unexpected(new Error('ReadIndex answered with a response')) } : attempt;
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /**
   * Opens a Follow stream (a read replica's feed) at the first reachable member, starting with the
   * leader the members' watches named when `fromLeader` (it applies first, and its feed leaves
   * with its answers to this gateway's calls), else with the current target. On the member's
   * stream channel, asking to go on from `from` (an applied index and its entry's term) when
   * given, and for no state larger than `maxSnapshotBytes` (0: any).
   */
  async openFollow(from: { readonly index: number; readonly term: number } | undefined, maxSnapshotBytes: number, fromLeader = true): Promise<ClientReadableStream<FollowMessage__Output>> {
    this.assertOpen();
    const request = { ...(from === undefined ? {} : { from_index: from.index, from_term: from.term }), max_snapshot_bytes: maxSnapshotBytes };
    const named = fromLeader ? this.namedLeaderValue?.address : undefined;
    for (let tries = 0; tries < this.options.endpoints.length; tries++) {
      const first = tries === 0 && named !== undefined && named !== this.deposedAddress;
      const connection = this.connectionTo(first ? named : this.currentTarget);
      if (await connection.waitReady(this.nowMs() + CONNECT_WAIT_MS, 'streams')) return connection.streamClient.Follow(request);
      this.moveOn(connection);
    }
    throw wireError('Unhealthy');
  }

  /** Linearizable read of what Authenticate needs (also tells whether auth is enabled). */
  authCheck(name: string, signal?: Cancellation): Promise<AuthCheck__Output> {
    return this.run('AuthCheck', signal, async (connection, deadlineMs, callSignal) => {
      try {
        const answer = await connection.authCheck(name, deadlineMs, callSignal);
        if (answer.result === 'check' && answer.check) return { kind: 'done', value: answer.check };
        if (answer.result === 'not_leader') return { kind: 'redirect', leaderAddress: answer.not_leader?.leader_address ?? '' };
        return readErrorAttempt(answer.error);
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /** Resolves a simple token at the leader (which waits, bounded, for the token's index). */
  resolveToken(token: string, signal?: Cancellation): Promise<ResolvedToken> {
    return this.run('ResolveToken', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, Math.min(this.options.resolveTokenTimeoutMs, deadlineMs - this.nowMs()));
      try {
        const answer = await connection.call<ResolveTokenResponse__Output>('ResolveToken', { token, timeout_ms: timeoutMs }, deadlineMs, callSignal);
        this.noteLeader(connection, answer.leader_address);
        return { kind: 'done', value: { valid: answer.valid, username: answer.username, authRevision: Number(answer.auth_revision) } };
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /**
   * A lessor query (keep-alive renewal, time-to-live, list) at the leader, which alone knows
   * deadlines; resolves to the encoded etcd response. Answering changes no replicated state, so
   * any unavailability is retried like a read.
   */
  lease(request: Omit<NodeLeaseRequest, 'timeout_ms'>, signal?: Cancellation): Promise<Buffer> {
    return this.run('Lease', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, deadlineMs - this.nowMs());
      try {
        const answer = await connection.call<NodeResponse__Output>('Lease', { ...request, timeout_ms: timeoutMs }, deadlineMs, callSignal);
        const attempt = readAttempt(answer);
        if (attempt.kind === 'done') this.leaderAddress = connection.address;
        return attempt;
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /**
   * An admin-only Maintenance request at the leader, which decides the admin check. Retried like a
   * read: Defragment has nothing to repeat and a second MoveLeader to the same member is harmless.
   */
  maintain(request: Omit<NodeMaintainRequest, 'timeout_ms'>, signal?: Cancellation): Promise<Buffer> {
    return this.run('Maintain', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, deadlineMs - this.nowMs());
      try {
        const answer = await connection.call<NodeResponse__Output>('Maintain', { ...request, timeout_ms: timeoutMs }, deadlineMs, callSignal);
        return writeAttempt(answer);
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /**
   * A membership change (MemberAdd / MemberRemove / MemberUpdate / MemberPromote) at the leader,
   * which decides the admin check and etcd's refusals; resolves to the encoded etcd response.
   * Like a proposal, it is not re-sent once it may have reached the leader (a second MemberAdd
   * would add a second member).
   */
  memberChange(request: Omit<NodeMemberChangeRequest, 'timeout_ms'>, signal?: Cancellation): Promise<Buffer> {
    return this.run('MemberChange', signal, async (connection, deadlineMs, callSignal) => {
      const timeoutMs = Math.max(1, deadlineMs - this.nowMs());
      try {
        const answer = await connection.call<NodeResponse__Output>('MemberChange', { ...request, timeout_ms: timeoutMs }, deadlineMs, callSignal);
        return writeAttempt(answer);
      } catch (error) {
        return { kind: 'fail', error: this.unknownOutcome(error, callSignal) };
      }
    });
  }

  /**
   * Opens etcd's Snapshot at the leader, which decides the admin check: retried (like a read) until
   * a member answers with the first chunk or a final error. The stream itself has no deadline (a
   * large state takes as long as the client reads); the first answer is bounded by the request
   * timeout.
   */
  openSnapshot(request: NodeSnapshotRequest, signal?: Cancellation): Promise<OpenedSnapshot> {
    return this.run('Snapshot', signal, async (connection, deadlineMs, callSignal) => {
      const stream = connection.snapshotClient.Snapshot(request);
      const timer = setTimeout(() => discardStream(stream), Math.max(1, deadlineMs - this.nowMs()));
      let first: NodeResponse__Output | undefined;
      try {
        first = await firstMessage(stream, callSignal);
      } catch (error) {
        discardStream(stream);
        return this.idempotentFailure(error, callSignal);
      } finally {
        clearTimeout(timer);
      }
      if (first === undefined) return { kind: 'fail', error: this.unexpected(new Error('snapshot stream ended without an answer')) };
      const attempt = readAttempt(first);
      if (attempt.kind !== 'done') {
        discardStream(stream);
        return attempt;
      }
      return { kind: 'done', value: { first: attempt.value, stream } };
    });
  }

  /** The status of the member the next request goes to (response headers, health, version). */
  status(signal?: Cancellation): Promise<NodeStatusResponse__Output> {
    return this.simpleCall<NodeStatusResponse__Output>('Status', signal);
  }

  /**
   * The leader's status, for etcd's Maintenance.Status: the gateway is the one endpoint clients
   * see, and tools such as `etcdctl move-leader` look for the endpoint that leads; so an answer
   * from a follower is replaced by the leader's, asked once (bounded by CONNECT_WAIT_MS), and kept
   * when the leader cannot be reached. The leader's address also becomes the target of the next
   * proposal.
   */
  async leaderStatus(signal?: Cancellation): Promise<NodeStatusResponse__Output> {
    const status = await this.status(signal);
    const address = status.leader_address;
    if (status.leader_id === status.member_id || status.leader_id === '0' || address === '' || address === this.deposedAddress) return status;
    if (!this.connections.has(address) && this.connections.size >= MAX_CONNECTIONS_COUNT) return status;
    try {
      const leader = await this.connectionTo(address).call<NodeStatusResponse__Output>('Status', {}, this.nowMs() + CONNECT_WAIT_MS, signal);
      if (leader.leader_id !== leader.member_id) return status;
      this.leaderAddress = address;
      return leader;
    } catch {
      return status;
    }
  }

  memberList(signal?: Cancellation): Promise<NodeMemberListResponse__Output> {
    return this.simpleCall<NodeMemberListResponse__Output>('MemberList', signal);
  }

  /**
   * Opens an internal Watch stream at the first member that is reachable, starting with the
   * current target (each member gets at most CONNECT_WAIT_MS). A stream that breaks later is not
   * reopened here: the client re-watches from its last revision, as etcd clients do. Streams
   * travel on the member's stream channel, never on the connection of unary calls.
   */
  async openWatch(): Promise<ClientDuplexStream<NodeWatchRequest, NodeWatchResponse__Output>> {
    this.assertOpen();
    for (let tries = 0; tries < this.options.endpoints.length; tries++) {
      const connection = this.connectionTo(this.currentTarget);
      if (await connection.waitReady(this.nowMs() + CONNECT_WAIT_MS, 'streams')) return connection.streamClient.Watch();
      this.moveOn(connection);
    }
    throw wireError('Unhealthy');
  }

  /**
   * Watches every configured member's view of the leader (wardnode WatchLeader, on each member's
   * stream channel) for as long as this client is open. A leader named in a newer term than any
   * seen before becomes the target at once, and idempotent calls still waiting at the previous
   * leader are asked again there: when the leader's host dies without closing its connections,
   * the members still up elect and name a new leader in an election timeout, while calls to the
   * silent one would wait for their whole deadline.
   */
  watchLeaders(): void {
    this.assertOpen();
    for (const address of this.options.endpoints) {
      if (this.leaderWatches.has(address)) continue;
      const watch: LeaderWatch = { stream: undefined, retryMs: LEADER_WATCH_MIN_RETRY_MS, timer: undefined };
      this.leaderWatches.set(address, watch);
      this.openLeaderWatch(address, watch);
    }
  }

  private openLeaderWatch(address: string, watch: LeaderWatch): void {
    if (this.closed) return;
    const stream = this.connectionTo(address).streamClient.WatchLeader({}) as ClientReadableStream<NodeStatusResponse__Output>;
    watch.stream = stream;
    stream.on('data', (status: NodeStatusResponse__Output) => {
      watch.retryMs = LEADER_WATCH_MIN_RETRY_MS;
      if (address === this.deposedAddress) this.deposedAddress = undefined;
      this.onLeaderView(status, address);
    });
    const ended = (): void => {
      if (watch.stream !== stream) return;
      watch.stream = undefined;
      if (this.closed) return;
      const delayMs = watch.retryMs;
      watch.retryMs = Math.min(LEADER_WATCH_MAX_RETRY_MS, watch.retryMs * 2);
      watch.timer = setTimeout(() => {
        watch.timer = undefined;
        this.openLeaderWatch(address, watch);
      }, delayMs);
      watch.timer.unref();
    };
    stream.on('error', ended);
    stream.on('end', ended);
  }

  /**
   * A member's Status from its leader watch (opened at `from`): a leader in a newer term becomes
   * the target. The leader it replaces is passed over until it speaks, unless it is the one speaking.
   */
  private onLeaderView(status: NodeStatusResponse__Output, from: string): void {
    const term = Number(status.raft_term);
    const address = status.leader_address;
    if (status.leader_id === '0' || address === '' || term < this.leaderTerm) return;
    if (term === this.leaderTerm && this.leaderAddress !== undefined) return;
    if (!this.connections.has(address) && this.connections.size >= MAX_CONNECTIONS_COUNT) return;
    this.leaderTerm = term;
    const previous = this.leaderAddress ?? this.namedLeaderValue?.address;
    const named = this.namedLeaderValue;
    this.leaderAddress = address;
    this.namedLeaderValue = { id: BigInt(status.leader_id), address };
    if (this.deposedAddress === address) this.deposedAddress = undefined;
    if (named?.address !== address) for (const listener of [...this.leaderListeners]) listener(this.namedLeaderValue);
    if (previous === address) return;
    // Requests pausing between tries go to the new leader now.
    for (const resume of [...this.pausedTries]) resume();
    if (previous === undefined) return;
    this.options.logger.info({ leader: address, term, previous }, 'a member names a new leader');
    if (previous !== from) this.deposedAddress = previous;
    this.connections.get(previous)?.abandonIdempotent();
  }

  close(): void {
    this.closed = true;
    for (const watch of this.leaderWatches.values()) {
      if (watch.timer !== undefined) clearTimeout(watch.timer);
      if (watch.stream !== undefined) discardStream(watch.stream);
      watch.stream = undefined;
    }
    this.leaderWatches.clear();
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
  }

  // ---- the retry loop ----------------------------------------------------------------------

  private async run<T>(method: NodeUnaryMethod | 'Snapshot', signal: Cancellation | undefined, attempt: TryFunction<T>): Promise<T> {
    this.assertOpen();
    const deadlineMs = this.nowMs() + this.options.requestTimeoutMs;
    const bounds = this.options.retry;
    // Built only when a try fails: an Error captures a stack trace, too costly for every request.
    let lastError: Error | undefined;
    for (let tryNumber = 1; tryNumber <= bounds.maxAttemptsCount; tryNumber++) {
      if (signal?.aborted) throw wireError('Canceled');
      if (this.nowMs() >= deadlineMs) throw wireError('Timeout');
      const connection = this.connectionTo(this.currentTarget);
      // A call not sent is safe to send elsewhere, whatever it is: a member whose channel is not up
      // within CONNECT_WAIT_MS is passed over instead of holding the call for the whole deadline.
      const outcome: Attempt<T> = (await this.reachable(connection, deadlineMs, method === 'Snapshot' ? 'snapshots' : 'unary'))
        ? await attempt(connection, deadlineMs, signal)
        : { kind: 'retry', error: wireError('NoLeader') };
      if (outcome.kind === 'done') {
        if (method === 'Propose') this.leaderAddress = connection.address;
        return outcome.value;
      }
      if (outcome.kind === 'fail') throw outcome.error;
      const immediate = outcome.kind === 'redirect' && this.followHint(connection, outcome.leaderAddress);
      if (outcome.kind === 'redirect' && !immediate) lastError = undefined;
      if (outcome.kind === 'retry') {
        lastError = outcome.error;
        this.moveOn(connection);
      }
      this.options.logger.debug({ method, node: connection.address, tryNumber, outcome: outcome.kind }, 'retrying at another member');
      if (tryNumber < bounds.maxAttemptsCount && !immediate) await this.pause(tryNumber, deadlineMs, signal);
    }
    throw lastError ?? wireError('NoLeader');
  }

  /** The backoff between tries; it ends early once a member names a new leader (the next try goes there). */
  private pause(tryNumber: number, deadlineMs: number, signal?: Cancellation): Promise<void> {
    const delayMs = Math.min(backoffDelayMs(tryNumber, this.options.retry, this.options.rng), Math.max(0, deadlineMs - this.nowMs()));
    const callerSignal = abortSignalOf(signal);
    return new Promise((resolve, reject) => {
      const end = (cancelled: boolean): void => {
        clearTimeout(timer);
        this.pausedTries.delete(resume);
        callerSignal?.removeEventListener('abort', cancel);
        if (cancelled) reject(wireError('Canceled'));
        else resolve();
      };
      const resume = (): void => end(false);
      const cancel = (): void => end(true);
      const timer = setTimeout(resume, delayMs);
      if (callerSignal?.aborted) return cancel();
      callerSignal?.addEventListener('abort', cancel, { once: true });
      this.pausedTries.add(resume);
    });
  }

  /** Follows a NotLeader hint; true when it names another member to try at once. */
  private followHint(from: NodeConnection, leaderAddress: string): boolean {
    if (leaderAddress === '' || leaderAddress === from.address) {
      this.leaderAddress = undefined;
      this.moveOn(from);
      return false;
    }
    if (!this.connections.has(leaderAddress) && this.connections.size >= MAX_CONNECTIONS_COUNT) {
      this.leaderAddress = undefined;
      this.moveOn(from);
      return false;
    }
    this.leaderAddress = leaderAddress;
    return true;
  }

  /**
   * A member that answered names the leader (a follower's ResolveToken): later calls go there, so
   * the leader sees every token use and slides its TTL.
   */
  private noteLeader(from: NodeConnection, leaderAddress: string | undefined): void {
    if (leaderAddress === undefined || leaderAddress === '' || leaderAddress === from.address) return;
    if (!this.connections.has(leaderAddress) && this.connections.size >= MAX_CONNECTIONS_COUNT) return;
    this.leaderAddress = leaderAddress;
  }

  /**
   * True once the member's channel is connected; false when it is not within CONNECT_WAIT_MS (a
   * member whose container is gone leaves connection attempts unanswered: a call queued on such a
   * channel would wait for the whole request deadline). A call not sent is safe to send elsewhere.
   */
  private reachable(connection: NodeConnection, deadlineMs: number, kind: ChannelKind): Promise<boolean> {
    return connection.waitReady(Math.min(deadlineMs, this.nowMs() + CONNECT_WAIT_MS), kind);
  }

  /** Forgets a member as leader and points the cursor past it. */
  private moveOn(connection: NodeConnection): void {
    if (this.leaderAddress === connection.address) this.leaderAddress = undefined;
    const index = this.options.endpoints.indexOf(connection.address);
    this.cursor = index >= 0 ? index + 1 : this.cursor + 1;
  }

  private simpleCall<T>(method: 'Status' | 'MemberList', signal?: Cancellation): Promise<T> {
    return this.run(method, signal, async (connection, deadlineMs, callSignal) => {
      try {
        return { kind: 'done', value: await connection.call<T>(method, {}, deadlineMs, callSignal) };
      } catch (error) {
        return this.idempotentFailure(error, callSignal);
      }
    });
  }

  /** A failed idempotent call: transport trouble is retried elsewhere, the rest is final. */
  private idempotentFailure<T>(error: unknown, signal?: Cancellation): Attempt<T> {
    if (isWireError(error)) return { kind: 'fail', error };
    if (signal?.aborted) return { kind: 'fail', error: wireError('Canceled') };
    if ((error as ServiceError).code === Status.DEADLINE_EXCEEDED) return { kind: 'fail', error: wireError('Timeout') };
    if (isTransportFailure(error)) return { kind: 'retry', error: wireError('NoLeader') };
    return { kind: 'fail', error: this.unexpected(error) };
  }

  /** A Propose that failed after it was sent: report, never re-send. */
  private unknownOutcome(error: unknown, signal?: Cancellation): Error {
    // An etcd error raised here (a bound of this gateway) means nothing was sent.
    if (isWireError(error)) return error;
    if (signal?.aborted) return wireError('Canceled');
    const code = (error as ServiceError).code;
    this.options.logger.warn({ code, details: (error as ServiceError).details }, 'proposal outcome unknown; not re-sent');
    if (code === Status.DEADLINE_EXCEEDED) return wireError('Timeout');
    if (code === Status.RESOURCE_EXHAUSTED) return wireError('RequestTooLarge');
    if (isTransportFailure(error)) return wireError('TimeoutDueToConnectionLost');
    return this.unexpected(error);
  }

  private unexpected(error: unknown): Error {
    this.options.logger.warn({ err: error }, 'unexpected answer from a raft-node');
    return wireError('Unhealthy');
  }

  private connectionTo(address: string): NodeConnection {
    let connection = this.connections.get(address);
    if (connection === undefined) {
      assert(this.connections.size < MAX_CONNECTIONS_COUNT || this.options.endpoints.includes(address), 'connection pool is bounded');
      connection = new NodeConnection(address, this.options.connection);
      this.connections.set(address, connection);
    }
    return connection;
  }

  /** Epoch milliseconds: grpc-js deadlines are absolute wall-clock times. */
  private nowMs(): number {
    return this.options.clock.nowMs();
  }

  private assertOpen(): void {
    if (this.closed) throw wireError('Stopped');
  }
}
