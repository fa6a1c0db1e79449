// The auth store's canonical binary form, used for snapshots and the state hash.
//
//   magic      4 bytes "WAUT"
//   version    uvarint (1)
//   enabled    bool (1 byte: 0 or 1)
//   revision   uvarint
//   users      count, then per user in ascending name order:
//                name string, noPassword bool, passwordHash bytes (empty when noPassword),
//                roles: count, then role names in ascending order
//   roles      count, then per role in ascending name order:
//                name string, permissions: count, then per permission in (key, rangeEnd) order:
//                permType svarint (an int32), key bytes, rangeEnd bytes
//
// Strings are strict UTF-8 with a uvarint length, byte strings likewise; all counts are uvarints.
// Decoding accepts only this canonical form (sorted, duplicate-free, valid ranges, known role
// references, within the limits), so decode(x) re-encodes to exactly x.

import { BinaryReader, BinaryWriter } from '@ward/shared/binary';
import { ROOT_ROLE, emptyAuthState, newUserState, type AuthState, type RoleState, type UserState } from './auth-state';
import { AuthError } from './errors';
import type { AuthLimits } from './limits';
import { compareNames } from './names';
import { comparePermissionRanges, isInt32, isValidPermissionRange, type Permission } from './permission';

const MAGIC = Uint8Array.of(0x57, 0x41, 0x55, 0x54);
const FORMAT_VERSION = 1;

export function encodeAuthSnapshot(state: AuthState): Uint8Array {
  const writer = new BinaryWriter({ initialCapacityBytes: 4096 });
  writer.raw(MAGIC).uvarint(FORMAT_VERSION).bool(state.enabled).uvarint(state.revision);
  const userNames = [...state.users.keys()].sort(compareNames);
  writer.uvarint(userNames.length);
  for (const name of userNames) writeUser(writer, state.users.get(name)!);
  const roleNames = [...state.roles.keys()].sort(compareNames);
  writer.uvarint(roleNames.length);
  for (const name of roleNames) writeRole(writer, state.roles.get(name)!);
  return writer.finish();
}

function writeUser(writer: BinaryWriter, user: UserState): void {
  writer.string(user.name).bool(user.noPassword).bytes(user.passwordHash).uvarint(user.roles.length);
  for (const role of user.roles) writer.string(role);
}

function writeRole(writer: BinaryWriter, role: RoleState): void {
  writer.string(role.name).uvarint(role.permissions.length);
  for (const permission of role.permissions) {
    writer.svarint64(BigInt(permission.permType)).bytes(permission.key).bytes(permission.rangeEnd);
  }
}

/**
 * Users and roles from snapshot bytes (derived indexes are left empty for the caller to rebuild).
 * Anything but a canonical snapshot within `limits` throws ERR_AUTH_SNAPSHOT_INVALID.
 */
export function decodeAuthSnapshot(bytes: Uint8Array, limits: AuthLimits): AuthState {
  try {
    return readSnapshot(new BinaryReader(bytes), limits);
  } catch (error) {
    if (error instanceof AuthError) throw error;
    throw new AuthError('ERR_AUTH_SNAPSHOT_INVALID', { cause: error });
  }
}

function invalid(reason: string): never {
  throw new AuthError('ERR_AUTH_SNAPSHOT_INVALID', { cause: new Error(reason) });
}

function readSnapshot(reader: BinaryReader, limits: AuthLimits): AuthState {
  const magic = reader.raw(MAGIC.length);
  if (!MAGIC.every((byte, i) => magic[i] === byte)) invalid('not an auth store snapshot');
  const version = reader.uvarint();
  if (version !== FORMAT_VERSION) invalid(`unsupported snapshot version ${version}`);
  const state = emptyAuthState();
  state.enabled = reader.bool();
  state.revision = reader.uvarint();
  if (state.revision === 0) invalid('a store is always at revision 1 or later');
  const userCount = reader.count(limits.maxUsers);
  let previousUser: string | undefined;
  for (let i = 0; i < userCount; i++) {
    const user = readUser(reader, limits);
    if (previousUser !== undefined && compareNames(previousUser, user.name) >= 0) invalid('users out of order');
    previousUser = user.name;
    state.users.set(user.name, user);
  }
  const roleCount = reader.count(limits.maxRoles);
  let previousRole: string | undefined;
  for (let i = 0; i < roleCount; i++) {
    const role = readRole(reader, limits);
    if (previousRole !== undefined && compareNames(previousRole, role.name) >= 0) invalid('roles out of order');
    previousRole = role.name;
    state.roles.set(role.name, role);
  }
  reader.expectEnd();
  for (const user of state.users.values()) {
    for (const role of user.roles) if (role !== ROOT_ROLE && !state.roles.has(role)) invalid('user holds a missing role');
  }
  return state;
}

function readUser(reader: BinaryReader, limits: AuthLimits): UserState {
  const name = reader.string(limits.maxNameBytes);
  if (name === '') invalid('empty user name');
  const noPassword = reader.bool();
  const passwordHash = reader.bytes(limits.maxPasswordHashBytes);
  if (noPassword && passwordHash.length > 0) invalid('no-password user with a hash');
  const user = newUserState(name, passwordHash, noPassword);
  const roleCount = reader.count(limits.maxRolesPerUser);
  for (let i = 0; i < roleCount; i++) {
    const role = reader.string(limits.maxNameBytes);
    if (role === '') invalid('empty role name');
    const previous = user.roles[user.roles.length - 1];
    if (previous !== undefined && compareNames(previous, role) >= 0) invalid('user roles out of order');
    user.roles.push(role);
  }
  return user;
}

function readRole(reader: BinaryReader, limits: AuthLimits): RoleState {
  const name = reader.string(limits.maxNameBytes);
  if (name === '') invalid('empty role name');
  const permissions: Permission[] = [];
  const count = reader.count(limits.maxPermissionsPerRole);
  for (let i = 0; i < count; i++) {
    const permType = reader.svarint64();
    const key = reader.bytes(limits.maxKeyBytes);
    const rangeEnd = reader.bytes(limits.maxKeyBytes);
    const typeNumber = Number(permType);
    if (!isInt32(typeNumber)) invalid('permission type is not an int32');
    const permission: Permission = { permType: typeNumber, key, rangeEnd };
    if (!isValidPermissionRange(key, rangeEnd)) invalid('invalid permission range');
    const previous = permissions[permissions.length - 1];
    if (previous !== undefined && comparePermissionRanges(previous, permission) >= 0) invalid('permissions out of order');
    permissions.push(permission);
  }
  return { name, permissions };
}
