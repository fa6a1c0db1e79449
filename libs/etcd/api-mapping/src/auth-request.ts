// etcd's Auth requests → ApplyRequest operations (and back, for tests and clients). The gateway
// supplies what the API layer adds: bcrypt hashes computed on the password tier (never the
// plaintext, which has no field here) and the simple-token prefix. Name checks (empty user or
// role, root protections) happen at apply, in etcd's order, so nothing is checked here.
import type { Permission } from '@ward/auth/permissions';
import type { ApplyOperation, PasswordHash } from '@ward/etcd/apply';
import type {
  AuthRoleAddRequest__Output,
  AuthRoleDeleteRequest__Output,
  AuthRoleGetRequest__Output,
  AuthRoleGrantPermissionRequest__Output,
  AuthRoleRevokePermissionRequest__Output,
  AuthUserAddRequest__Output,
  AuthUserChangePasswordRequest__Output,
  AuthUserDeleteRequest__Output,
  AuthUserGetRequest__Output,
  AuthUserGrantRoleRequest__Output,
  AuthUserRevokeRoleRequest__Output,
  Permission__Output,
} from '@ward/etcd/proto';
import { boolFromProto, bytesFromProto, bytesToProto, stringFromProto } from './bytes-field';
import { PERMISSION_TYPE_NAMES, enumFromProto, enumNumber, type PermissionTypeName } from './enum-names';
import { ApiMappingError } from './errors';

type Op<T extends ApplyOperation['type']> = Extract<ApplyOperation, { type: T }>;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * etcd keeps a permission's type as the int32 it was given (values outside READ / WRITE /
 * READWRITE are stored, listed and grant nothing), so an unknown number passes through.
 */
export function permissionFromProto(proto: Permission__Output, path = 'Permission'): Permission {
  const named = enumFromProto(PERMISSION_TYPE_NAMES, proto.permType);
  let permType: number;
  if (named !== undefined) permType = enumNumber(PERMISSION_TYPE_NAMES, named);
  else if (typeof proto.permType === 'number' && Number.isInteger(proto.permType) && proto.permType >= INT32_MIN && proto.permType <= INT32_MAX) {
    permType = proto.permType;
  } else throw new ApiMappingError(`${path}.permType`, `unknown permission type ${String(proto.permType)}`);
  return { permType, key: bytesFromProto(proto.key, `${path}.key`), rangeEnd: bytesFromProto(proto.range_end, `${path}.range_end`) };
}

export function permissionToProto(permission: Permission): Permission__Output {
  const named = PERMISSION_TYPE_NAMES.entries.find((entry) => entry.number === permission.permType);
  return {
    permType: (named?.proto ?? permission.permType) as Permission__Output['permType'],
    key: bytesToProto(permission.key),
    range_end: bytesToProto(permission.rangeEnd),
  };
}

/** The permission type's etcd name, or undefined for a number outside the enum. */
export function permissionTypeName(permType: number): PermissionTypeName | undefined {
  return PERMISSION_TYPE_NAMES.entries.find((entry) => entry.number === permType)?.domain;
}

export function authEnableOperation(): Op<'authEnable'> {
  return { type: 'authEnable' };
}

export function authDisableOperation(): Op<'authDisable'> {
  return { type: 'authDisable' };
}

export function authStatusOperation(): Op<'authStatus'> {
  return { type: 'authStatus' };
}

/** Authenticate's proposal: the user and the 16-letter simple-token prefix the gateway drew. */
export function authenticateOperation(name: string, simpleTokenPrefix: string): Op<'authenticate'> {
  return { type: 'authenticate', request: { name, simpleTokenPrefix } };
}

/**
 * UserAdd: `passwordHash` is the bcrypt hash of the request's password (computed by the gateway),
 * or null when `options.no_password` is set (etcd then stores no hash).
 */
export function userAddOperation(proto: AuthUserAddRequest__Output, passwordHash: PasswordHash | null): Op<'userAdd'> {
  const noPassword = proto.options === null || proto.options === undefined ? false : boolFromProto(proto.options.no_password, 'AuthUserAddRequest.options.no_password');
  if (!noPassword && passwordHash === null) throw new TypeError('userAddOperation: a password user needs its bcrypt hash');
  return { type: 'userAdd', request: { name: stringFromProto(proto.name, 'AuthUserAddRequest.name'), passwordHash: noPassword ? null : passwordHash, noPassword } };
}

/** UserChangePassword: the bcrypt hash of the new password, or null for etcd's empty hash. */
export function userChangePasswordOperation(proto: AuthUserChangePasswordRequest__Output, passwordHash: PasswordHash | null): Op<'userChangePassword'> {
  return { type: 'userChangePassword', request: { name: stringFromProto(proto.name, 'AuthUserChangePasswordRequest.name'), passwordHash } };
}

export function userGetOperation(proto: AuthUserGetRequest__Output): Op<'userGet'> {
  return { type: 'userGet', request: { name: stringFromProto(proto.name, 'AuthUserGetRequest.name') } };
}

export function userDeleteOperation(proto: AuthUserDeleteRequest__Output): Op<'userDelete'> {
  return { type: 'userDelete', request: { name: stringFromProto(proto.name, 'AuthUserDeleteRequest.name') } };
}

export function userGrantRoleOperation(proto: AuthUserGrantRoleRequest__Output): Op<'userGrantRole'> {
  return {
    type: 'userGrantRole',
    request: { user: stringFromProto(proto.user, 'AuthUserGrantRoleRequest.user'), role: stringFromProto(proto.role, 'AuthUserGrantRoleRequest.role') },
  };
}

export function userRevokeRoleOperation(proto: AuthUserRevokeRoleRequest__Output): Op<'userRevokeRole'> {
  return {
    type: 'userRevokeRole',
    request: { name: stringFromProto(proto.name, 'AuthUserRevokeRoleRequest.name'), role: stringFromProto(proto.role, 'AuthUserRevokeRoleRequest.role') },
  };
}

export function userListOperation(): Op<'userList'> {
  return { type: 'userList' };
}

export function roleAddOperation(proto: AuthRoleAddRequest__Output): Op<'roleAdd'> {
  return { type: 'roleAdd', request: { name: stringFromProto(proto.name, 'AuthRoleAddRequest.name') } };
}

export function roleGetOperation(proto: AuthRoleGetRequest__Output): Op<'roleGet'> {
  return { type: 'roleGet', request: { role: stringFromProto(proto.role, 'AuthRoleGetRequest.role') } };
}

export function roleDeleteOperation(proto: AuthRoleDeleteRequest__Output): Op<'roleDelete'> {
  return { type: 'roleDelete', request: { role: stringFromProto(proto.role, 'AuthRoleDeleteRequest.role') } };
}

export function roleListOperation(): Op<'roleList'> {
  return { type: 'roleList' };
}

/** RoleGrantPermission: a missing `perm` stays null (apply answers `permission not given`). */
export function roleGrantPermissionOperation(proto: AuthRoleGrantPermissionRequest__Output): Op<'roleGrantPermission'> {
  const perm = proto.perm === null || proto.perm === undefined ? null : permissionFromProto(proto.perm, 'AuthRoleGrantPermissionRequest.perm');
  return { type: 'roleGrantPermission', request: { name: stringFromProto(proto.name, 'AuthRoleGrantPermissionRequest.name'), perm } };
}

export function roleRevokePermissionOperation(proto: AuthRoleRevokePermissionRequest__Output): Op<'roleRevokePermission'> {
  return {
    type: 'roleRevokePermission',
    request: {
      role: stringFromProto(proto.role, 'AuthRoleRevokePermissionRequest.role'),
      key: bytesFromProto(proto.key, 'AuthRoleRevokePermissionRequest.key'),
      rangeEnd: bytesFromProto(proto.range_end, 'AuthRoleRevokePermissionRequest.range_end'),
    },
  };
}

/** The etcd request of an auth operation (passwords are not in operations: empty on the way back). */
export function authOperationToProto(operation: ApplyOperation): { readonly typeName: string; readonly message: object } {
  const m = (typeName: string, message: object) => ({ typeName: `etcdserverpb.${typeName}`, message });
  switch (operation.type) {
    case 'authEnable':
      return m('AuthEnableRequest', {});
    case 'authDisable':
      return m('AuthDisableRequest', {});
    case 'authStatus':
      return m('AuthStatusRequest', {});
    case 'authenticate':
      return m('AuthenticateRequest', { name: operation.request.name, password: '' });
    case 'userAdd':
      return m('AuthUserAddRequest', { name: operation.request.name, password: '', options: { no_password: operation.request.noPassword } });
    case 'userChangePassword':
      return m('AuthUserChangePasswordRequest', { name: operation.request.name, password: '' });
    case 'userGet':
      return m('AuthUserGetRequest', { name: operation.request.name });
    case 'userDelete':
      return m('AuthUserDeleteRequest', { name: operation.request.name });
    case 'userGrantRole':
      return m('AuthUserGrantRoleRequest', { user: operation.request.user, role: operation.request.role });
    case 'userRevokeRole':
      return m('AuthUserRevokeRoleRequest', { name: operation.request.name, role: operation.request.role });
    case 'userList':
      return m('AuthUserListRequest', {});
    case 'roleAdd':
      return m('AuthRoleAddRequest', { name: operation.request.name });
    case 'roleGet':
      return m('AuthRoleGetRequest', { role: operation.request.role });
    case 'roleDelete':
      return m('AuthRoleDeleteRequest', { role: operation.request.role });
    case 'roleList':
      return m('AuthRoleListRequest', {});
    case 'roleGrantPermission':
      return m('AuthRoleGrantPermissionRequest', { name: operation.request.name, perm: operation.request.perm === null ? null : permissionToProto(operation.request.perm) });
    case 'roleRevokePermission':
      return m('AuthRoleRevokePermissionRequest', { role: operation.request.role, key: bytesToProto(operation.request.key), range_end: bytesToProto(operation.request.rangeEnd) });
    default:
      throw new TypeError(`authOperationToProto: ${operation.type} is not an etcd Auth request`);
  }
}
