// etcd's Auth requests (as grpc-js decodes them) → ApplyRequest operations. Names are passed as
// they are: etcd validates only emptiness, and only at apply (UserAdd, RoleAdd). Passwords are not
// handled here: UserAdd and UserChangePassword are hashed first (auth-api.ts).
import type { ApplyOperation } from '@ward/etcd/apply';
import type {
  AuthRoleAddRequest__Output,
  AuthRoleDeleteRequest__Output,
  AuthRoleGetRequest__Output,
  AuthRoleGrantPermissionRequest__Output,
  AuthRoleRevokePermissionRequest__Output,
  AuthUserDeleteRequest__Output,
  AuthUserGetRequest__Output,
  AuthUserGrantRoleRequest__Output,
  AuthUserRevokeRoleRequest__Output,
} from '@ward/etcd/proto';
import { GrpcStatusError } from '@ward/platform/grpc-server';
import { status as Status } from '@grpc/grpc-js';

const PERMISSION_TYPES: Readonly<Record<string, number>> = { Read: 0, Write: 1, Readwrite: 2, READ: 0, WRITE: 1, READWRITE: 2 };
const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

function bytesOf(value: Uint8Array | string | null | undefined): Uint8Array {
  if (value === undefined || value === null) return new Uint8Array(0);
  if (typeof value === 'string') return new Uint8Array(Buffer.from(value, 'base64'));
  return value;
}

/**
 * authpb.Permission.Type as the number etcd stores. A number outside the enum is kept (etcd stores
 * it; it grants nothing); a value that is not an int32 is refused as the Go decoder would.
 */
export function permissionTypeFromProto(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'string' && value in PERMISSION_TYPES) return PERMISSION_TYPES[value]!;
  if (typeof value === 'number' && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX) return value;
  throw new GrpcStatusError(Status.INVALID_ARGUMENT, 'invalid permType');
}

export function userDeleteOperation(request: AuthUserDeleteRequest__Output): ApplyOperation {
  return { type: 'userDelete', request: { name: request.name ?? '' } };
}

export function userGetOperation(request: AuthUserGetRequest__Output): ApplyOperation {
  return { type: 'userGet', request: { name: request.name ?? '' } };
}

export function userGrantRoleOperation(request: AuthUserGrantRoleRequest__Output): ApplyOperation {
  return { type: 'userGrantRole', request: { user: request.user ?? '', role: request.role ?? '' } };
}

export function userRevokeRoleOperation(request: AuthUserRevokeRoleRequest__Output): ApplyOperation {
  return { type: 'userRevokeRole', request: { name: request.name ?? '', role: request.role ?? '' } };
}

export function roleAddOperation(request: AuthRoleAddRequest__Output): ApplyOperation {
  return { type: 'roleAdd', request: { name: request.name ?? '' } };
}

export function roleDeleteOperation(request: AuthRoleDeleteRequest__Output): ApplyOperation {
  return { type: 'roleDelete', request: { role: request.role ?? '' } };
}

export function roleGetOperation(request: AuthRoleGetRequest__Output): ApplyOperation {
  return { type: 'roleGet', request: { role: request.role ?? '' } };
}

export function roleGrantPermissionOperation(request: AuthRoleGrantPermissionRequest__Output): ApplyOperation {
  const perm = request.perm;
  return {
    type: 'roleGrantPermission',
    request: {
      name: request.name ?? '',
      perm: perm === null || perm === undefined ? null : { permType: permissionTypeFromProto(perm.permType), key: bytesOf(perm.key), rangeEnd: bytesOf(perm.range_end) },
    },
  };
}

export function roleRevokePermissionOperation(request: AuthRoleRevokePermissionRequest__Output): ApplyOperation {
  return {
    type: 'roleRevokePermission',
    request: { role: request.role ?? '', key: bytesOf(request.key), rangeEnd: bytesOf(request.range_end) },
  };
}
