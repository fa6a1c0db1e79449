// etcd's Maintenance service. Status is served from the member the gateway talks to; the
// administrative RPCs (defragment, snapshot, hashes, leader moves, downgrades, alarm changes)
// are not offered and say so.
import type { AlarmRequest__Output, NodeStatusResponse__Output, StatusResponse } from '@ward/etcd/proto';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { requireAuthenticated, type AuthEnabledCheck } from './authenticated';
import { responseHeaderOf } from './response-header';
import { unimplemented } from './unimplemented';

export interface MaintenanceApiOptions {
  readonly executor: RequestExecutor;
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

  /** GET lists no alarms (ward raises none); changing alarms is an admin RPC ward does not offer. */
  async alarm(request: AlarmRequest__Output, credentials: Credentials, signal?: AbortSignal): Promise<object> {
    if (request.action !== undefined && request.action !== 'Get' && request.action !== (0 as unknown)) throw unimplemented('Alarm ACTIVATE/DEACTIVATE');
    await requireAuthenticated(this.options.executor, this.options.authEnabled, credentials, signal);
    return { header: responseHeaderOf(await this.options.status(signal)), alarms: [] };
  }

  defragment(): Promise<never> {
    return Promise.reject(unimplemented('Defragment'));
  }

  hash(): Promise<never> {
    return Promise.reject(unimplemented('Hash'));
  }

  hashKV(): Promise<never> {
    return Promise.reject(unimplemented('HashKV'));
  }

  moveLeader(): Promise<never> {
    return Promise.reject(unimplemented('MoveLeader'));
  }

  downgrade(): Promise<never> {
    return Promise.reject(unimplemented('Downgrade'));
  }
}
