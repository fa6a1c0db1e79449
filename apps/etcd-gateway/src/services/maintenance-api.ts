// etcd's Maintenance service. Status answers as the leader (the cluster client's leaderStatus). The
// admin-only RPCs go to the leader, which decides the admin check (the gateway decides no
// permission): Defragment, MoveLeader, Hash, HashKV and Snapshot (relayed chunk by chunk) are
// served; Downgrade and alarm changes answer the admin check first, then UNIMPLEMENTED.
import { status as Status, type ServerWritableStream } from '@grpc/grpc-js';
import { GrpcStatusError, type Cancellation } from '@ward/platform/grpc-server';
import type {
  AlarmRequest__Output,
  HashKVRequest__Output,
  MoveLeaderRequest__Output,
  NodeMaintainRequest,
  NodeSnapshotRequest,
  NodeStatusResponse__Output,
  StatusResponse,
} from '@ward/etcd/proto';
import { discardStream, type OpenedSnapshot } from '../cluster/cluster-client';
import { identityFields } from '../identity/identity';
import { nodeWireError } from '@ward/etcd/node-calls';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { requireAuthenticated, type AuthEnabledCheck } from './authenticated';
import { responseHeaderOf } from './response-header';

/** Sends an admin-only request to the leader; resolves to the encoded etcd response. */
export type MaintainCall = (request: Omit<NodeMaintainRequest, 'timeout_ms'>, signal?: Cancellation) => Promise<Buffer>;

export interface MaintenanceApiOptions {
  readonly executor: RequestExecutor;
  readonly maintain: MaintainCall;
  readonly authEnabled: AuthEnabledCheck;
  readonly status: (signal?: Cancellation) => Promise<NodeStatusResponse__Output>;
  /** The leader's status (Maintenance.Status answers as the leader, as `etcdctl endpoint status` expects). */
  readonly leaderStatus: (signal?: Cancellation) => Promise<NodeStatusResponse__Output>;
  /** Opens the leader's Snapshot stream (the leader decides the admin check). */
  readonly openSnapshot: (request: NodeSnapshotRequest, signal?: Cancellation) => Promise<OpenedSnapshot>;
}

type SnapshotCall = ServerWritableStream<unknown, Buffer>;

/**
 * Relays the member's chunks (encoded etcd SnapshotResponses) to the client, reading the next one
 * only while the client's stream takes writes. A cut member stream fails the call (the client's
 * partial file is then discarded, as etcdctl does); a client that goes away cancels the member's.
 */
function relaySnapshot(opened: OpenedSnapshot, call: SnapshotCall, signal?: Cancellation): Promise<void> {
  const { stream } = opened;
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      call.off('drain', onDrain);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onDrain = (): void => {
      stream.resume();
    };
    const onAbort = (): void => {
      discardStream(stream);
      settle(new GrpcStatusError(Status.CANCELLED, 'context canceled'));
    };
    const send = (chunk: Buffer): void => {
      // The member's first answer says only that it accepted the stream (it then sizes the state):
      // no bytes, nothing for the client.
      if (chunk.length === 0) return;
      if (!call.write(chunk)) stream.pause();
    };
    call.on('drain', onDrain);
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', (message: { result?: string; response?: Buffer; error?: { code: number; message: string } | null }) => {
      if (message.result === 'response' && message.response) send(message.response);
      else {
        discardStream(stream);
        settle(nodeWireError(message.error));
      }
    });
    stream.once('error', () => settle(new GrpcStatusError(Status.UNAVAILABLE, 'ward: the snapshot stream from the member was cut')));
    stream.once('end', () => settle());
    send(opened.first);
    stream.resume();
  });
}

export class MaintenanceApi {
  constructor(private readonly options: MaintenanceApiOptions) {}

  async status(_request: object, credentials: Credentials, signal?: Cancellation): Promise<StatusResponse> {
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    const status = await this.options.leaderStatus(signal);
    return {
      header: responseHeaderOf(status),
      version: status.version,
      dbSize: status.db_size_bytes,
      leader: status.leader_id,
      raftIndex: status.commit_index,
      raftTerm: status.raft_term,
      raftAppliedIndex: status.applied_index,
      errors: status.errors,
      dbSizeInUse: status.db_size_bytes,
      isLearner: status.is_learner,
    };
  }

  /** GET lists no alarms (ward raises none); changing alarms is admin-only and not offered. */
  async alarm(request: AlarmRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<object> {
    if (request.action !== undefined && request.action !== 'Get' && request.action !== (0 as unknown)) return this.admin('ALARM_CHANGE', credentials, signal);
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    return { header: responseHeaderOf(await this.options.status(signal)), alarms: [] };
  }

  defragment(_request: object, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.admin('DEFRAGMENT', credentials, signal);
  }

  hash(_request: object, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.admin('HASH', credentials, signal);
  }

  hashKV(request: HashKVRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.admin('HASH_KV', credentials, signal, '0', request.revision ?? '0');
  }

  moveLeader(request: MoveLeaderRequest__Output, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.admin('MOVE_LEADER', credentials, signal, request.targetID ?? '0');
  }

  downgrade(_request: object, credentials: Credentials, signal?: Cancellation): Promise<Buffer> {
    return this.admin('DOWNGRADE', credentials, signal);
  }

  /** etcd's Snapshot (server streaming): the leader's backup file, relayed with backpressure. */
  async snapshot(call: SnapshotCall, credentials: Credentials, signal?: Cancellation): Promise<void> {
    const opened = await this.options.executor.asIdentity(credentials, (identity) => this.options.openSnapshot(identityFields(identity), signal), signal);
    await relaySnapshot(opened, call, signal);
  }

  /** Resolves who is asking and lets the leader decide (admin check, then the request). */
  private admin(kind: NodeMaintainRequest['kind'] & string, credentials: Credentials, signal?: Cancellation, targetId = '0', revision = '0'): Promise<Buffer> {
    return this.options.executor.asIdentity(credentials, (identity) => this.options.maintain({ ...identityFields(identity), kind, target_id: targetId, revision }, signal), signal);
  }
}
