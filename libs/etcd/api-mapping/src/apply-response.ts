// ApplyResult → etcd's response message of the operation, header filled in (what a raft-node
// sends a gateway as NodeResponse.response), and back.
import type { ApplyResponse } from '@ward/etcd/apply';
import type { AuthRoleGetResponse__Output, LeaseGrantResponse__Output, PublicKey, PublicKey__Output } from '@ward/etcd/proto';
import type { SigningKeyRecord } from '@ward/etcd/apply';
import { permissionFromProto, permissionToProto } from './auth-request';
import { boolFromProto, stringFromProto } from './bytes-field';
import { responseHeaderFromProto, responseHeaderToProto, type ResponseContext, type ResponseHeaderFields } from './header';
import { int64ToBigInt, int64ToNumber, toInt64String, uint64ToNumber } from './int64';
import {
  compactionResponseToProto,
  deleteRangeResponseFromProto,
  deleteRangeResponseToProto,
  putResponseFromProto,
  putResponseToProto,
  rangeResponseFromProto,
  rangeResponseToProto,
  txnResponseFromProto,
  txnResponseToProto,
} from './kv-response';
import { encodeDeleteRangeResponseWire, encodePutResponseWire, encodeRangeResponseWire, encodeTxnResponseWire } from './kv-response-wire';
import { decodeEtcdMessage, encodeEtcdMessage } from './proto-codec';

/** Operations that have an etcd response message (simpleTokenExpire is internal: none). */
export type RespondingOperationType = Exclude<ApplyResponse['type'], 'simpleTokenExpire'>;

/** The etcd response message of each operation. */
export const RESPONSE_MESSAGE_TYPES: Readonly<Record<RespondingOperationType, string>> = Object.freeze({
  range: 'etcdserverpb.RangeResponse',
  put: 'etcdserverpb.PutResponse',
  deleteRange: 'etcdserverpb.DeleteRangeResponse',
  txn: 'etcdserverpb.TxnResponse',
  compact: 'etcdserverpb.CompactionResponse',
  leaseGrant: 'etcdserverpb.LeaseGrantResponse',
  leaseRevoke: 'etcdserverpb.LeaseRevokeResponse',
  authEnable: 'etcdserverpb.AuthEnableResponse',
  authDisable: 'etcdserverpb.AuthDisableResponse',
  authStatus: 'etcdserverpb.AuthStatusResponse',
  authenticate: 'etcdserverpb.AuthenticateResponse',
  userAdd: 'etcdserverpb.AuthUserAddResponse',
  userDelete: 'etcdserverpb.AuthUserDeleteResponse',
  userChangePassword: 'etcdserverpb.AuthUserChangePasswordResponse',
  userGrantRole: 'etcdserverpb.AuthUserGrantRoleResponse',
  userRevokeRole: 'etcdserverpb.AuthUserRevokeRoleResponse',
  userGet: 'etcdserverpb.AuthUserGetResponse',
  userList: 'etcdserverpb.AuthUserListResponse',
  roleAdd: 'etcdserverpb.AuthRoleAddResponse',
  roleDelete: 'etcdserverpb.AuthRoleDeleteResponse',
  roleGet: 'etcdserverpb.AuthRoleGetResponse',
  roleList: 'etcdserverpb.AuthRoleListResponse',
  roleGrantPermission: 'etcdserverpb.AuthRoleGrantPermissionResponse',
  roleRevokePermission: 'etcdserverpb.AuthRoleRevokePermissionResponse',
  // ward's signing-key directory (no etcd counterpart).
  signingKeyPublish: 'wardtoken.SigningKeysAnswer',
  signingKeyRevoke: 'wardtoken.SigningKeysAnswer',
  signingKeyList: 'wardtoken.SigningKeysAnswer',
});

/** An etcd response message: its full proto name and the object grpc-js would decode it to. */
export interface EtcdResponse {
  readonly typeName: string;
  readonly message: object;
}

/** True when the operation answers with an etcd message (all but simpleTokenExpire). */
export function hasEtcdResponse(type: ApplyResponse['type']): type is RespondingOperationType {
  return type in RESPONSE_MESSAGE_TYPES;
}

function messageTypeOf(type: ApplyResponse['type']): string {
  if (!hasEtcdResponse(type)) throw new TypeError(`${type} has no etcd response message`);
  return RESPONSE_MESSAGE_TYPES[type];
}

/**
 * The etcd response of a successful result. `revision` is the result's header revision
 * (ApplyResult.header.revision); `context` is the answering member's.
 */
export function applyResponseToProto(response: ApplyResponse, revision: number, context: ResponseContext): EtcdResponse {
  const typeName = messageTypeOf(response.type);
  const header = responseHeaderToProto(context, revision);
  switch (response.type) {
    case 'range':
      return { typeName, message: rangeResponseToProto({ ...response.response, revision }, context) };
    case 'put':
      return { typeName, message: putResponseToProto({ ...response.response, revision }, context) };
    case 'deleteRange':
      return { typeName, message: deleteRangeResponseToProto({ ...response.response, revision }, context) };
    case 'txn':
      return { typeName, message: txnResponseToProto({ ...response.response, revision }, context) };
    case 'compact':
      return { typeName, message: compactionResponseToProto({ revision }, context) };
    case 'leaseGrant':
      return { typeName, message: { header, ID: toInt64String(response.response.id), TTL: toInt64String(response.response.ttlSeconds), error: '' } satisfies LeaseGrantResponse__Output };
    case 'authStatus':
      return { typeName, message: { header, enabled: response.response.enabled, authRevision: toInt64String(response.response.authRevision) } };
    case 'authenticate':
      return { typeName, message: { header, token: response.response.token } };
    case 'userGet':
      return { typeName, message: { header, roles: [...response.response.roles] } };
    case 'userList':
      return { typeName, message: { header, users: [...response.response.users] } };
    case 'roleGet':
      return { typeName, message: { header, perm: response.response.perm.map(permissionToProto) } satisfies AuthRoleGetResponse__Output };
    case 'roleList':
      return { typeName, message: { header, roles: [...response.response.roles] } };
    case 'signingKeyList':
      return { typeName, message: { header, keys: response.response.keys.map(signingKeyToProto), auth_revision: String(response.response.authRevision) } };
    default:
      return { typeName, message: { header } };
  }
}

/** {@link applyResponseToProto}, encoded: the bytes of NodeResponse.response. */
export function encodeApplyResponse(response: ApplyResponse, revision: number, context: ResponseContext): Uint8Array {
  // The KV answers skip the proto object (kv-response-wire.ts).
  if (response.type === 'range') return encodeRangeResponseWire(response.response, revision, context);
  if (response.type === 'put') return encodePutResponseWire(response.response, revision, context);
  if (response.type === 'txn') return encodeTxnResponseWire(response.response, revision, context);
  if (response.type === 'deleteRange') return encodeDeleteRangeResponseWire(response.response, revision, context);
  const { typeName, message } = applyResponseToProto(response, revision, context);
  return encodeEtcdMessage(typeName, message);
}

type Decoded = Record<string, unknown> & { header?: Parameters<typeof responseHeaderFromProto>[0] };

/** The domain response and header of a decoded etcd response message of operation `type`. */
export function applyResponseFromProto(type: ApplyResponse['type'], message: object): { response: ApplyResponse; header: ResponseHeaderFields } {
  messageTypeOf(type);
  const m = message as Decoded;
  const header = responseHeaderFromProto(m.header);
  const strings = (value: unknown, field: string): string[] => ((value as unknown[] | undefined) ?? []).map((item) => stringFromProto(item, field));
  const response = ((): ApplyResponse => {
    switch (type) {
      case 'range':
        return { type, response: rangeResponseFromProto(m as never) };
      case 'put':
        return { type, response: putResponseFromProto(m as never) };
      case 'deleteRange':
        return { type, response: deleteRangeResponseFromProto(m as never) };
      case 'txn':
        return { type, response: txnResponseFromProto(m as never) };
      case 'compact':
        return { type, response: { revision: header.revision } };
      case 'leaseGrant':
        return { type, response: { id: int64ToBigInt(m.ID as string, 'LeaseGrantResponse.ID'), ttlSeconds: int64ToNumber(m.TTL as string, 'LeaseGrantResponse.TTL') } };
      case 'authStatus':
        return { type, response: { enabled: boolFromProto(m.enabled, 'AuthStatusResponse.enabled'), authRevision: uint64ToNumber(m.authRevision as string, 'AuthStatusResponse.authRevision') } };
      case 'authenticate':
        return { type, response: { token: stringFromProto(m.token, 'AuthenticateResponse.token') } };
      case 'userGet':
        return { type, response: { roles: strings(m.roles, 'AuthUserGetResponse.roles') } };
      case 'userList':
        return { type, response: { users: strings(m.users, 'AuthUserListResponse.users') } };
      case 'roleGet':
        return { type, response: { perm: ((m.perm as AuthRoleGetResponse__Output['perm'] | undefined) ?? []).map((p, i) => permissionFromProto(p, `AuthRoleGetResponse.perm[${i}]`)) } };
      case 'roleList':
        return { type, response: { roles: strings(m.roles, 'AuthRoleListResponse.roles') } };
      case 'signingKeyList':
        return {
          type,
          response: {
            keys: ((m.keys as PublicKey__Output[] | undefined) ?? []).map(signingKeyFromProto),
            authRevision: uint64ToNumber(m.auth_revision as string, 'SigningKeysAnswer.auth_revision'),
          },
        };
      default:
        return { type, response: {} } as ApplyResponse;
    }
  })();
  return { response, header };
}

/** Decodes NodeResponse.response bytes of operation `type`. */
export function decodeApplyResponse(type: ApplyResponse['type'], bytes: Uint8Array): { response: ApplyResponse; header: ResponseHeaderFields } {
  return applyResponseFromProto(type, decodeEtcdMessage(messageTypeOf(type), bytes));
}

function signingKeyToProto(key: SigningKeyRecord): PublicKey {
  return { key_id: key.keyId, alg: key.alg, jwk_json: key.publicJwk, not_before_seconds: String(key.notBeforeSeconds), retire_after_seconds: String(key.retireAfterSeconds) };
}

function signingKeyFromProto(key: PublicKey__Output): SigningKeyRecord {
  return {
    keyId: key.key_id,
    alg: key.alg,
    publicJwk: key.jwk_json,
    notBeforeSeconds: int64ToNumber(key.not_before_seconds, 'PublicKey.not_before_seconds'),
    retireAfterSeconds: int64ToNumber(key.retire_after_seconds, 'PublicKey.retire_after_seconds'),
  };
}
