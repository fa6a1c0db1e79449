// The one internal request the state machine applies (etcd's InternalRaftRequest): a header naming
// who asks and at which auth revision, plus exactly one operation. Plain TypeScript types; the
// gateway maps etcd's protos onto them. Every field is present in decoded requests (the codec
// writes defaults explicitly), optional fields only ease building them by hand.

import type { Permission } from '@ward/auth/permissions';
import type { DeleteRangeRequest, LeaseId, PutRequest, RangeRequest, TxnRequest } from '@ward/etcd/kv-store';
import type { SigningKeyRecord } from './key-directory';
import type { PasswordHash } from './password-hash';

/** etcd's RequestHeader: request ID, the token's user and the auth revision the token carried. */
export interface RequestHeader {
  /** etcd's uint64 request ID (unique per proposal; the proposer matches the answer by it). */
  readonly id: bigint;
  /** Empty when the request carried no token. */
  readonly username: string;
  /** 0 when the request carried no token. */
  readonly authRevision: number;
}

export interface CompactRequest {
  readonly revision: number;
  /** etcd's `physical`: answer only after the compaction is done (no effect on the state). */
  readonly physical?: boolean;
}

export interface LeaseGrantRequest {
  /** Non-zero: the gateway picks the ID before proposing, as etcd's API layer does. */
  readonly id: LeaseId;
  readonly ttlSeconds: number;
}

export interface LeaseRevokeRequest {
  readonly id: LeaseId;
}

/**
 * Issue a simple token: `<prefix>.<log index>`. The 16-letter prefix is drawn by the gateway (the
 * apply layer has no randomness); the index makes the token unique.
 */
export interface AuthenticateRequest {
  readonly name: string;
  readonly simpleTokenPrefix: string;
}

/** Drop simple tokens (their TTL ran out); proposed by the token layer, admin-gated. */
export interface SimpleTokenExpireRequest {
  readonly tokens: readonly string[];
}

export interface UserAddRequest {
  readonly name: string;
  /** The bcrypt hash; null only for a no-password user. */
  readonly passwordHash: PasswordHash | null;
  readonly noPassword: boolean;
}

export interface UserChangePasswordRequest {
  readonly name: string;
  /** null: etcd's empty hashed password (the user can no longer log in). */
  readonly passwordHash: PasswordHash | null;
}

export interface RoleGrantPermissionRequest {
  readonly name: string;
  /** null stands for etcd's missing `perm` (answered with `permission not given`). */
  readonly perm: Permission | null;
}

export interface RoleRevokePermissionRequest {
  readonly role: string;
  readonly key: Uint8Array;
  readonly rangeEnd: Uint8Array;
}

/** Publish a token-signing public key (admin-only); `nowSeconds` is the proposer's clock. */
export interface SigningKeyPublishRequest {
  readonly key: SigningKeyRecord;
  readonly nowSeconds: number;
}

/** Exactly one operation, tagged by `type`. */
export type ApplyOperation =
  | { readonly type: 'range'; readonly request: RangeRequest }
  | { readonly type: 'put'; readonly request: PutRequest }
  | { readonly type: 'deleteRange'; readonly request: DeleteRangeRequest }
  | { readonly type: 'txn'; readonly request: TxnRequest }
  | { readonly type: 'compact'; readonly request: CompactRequest }
  | { readonly type: 'leaseGrant'; readonly request: LeaseGrantRequest }
  | { readonly type: 'leaseRevoke'; readonly request: LeaseRevokeRequest }
  | { readonly type: 'authEnable' }
  | { readonly type: 'authDisable' }
  | { readonly type: 'authStatus' }
  | { readonly type: 'authenticate'; readonly request: AuthenticateRequest }
  | { readonly type: 'simpleTokenExpire'; readonly request: SimpleTokenExpireRequest }
  | { readonly type: 'userAdd'; readonly request: UserAddRequest }
  | { readonly type: 'userDelete'; readonly request: { readonly name: string } }
  | { readonly type: 'userChangePassword'; readonly request: UserChangePasswordRequest }
  | { readonly type: 'userGrantRole'; readonly request: { readonly user: string; readonly role: string } }
  | { readonly type: 'userRevokeRole'; readonly request: { readonly name: string; readonly role: string } }
  | { readonly type: 'userGet'; readonly request: { readonly name: string } }
  | { readonly type: 'userList' }
  | { readonly type: 'roleAdd'; readonly request: { readonly name: string } }
  | { readonly type: 'roleDelete'; readonly request: { readonly role: string } }
  | { readonly type: 'roleGet'; readonly request: { readonly role: string } }
  | { readonly type: 'roleList' }
  | { readonly type: 'roleGrantPermission'; readonly request: RoleGrantPermissionRequest }
  | { readonly type: 'roleRevokePermission'; readonly request: RoleRevokePermissionRequest }
  | { readonly type: 'signingKeyPublish'; readonly request: SigningKeyPublishRequest }
  | { readonly type: 'signingKeyRevoke'; readonly request: { readonly keyId: string } }
  | { readonly type: 'signingKeyList' };

export type ApplyOperationType = ApplyOperation['type'];

/** The internal request: one header, one operation. */
export interface ApplyRequest {
  readonly header: RequestHeader;
  readonly operation: ApplyOperation;
}

/** The operations etcd's needAdminPermission gates (plus ward's token expiry). */
export const ADMIN_OPERATIONS: ReadonlySet<ApplyOperationType> = new Set<ApplyOperationType>([
  'authEnable',
  'authDisable',
  'userAdd',
  'userDelete',
  'userChangePassword',
  'userGrantRole',
  'userRevokeRole',
  'userList',
  'roleAdd',
  'roleDelete',
  'roleGrantPermission',
  'roleRevokePermission',
  'roleList',
  'simpleTokenExpire',
  'signingKeyPublish',
  'signingKeyRevoke',
]);
