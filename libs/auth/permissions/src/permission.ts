import { compareBytes, concatBytes } from '@ward/shared/bytes';

/** etcd's `authpb.Permission.Type` values. */
export const PermissionType = { READ: 0, WRITE: 1, READWRITE: 2 } as const;

/**
 * A key permission as etcd stores it. `permType` is kept as given (an int32): values outside
 * READ/WRITE/READWRITE can arrive through raw gRPC, are stored and listed, and grant nothing.
 * `rangeEnd` empty = the single key; `[0x00]` = every key from `key` on; otherwise `[key, rangeEnd)`.
 */
export interface Permission {
  readonly permType: number;
  readonly key: Uint8Array;
  readonly rangeEnd: Uint8Array;
}

/** The kind of access a check asks for. */
export type Access = 'read' | 'write';

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

export function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
}

/** True for etcd's open-ended range end, the single byte 0x00. */
export function isOpenEnded(rangeEnd: Uint8Array): boolean {
  return rangeEnd.length === 1 && rangeEnd[0] === 0;
}

/**
 * etcd's `isValidPermissionRange`: a non-empty key, and either no range end, an end above the key,
 * or the open end 0x00.
 */
export function isValidPermissionRange(key: Uint8Array, rangeEnd: Uint8Array): boolean {
  if (key.length === 0) return false;
  if (rangeEnd.length === 0) return true;
  if (compareBytes(key, rangeEnd) < 0) return true;
  return isOpenEnded(rangeEnd);
}

export function grantsRead(permType: number): boolean {
  return permType === PermissionType.READ || permType === PermissionType.READWRITE;
}

export function grantsWrite(permType: number): boolean {
  return permType === PermissionType.WRITE || permType === PermissionType.READWRITE;
}

/** Total order of a role's permissions: by key (as etcd sorts), ties by range end. */
export function comparePermissionRanges(a: Permission, b: Permission): -1 | 0 | 1 {
  const byKey = compareBytes(a.key, b.key);
  return byKey !== 0 ? byKey : compareBytes(a.rangeEnd, b.rangeEnd);
}

/**
 * The half-open interval a valid permission covers: a single key k is `[k, k+0x00)`, the open end
 * is `null` (+∞), anything else is `[key, rangeEnd)`.
 */
export function permissionInterval(permission: Permission): { begin: Uint8Array; end: Uint8Array | null } {
  const { key, rangeEnd } = permission;
  if (rangeEnd.length === 0) return { begin: key, end: concatBytes(key, ZERO_BYTE) };
  if (isOpenEnded(rangeEnd)) return { begin: key, end: null };
  return { begin: key, end: rangeEnd };
}

const ZERO_BYTE = Uint8Array.of(0);

/** A copy that owns its bytes, so callers can never mutate the store through a shared array. */
export function copyPermission(permission: Permission): Permission {
  // new Uint8Array(x), not x.slice(): a Node Buffer's slice shares its memory.
  return { permType: permission.permType, key: new Uint8Array(permission.key), rangeEnd: new Uint8Array(permission.rangeEnd) };
}
