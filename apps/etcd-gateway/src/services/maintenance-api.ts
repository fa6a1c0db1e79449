// etcd's Maintenance service. Status is served from the member the gateway talks to. The
// admin-only RPCs go to the leader, which decides the admin check (the gateway decides no
// permission): Defragment and MoveLeader are served; Hash, HashKV, Snapshot, Downgrade and alarm
// changes answer the admin check first, then UNIMPLEMENTED.
import type {
  AlarmRequest__Output,
  MoveLeaderRequest__Output,
  NodeMaintainRequest,
  NodeStatusResponse__Output,
  StatusResponse,
} from '@ward/etcd/proto';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { requireAuthenticated, type AuthEnabledCheck } from './authenticated';
import { responseHeaderOf } from './response-header';

/** Sends an admin-only request to the leader; resolves to the encoded etcd response. */
export type MaintainCall = (request: Omit<NodeMaintainRequest, 'timeout_ms'>, signal?: AbortSignal) => Promise<Buffer>;

export interface MaintenanceApiOptions {
  readonly executor: RequestExecutor;
  readonly maintain: MaintainCall;
  readonly authEnabled: AuthEnabledCheck;
  readonly status: (signal?: AbortSignal) => Promise<NodeStatusResponse__Output>;
}

export class MaintenanceApi {
  constructor(private readonly options: MaintenanceApiOptions) {}

  async status(_request: object, credentials: Credentials, signal?: AbortSignal): Promise<StatusResponse> {
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    const status = await this.options.status(signal);
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
  async alarm(request: AlarmRequest__Output, credentials: Credentials, signal?: AbortSignal): Promise<object> {
    if (request.action !== undefined && request.action !== 'Get' && request.action !== (0 as unknown)) return this.admin('ALARM_CHANGE', credentials, signal);
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    return { header: responseHeaderOf(await this.options.status(signal)), alarms: [] };
  }

  defragment(_request: object, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.admin('DEFRAGMENT', credentials, signal);
  }

  hash(_request: object, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.admin('HASH', credentials, signal);
  }

  hashKV(_request: object, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.admin('HASH_KV', credentials, signal);
  }

  moveLeader(request: MoveLeaderRequest__Output, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.admin('MOVE_LEADER', credentials, signal, request.targetID ?? '0');
  }

  downgrade(_request: object, credentials: Credentials, signal?: AbortSignal): Promise<Buffer> {
    return this.admin('DOWNGRADE', credentials, signal);
  }

  /** Resolves who is asking and lets the leader decide (admin check, then the request). */
  private async admin(kind: NodeMaintainRequest['kind'] & string, credentials: Credentials, signal?: AbortSignal, targetId = '0'): Promise<Buffer> {
    const identity = await this.options.executor.identify(credentials, signal);
    return this.options.maintain({ username: identity.username, auth_revision: String(identity.authRevision), kind, target_id: targetId }, signal);
  }
}
