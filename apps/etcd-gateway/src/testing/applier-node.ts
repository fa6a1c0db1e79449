// Test support for the gateway's unit tests: a one-member wardnode.Node over real gRPC whose log is
// applied at once by the real state machine (@ward/etcd/apply) and answered through
// @ward/etcd/api-mapping — the raft-node's answers without Raft. Faults can be scripted (a
// NotLeader redirect, an answer that never comes). The real cluster is exercised by test/*.int.
import { Server, ServerCredentials, status as Status, type ServerDuplexStream, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import type { Duplex } from 'node:stream';
import { EXCHANGE_ALIVE_INTERVAL_MS, EXCHANGE_FRAMES, EXCHANGE_SILENCE_LIMIT_MS, exchangeCodecs } from '@ward/etcd/node-calls';
import { GrpcStatusError, HTTP2_PREFACE, serveBatchedCalls, serveFramedCalls, startSharedListener, type BatchedAnswer, type BatchedCallsOptions } from '@ward/platform/grpc-server';
import { createLogger } from '@ward/platform/logging';
import { hasCode } from '@ward/shared/errors';
import { Applier, authWireError, decodeApplyRequest, toWireError, type ApplyRequest } from '@ward/etcd/apply';
import { encodeApplyResponse, encodeEtcdMessage, responseHeaderToProto, type ResponseContext } from '@ward/etcd/api-mapping';
import { etcdMessageType, wardNodeServiceDefinition } from '@ward/etcd/proto';

export interface ApplierNodeOptions {
  /** Answer NotLeader (with this leader address, '' for "unknown") instead of proposing. */
  notLeader?: string;
  /** Called with every decoded proposal before it is applied (tests record or delay). */
  onPropose?: (request: ApplyRequest) => void | Promise<void>;
  /** Decoded proposals are recorded here. */
  readonly proposals: ApplyRequest[];
  /** Raw entries received (to scan for secrets). */
  readonly entries: Uint8Array[];
  /** Calls received per method (NotLeader answers included). */
  readonly calls: Record<string, number>;
  /** Answer this many Reads with `etcdserver: no leader` before serving them. */
  failReadsCount: number;
  /** Watch messages received: the identity they carried and the decoded etcd WatchRequest. */
  readonly watchRequests: Array<{ username: string; authRevision: number; request: Record<string, unknown> }>;
  /** Open internal watch streams. */
  watchStreamsCount: number;
  /** New internal watch streams are not read (a member too busy to keep up). */
  pauseWatchReads?: boolean;
  /** The next create ends its internal stream with this status instead of an answer (once). */
  failNextWatchCreate?: { code: number; details: string };
  /** Called before every Read is served (tests delay or hang it). */
  onRead?: () => void | Promise<void>;
  /** A member older than the Exchange's auth_check call: refuses it as such a member does. */
  exchangeWithoutAuthCheck?: boolean;
}

export interface ApplierNode {
  readonly address: string;
  /** Cuts every connection at once (a crash, as the gateway sees it). */
  kill(): void;
  /** Open WatchLeader streams. */
  readonly leaderWatchersCount: number;
  /** Tells every WatchLeader stream that this member now sees `leaderAddress` lead in `term` ('' : no leader). */
  announceLeader(leaderAddress: string, term: number): void;
  readonly applier: Applier;
  readonly options: ApplierNodeOptions;
  stop(): Promise<void>;
}

interface ExchangeCall {
  readonly id: string;
  readonly call?: 'propose' | 'read' | 'auth_check';
  readonly propose?: Record<string, unknown>;
  readonly read?: Record<string, unknown>;
  readonly auth_check?: { readonly name: string };
}

const silent = createLogger({ name: 'applier-node', level: 'silent' });

const CONTEXT: ResponseContext = { clusterId: 0x1234n, memberId: 0x51n, raftTerm: 2 };

type Unary = (call: ServerUnaryCall<Record<string, unknown>, unknown>, callback: sendUnaryData<unknown>) => void;

function unary(calls: Record<string, number>, method: string, run: (request: Record<string, unknown>) => unknown | Promise<unknown>): Unary {
  return (call, callback) => {
    calls[method] = (calls[method] ?? 0) + 1;
    Promise.resolve()
      .then(() => run(call.request))
      .then(
        (value) => callback(null, value),
        (error: unknown) => callback({ code: Status.INTERNAL, details: String(error) }),
      );
  };
}

function answer(result: ReturnType<Applier['apply']>): object {
  if (!result.ok) return { error: { code: result.error.grpcCode, message: result.error.message } };
  return { response: Buffer.from(encodeApplyResponse(result.result as never, result.header.revision, CONTEXT)) };
}

function authCheck(applier: Applier, name: string): { check: object } {
  const view = applier.authView;
  const base = { auth_enabled: view.enabled, auth_revision: String(view.revision), user_exists: false, no_password: false, password_hash: Buffer.alloc(0) };
  if (!view.enabled) return { check: base };
  try {
    const input = view.passwordCheckInput(name);
    return { check: { ...base, user_exists: true, password_hash: Buffer.from(input.passwordHash) } };
  } catch (error) {
    if (hasCode(error, 'ERR_AUTH_NO_PASSWORD_USER')) return { check: { ...base, user_exists: true, no_password: true } };
    return { check: base };
  }
}

interface WatchCall {
  on(event: 'data', listener: (message: { username: string; auth_revision: string; request: Buffer }) => void): void;
  on(event: 'end' | 'cancelled' | 'error', listener: () => void): void;
  pause(): void;
  emit(event: 'error', status: { code: number; details: string }): void;
  write(message: object): boolean;
  end(): void;
}

/**
 * Watch for the relay's tests: records what arrives and answers each create with `created` and a
 * fresh watch id (no events: watch semantics are the raft-node's).
 */
function echoWatch(call: WatchCall, state: ApplierNodeOptions, applier: Applier): void {
  const requestType = etcdMessageType('etcdserverpb.WatchRequest');
  const responseType = etcdMessageType('etcdserverpb.WatchResponse');
  let nextWatchId = 0;
  state.watchStreamsCount += 1;
  if (state.pauseWatchReads === true) call.pause();
  let open = true;
  const close = (): void => {
    if (open) state.watchStreamsCount -= 1;
    open = false;
  };
  call.on('data', (message) => {
    const request = requestType.toObject(requestType.decode(message.request), { longs: String, enums: String, defaults: false }) as Record<string, unknown>;
    state.watchRequests.push({ username: message.username, authRevision: Number(message.auth_revision), request });
    const header = { cluster_id: String(CONTEXT.clusterId), member_id: String(CONTEXT.memberId), revision: String(applier.keySpaceView.currentRevision), raft_term: '2' };
    const cancel = request['cancel_request'] as { watch_id?: string } | undefined;
    if (cancel !== undefined) {
      const response = responseType.encode(responseType.fromObject({ header, watch_id: cancel.watch_id ?? '0', canceled: true })).finish();
      call.write({ response: Buffer.from(response) });
      return;
    }
    if (request['create_request'] === undefined) return;
    const failure = state.failNextWatchCreate;
    if (failure !== undefined) {
      state.failNextWatchCreate = undefined;
      close();
      call.emit('error', failure);
      return;
    }
    const response = responseType.encode(responseType.fromObject({ header, watch_id: String(nextWatchId++), created: true })).finish();
    call.write({ response: Buffer.from(response) });
  });
  call.on('end', () => {
    close();
    call.end();
  });
  call.on('cancelled', close);
  call.on('error', close);
}

/** A grant asking for ID 0 gets one before it is applied, as a raft-node leader draws it. */
function leaderSettled(request: ApplyRequest, index: number): ApplyRequest {
  const { operation } = request;
  if (operation.type !== 'leaseGrant' || operation.request.id !== 0n) return request;
  return { ...request, operation: { type: 'leaseGrant', request: { ...operation.request, id: BigInt(index) } } };
}

/** Starts the node on a free loopback port. */
export async function startApplierNode(options: Partial<ApplierNodeOptions> = {}): Promise<ApplierNode> {
  const applier = Applier.create();
  const state: ApplierNodeOptions = { proposals: [], entries: [], calls: {}, failReadsCount: 0, watchRequests: [], watchStreamsCount: 0, ...options };
  let index = 0;
  const server = new Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  let address = '';
  const propose = async (request: Record<string, unknown>): Promise<unknown> => {
    if (state.notLeader !== undefined) return { not_leader: { leader_id: '0', leader_address: state.notLeader } };
    const entry = request['entry'] as Buffer;
    state.entries.push(new Uint8Array(entry));
    const decoded = decodeApplyRequest(entry);
    state.proposals.push(decoded);
    await state.onPropose?.(decoded);
    index += 1;
    return answer(applier.apply(index, leaderSettled(decoded, index)));
  };
  const read = async (request: Record<string, unknown>): Promise<unknown> => {
    await state.onRead?.();
    if (state.notLeader !== undefined) return { not_leader: { leader_id: '0', leader_address: state.notLeader } };
    if (state.failReadsCount > 0) {
      state.failReadsCount -= 1;
      return { error: { code: Status.UNAVAILABLE, message: 'etcdserver: no leader' } };
    }
    return answer(applier.read(decodeApplyRequest(request['entry'] as Buffer)));
  };
  const checkAuth = (name: string): { check: object } | { not_leader: object } => {
    if (state.notLeader !== undefined) return { not_leader: { leader_id: '0', leader_address: state.notLeader } };
    return authCheck(applier, name);
  };
  // The gateway's hot path: Propose, Read and AuthCheck multiplexed, on gRPC or framed.
  const exchangeOptions: BatchedCallsOptions<ExchangeCall, unknown> = {
    serve: async (exchanged: ExchangeCall) => {
      // Propose and Read are counted like the unary calls; an AuthCheck apart (`Exchange/AuthCheck`).
      const method = exchanged.call === 'propose' ? 'Propose' : exchanged.call === 'auth_check' ? 'Exchange/AuthCheck' : 'Read';
      state.calls[method] = (state.calls[method] ?? 0) + 1;
      if (exchanged.call === 'auth_check') {
        if (state.exchangeWithoutAuthCheck === true) throw new GrpcStatusError(Status.INVALID_ARGUMENT, 'an Exchange call names neither propose nor read');
        const checked = checkAuth(exchanged.auth_check!.name);
        return 'check' in checked ? { auth_check: checked.check } : checked;
      }
      return exchanged.call === 'propose' ? propose(exchanged.propose!) : read(exchanged.read!);
    },
    overloaded: { error: { code: Status.RESOURCE_EXHAUSTED, message: 'etcdserver: too many requests' } },
    answerBytes: () => 64,
    maxInFlightCount: 10_000,
    maxBatchBytes: 4 * 1024 * 1024,
    logger: silent,
  };
  server.addService(wardNodeServiceDefinition(), {
    Propose: unary(state.calls, 'Propose', propose),
    Read: unary(state.calls, 'Read', read),
    Exchange: (call: ServerDuplexStream<{ calls: ExchangeCall[] }, { answers: BatchedAnswer<unknown>[] }>) => serveBatchedCalls(call, exchangeOptions),
    AuthCheck: unary(state.calls, 'AuthCheck', (request) => checkAuth(request['name'] as string)),
    ResolveToken: unary(state.calls, 'ResolveToken', (request) => {
      const owner = applier.resolveSimpleToken(request['token'] as string);
      return owner === undefined ? { valid: false } : { valid: true, username: owner.username, auth_revision: String(owner.authRevision) };
    }),
    Status: unary(state.calls, 'Status', () => ({
      cluster_id: String(CONTEXT.clusterId),
      member_id: String(CONTEXT.memberId),
      leader_id: String(CONTEXT.memberId),
      raft_term: String(CONTEXT.raftTerm),
      raft_index: String(index),
      commit_index: String(index),
      applied_index: String(index),
      revision: String(applier.keySpaceView.currentRevision),
      version: '3.7.0',
    })),
    MemberList: unary(state.calls, 'MemberList', () => ({
      cluster_id: String(CONTEXT.clusterId),
      member_id: String(CONTEXT.memberId),
      raft_term: String(CONTEXT.raftTerm),
      members: [{ id: String(CONTEXT.memberId), name: 'node-1', peer_urls: ['http://127.0.0.1:1'], api_address: address }],
    })),
    // The raft-node's admin gate, and the requests it serves for a one-member cluster.
    Maintain: unary(state.calls, 'Maintain', (request) => {
      const denied = applier.authView.isAdminPermitted(request['username'] as string);
      if (denied !== null) return { error: { code: authWireError(denied).grpcCode, message: authWireError(denied).message } };
      const header = responseHeaderToProto(CONTEXT, applier.keySpaceView.currentRevision);
      if (request['kind'] === 'DEFRAGMENT') return { response: Buffer.from(encodeEtcdMessage('etcdserverpb.DefragmentResponse', { header })) };
      if (request['kind'] === 'MOVE_LEADER' && request['target_id'] === String(CONTEXT.memberId)) return { response: Buffer.from(encodeEtcdMessage('etcdserverpb.MoveLeaderResponse', { header })) };
      if (request['kind'] === 'MOVE_LEADER') return { error: { code: Status.FAILED_PRECONDITION, message: 'etcdserver: bad leader transferee' } };
      if (request['kind'] === 'HASH_KV') {
        try {
          const { hash, compactRevision } = applier.keySpaceView.hashKv(Number(request['revision'])).run();
          return { response: Buffer.from(encodeEtcdMessage('etcdserverpb.HashKVResponse', { header, hash, compact_revision: String(compactRevision) })) };
        } catch (error) {
          return { error: { code: toWireError(error).grpcCode, message: toWireError(error).message } };
        }
      }
      return { error: { code: Status.UNIMPLEMENTED, message: `ward: ${String(request['kind'])} is not supported` } };
    }),
    Watch: (call: WatchCall) => echoWatch(call, state, applier),
    WatchLeader: (call: ServerWritableStream<unknown, object>) => {
      leaderWatchers.add(call);
      const gone = (): void => void leaderWatchers.delete(call);
      call.on('cancelled', gone);
      call.on('error', gone);
      call.on('close', gone);
    },
  });
  const leaderWatchers = new Set<ServerWritableStream<unknown, object>>();
  // One port for gRPC and the framed Exchange, as a raft-node's internal API port.
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const framed = new Set<Duplex>();
  const codecs = exchangeCodecs();
  const listener = await startSharedListener({
    host: '127.0.0.1',
    port: 0,
    tls: null,
    sniffTimeoutMs: 10_000,
    maxConnectionsCount: 1024,
    protocols: [
      { name: 'grpc', preface: HTTP2_PREFACE, take: (socket) => injector.injectConnection(socket) },
      {
        name: 'exchange-frames',
        preface: EXCHANGE_FRAMES.preface,
        take: (socket) => {
          framed.add(socket);
          socket.once('close', () => framed.delete(socket));
          const framing = { preface: EXCHANGE_FRAMES.preface, deserialize: codecs.deserializeCalls as never, serialize: codecs.serializeAnswers as never, maxReceiveBytes: 64 * 1024 * 1024, aliveIntervalMs: EXCHANGE_ALIVE_INTERVAL_MS, silenceLimitMs: EXCHANGE_SILENCE_LIMIT_MS };
          void serveFramedCalls(socket, framing, exchangeOptions);
        },
      },
    ],
  });
  address = `127.0.0.1:${listener.port}`;
  return {
    address,
    applier,
    options: state,
    kill: () => {
      server.forceShutdown();
      for (const socket of framed) socket.destroy();
      void listener.close(0);
    },
    get leaderWatchersCount() {
      return leaderWatchers.size;
    },
    announceLeader(leaderAddress, term) {
      const view = { cluster_id: String(CONTEXT.clusterId), member_id: String(CONTEXT.memberId), leader_id: leaderAddress === '' ? '0' : '7', raft_term: String(term), leader_address: leaderAddress };
      for (const call of leaderWatchers) call.write(view);
    },
    stop: () => {
      for (const call of leaderWatchers) call.end();
      for (const socket of framed) socket.destroy();
      return Promise.all([new Promise<void>((resolve) => server.tryShutdown(() => resolve())), listener.close(1000)]).then(() => undefined);
    },
  };
}
