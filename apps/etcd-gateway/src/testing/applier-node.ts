// Test support for the gateway's unit tests: a one-member wardnode.Node over real gRPC whose log is
// applied at once by the real state machine (@ward/etcd/apply) and answered through
// @ward/etcd/api-mapping — the raft-node's answers without Raft. Faults can be scripted (a
// NotLeader redirect, an answer that never comes). The real cluster is exercised by test/*.int.
import { Server, ServerCredentials, status as Status, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { hasCode } from '@ward/shared/errors';
import { Applier, decodeApplyRequest, type ApplyRequest } from '@ward/etcd/apply';
import { encodeApplyResponse, type ResponseContext } from '@ward/etcd/api-mapping';
import { wardNodeServiceDefinition } from '@ward/etcd/proto';

export interface ApplierNodeOptions {
  /** Answer NotLeader (with this leader address, '' for "unknown") instead of proposing. */
  notLeader?: string;
  /** Called with every decoded proposal before it is applied (tests record or delay). */
  onPropose?: (request: ApplyRequest) => void | Promise<void>;
  /** Decoded proposals are recorded here. */
  readonly proposals: ApplyRequest[];
  /** Raw entries received (to scan for secrets). */
  readonly entries: Uint8Array[];
}

export interface ApplierNode {
  readonly address: string;
  readonly applier: Applier;
  readonly options: ApplierNodeOptions;
  stop(): Promise<void>;
}

const CONTEXT: ResponseContext = { clusterId: 0x1234n, memberId: 0x51n, raftTerm: 2 };

type Unary = (call: ServerUnaryCall<Record<string, unknown>, unknown>, callback: sendUnaryData<unknown>) => void;

function unary(run: (request: Record<string, unknown>) => unknown | Promise<unknown>): Unary {
  return (call, callback) => {
    Promise.resolve()
      .then(() => run(call.request))
      .then(
        (value) => callback(null, value),
        (error: unknown) => callback({ code: Status.INTERNAL, details: String(error) }),
      );
  };
}

function answer(result: ReturnType<Applier["apply"]>): object {
  if (!result.ok) return { error: { code: result.error.grpcCode, message: result.error.message } };
  return { response: Buffer.from(encodeApplyResponse(result.result as never, result.header.revision, CONTEXT)) };
}

function authCheck(applier: Applier, name: string): object {
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

/** Starts the node on a free loopback port. */
export async function startApplierNode(options: Partial<ApplierNodeOptions> = {}): Promise<ApplierNode> {
  const applier = Applier.create();
  const state: ApplierNodeOptions = { proposals: [], entries: [], ...options };
  let index = 0;
  const server = new Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  let address = '';
  server.addService(wardNodeServiceDefinition(), {
    Propose: unary(async (request) => {
      if (state.notLeader !== undefined) return { not_leader: { leader_id: '0', leader_address: state.notLeader } };
      const entry = request['entry'] as Buffer;
      state.entries.push(new Uint8Array(entry));
      const decoded = decodeApplyRequest(new Uint8Array(entry));
      state.proposals.push(decoded);
      await state.onPropose?.(decoded);
      index += 1;
      return answer(applier.apply(index, decoded));
    }),
    Read: unary((request) => {
      if (state.notLeader !== undefined) return { not_leader: { leader_id: '0', leader_address: state.notLeader } };
      return answer(applier.read(decodeApplyRequest(new Uint8Array(request["entry"] as Buffer))));
    }),
    AuthCheck: unary((request) => {
      if (state.notLeader !== undefined) return { not_leader: { leader_id: '0', leader_address: state.notLeader } };
      return authCheck(applier, request['name'] as string);
    }),
    ResolveToken: unary((request) => {
      const owner = applier.resolveSimpleToken(request['token'] as string);
      return owner === undefined ? { valid: false } : { valid: true, username: owner.username, auth_revision: String(owner.authRevision) };
    }),
    Status: unary(() => ({
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
    MemberList: unary(() => ({
      cluster_id: String(CONTEXT.clusterId),
      member_id: String(CONTEXT.memberId),
      raft_term: String(CONTEXT.raftTerm),
      members: [{ id: String(CONTEXT.memberId), name: 'node-1', peer_urls: ['http://127.0.0.1:1'], api_address: address }],
    })),
    Watch: (call: { emit(event: string, error: unknown): void }) => call.emit('error', { code: Status.UNIMPLEMENTED, details: 'no watch in the applier node' }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  address = `127.0.0.1:${port}`;
  return {
    address,
    applier,
    options: state,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
