// Auth requests in the entry format. Password hashes travel as raw bcrypt bytes behind a presence
// byte and are checked on both sides: nothing that is not a bcrypt hash is written or read.

import type { Permission } from '@ward/auth/permissions';
import { BinaryDecodeError, type BinaryReader, type BinaryWriter } from '@ward/shared/binary';
import { BCRYPT_HASH_BYTES, isBcryptHash, toPasswordHash, type PasswordHash } from '../password-hash';
import type { RoleGrantPermissionRequest, RoleRevokePermissionRequest } from '../request';
import { isSimpleTokenPrefix } from '@ward/auth/simple-tokens';

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

export function readName(reader: BinaryReader): string {
  return reader.string(reader.remaining);
}

function readBytes(reader: BinaryReader): Uint8Array {
  return reader.bytes(reader.remaining);
}

function readPresence(reader: BinaryReader): boolean {
  const at = reader.offset;
  const present = reader.uint8();
  if (present > 1) throw new BinaryDecodeError('invalid-value', at, 'presence byte is 0 or 1');
  return present === 1;
}

export function writePasswordHash(writer: BinaryWriter, hash: PasswordHash | null): void {
  if (hash === null) {
    writer.uint8(0);
    return;
  }
  if (!(hash instanceof Uint8Array) || !isBcryptHash(hash)) throw new TypeError('a password hash must be a bcrypt hash');
  writer.uint8(1).bytes(hash);
}

export function readPasswordHash(reader: BinaryReader): PasswordHash | null {
  if (!readPresence(reader)) return null;
  const at = reader.offset;
  const bytes = reader.bytes(BCRYPT_HASH_BYTES);
  if (!isBcryptHash(bytes)) throw new BinaryDecodeError('invalid-value', at, 'password hash is not a bcrypt hash');
  return toPasswordHash(bytes);
}

export function writePermissionGrant(writer: BinaryWriter, request: RoleGrantPermissionRequest): void {
  writer.string(request.name);
  const perm = request.perm;
  if (perm === null) {
    writer.uint8(0);
    return;
  }
  if (!Number.isInteger(perm.permType) || perm.permType < INT32_MIN || perm.permType > INT32_MAX) {
    throw new TypeError('permType must be an int32');
  }
  writer.uint8(1).svarint64(BigInt(perm.permType)).bytes(perm.key).bytes(perm.rangeEnd);
}

export function readPermissionGrant(reader: BinaryReader): RoleGrantPermissionRequest {
  const name = readName(reader);
  if (!readPresence(reader)) return { name, perm: null };
  const at = reader.offset;
  const permType = reader.svarint64();
  if (permType < BigInt(INT32_MIN) || permType > BigInt(INT32_MAX)) {
    throw new BinaryDecodeError('out-of-range', at, 'permType is not an int32');
  }
  const perm: Permission = { permType: Number(permType), key: readBytes(reader), rangeEnd: readBytes(reader) };
  return { name, perm };
}

export function writePermissionRevoke(writer: BinaryWriter, request: RoleRevokePermissionRequest): void {
  writer.string(request.role).bytes(request.key).bytes(request.rangeEnd);
}

export function readPermissionRevoke(reader: BinaryReader): RoleRevokePermissionRequest {
  return { role: readName(reader), key: readBytes(reader), rangeEnd: readBytes(reader) };
}

export function writeSimpleTokenPrefix(writer: BinaryWriter, prefix: string): void {
  if (!isSimpleTokenPrefix(prefix)) throw new TypeError('a simple-token prefix is 16 letters from [a-zA-Z]');
  writer.string(prefix);
}

export function readSimpleTokenPrefix(reader: BinaryReader): string {
  const at = reader.offset;
  const prefix = reader.string(16);
  if (!isSimpleTokenPrefix(prefix)) throw new BinaryDecodeError('invalid-value', at, 'simple-token prefix is 16 letters');
  return prefix;
}
