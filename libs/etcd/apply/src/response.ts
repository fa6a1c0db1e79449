import type { Permission } from '@ward/auth/permissions';
import type {
  CompactResponse,
  DeleteRangeResponse,
  LeaseId,
  PutResponse,
  RangeResponse,
  TxnResponse,
} from '@ward/etcd/kv-store';
import type { EtcdWireError } from '@ward/etcd/wire-errors';
import type { SigningKeyRecord } from './key-directory';

/**
 * What every successful answer carries: the key space's revision after the operation (etcd's
 * ResponseHeader.revision; auth operations report the unchanged KV revision). Cluster ID, member
 * ID and raft term are filled in by the node that answers.
 */
export interface ApplyHeader {
  readonly revision: number;
}

export type ApplyResponse =
  | { readonly type: 'range'; readonly response: RangeResponse }
  | { readonly type: 'put'; readonly response: PutResponse }
  | { readonly type: 'deleteRange'; readonly response: DeleteRangeResponse }
  | { readonly type: 'txn'; readonly response: TxnResponse }
  | { readonly type: 'compact'; readonly response: CompactResponse }
  | { readonly type: 'leaseGrant'; readonly response: { readonly id: LeaseId; readonly ttlSeconds: number } }
  | { readonly type: 'authStatus'; readonly response: { readonly enabled: boolean; readonly authRevision: number } }
  | { readonly type: 'authenticate'; readonly response: { readonly token: string } }
  | { readonly type: 'userGet'; readonly response: { readonly roles: string[] } }
  | { readonly type: 'userList'; readonly response: { readonly users: string[] } }
  | { readonly type: 'roleGet'; readonly response: { readonly perm: Permission[] } }
  | { readonly type: 'roleList'; readonly response: { readonly roles: string[] } }
  /** The directory and the auth revision it was read at (a verifier refreshes when tokens are newer). */
  | { readonly type: 'signingKeyList'; readonly response: { readonly keys: SigningKeyRecord[]; readonly authRevision: number } }
  | {
      readonly type:
        | 'leaseRevoke'
        | 'authEnable'
        | 'authDisable'
        | 'simpleTokenExpire'
        | 'userAdd'
        | 'userDelete'
        | 'userChangePassword'
        | 'userGrantRole'
        | 'userRevokeRole'
        | 'roleAdd'
        | 'roleDelete'
        | 'roleGrantPermission'
        | 'roleRevokePermission'
        | 'signingKeyPublish'
        | 'signingKeyRevoke';
      readonly response: Record<string, never>;
    };

/**
 * The outcome of applying one request: a response, or the etcd wire error (exact gRPC code and
 * text) to send back. Either way the entry is consumed: a refused request changes nothing.
 */
export type ApplyResult =
  | { readonly ok: true; readonly header: ApplyHeader; readonly result: ApplyResponse }
  | { readonly ok: false; readonly error: EtcdWireError };
