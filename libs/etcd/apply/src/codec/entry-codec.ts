// The binary form of an ApplyRequest, as it travels in a Raft log entry.
//
//   byte 0     0xE7 (format marker)
//   byte 1     format version (1)
//   header     id uvarint64 (etcd's uint64), username string, authRevision uvarint
//   tag        uint8: which operation (OPERATION_TAGS below; never renumbered)
//   body       the operation's fields in a fixed order, every field present
//
// Strings are strict UTF-8 and byte strings are uvarint-length-prefixed; integers are LEB128
// (zigzag for signed). Decoding is strict — shortest varints, known tags and enum values, flag
// and presence bytes without stray bits, bcrypt-shaped password hashes, no trailing bytes — so any
// accepted entry re-encodes to exactly its own bytes, and every replica reads the same request.
// Entries above `maxEntryBytes` are refused on both sides.

import { BinaryDecodeError, BinaryLimitError, BinaryReader, BinaryWriter } from '@ward/shared/binary';
import { ApplyError } from '../errors';
import { MAX_PUBLIC_JWK_CHARS } from '../key-directory';
import type { ApplyOperation, ApplyOperationType, ApplyRequest } from '../request';
import {
  readName,
  readPasswordHash,
  readPermissionGrant,
  readPermissionRevoke,
  readSimpleTokenPrefix,
  writePasswordHash,
  writePermissionGrant,
  writePermissionRevoke,
  writeSimpleTokenPrefix,
} from './auth-codec';
import {
  readDeleteRange,
  readInt,
  readPut,
  readRange,
  readTxn,
  writeDeleteRange,
  writeInt,
  writeInt64,
  writePut,
  writeRange,
  putBytesHint,
  txnBytesHint,
  writeTxn,
} from './kv-codec';

const FORMAT_MARKER = 0xe7;
export const ENTRY_FORMAT_VERSION = 1;

/** etcd's default request limit is 1.5 MiB; an entry adds a small header. */
export const DEFAULT_MAX_ENTRY_BYTES = 2 * 1024 * 1024;

/** Operation tags of format version 1. Values are the protocol: add, never renumber. */
export const OPERATION_TAGS: Readonly<Record<ApplyOperationType, number>> = {
  range: 1,
  put: 2,
  deleteRange: 3,
  txn: 4,
  compact: 5,
  leaseGrant: 6,
  leaseRevoke: 7,
  authEnable: 16,
  authDisable: 17,
  authStatus: 18,
  authenticate: 19,
  simpleTokenExpire: 20,
  userAdd: 32,
  userDelete: 33,
  userChangePassword: 34,
  userGrantRole: 35,
  userRevokeRole: 36,
  userGet: 37,
  userList: 38,
  roleAdd: 48,
  roleDelete: 49,
  roleGet: 50,
  roleList: 51,
  roleGrantPermission: 52,
  roleRevokePermission: 53,
  signingKeyPublish: 64,
  signingKeyRevoke: 65,
  signingKeyList: 66,
};

/** Bounds of the signing-key fields (the directory checks their content at apply). */
const SIGNING_KEY_ID_MAX_BYTES = 64;
const SIGNING_KEY_ALG_MAX_BYTES = 16;

const TYPE_BY_TAG: ReadonlyMap<number, ApplyOperationType> = new Map(
  Object.entries(OPERATION_TAGS).map(([type, tag]) => [tag, type as ApplyOperationType]),
);

export interface EntryCodecOptions {
  readonly maxEntryBytes?: number;
}

function limitOf(options: EntryCodecOptions): number {
  const limit = options.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 16) throw new TypeError('maxEntryBytes must be an integer of at least 16');
  return limit;
}

/** Room for an entry's head (format, id, username, auth revision, tag) and a small operation. */
const ENTRY_HEAD_BYTES = 256;

/** About the bytes of `operation`'s keys and values (what makes an entry large), 0 for the others. */
function operationBytesHint(operation: ApplyOperation): number {
  switch (operation.type) {
    case 'put':
      return putBytesHint(operation.request);
    case 'txn':
      return txnBytesHint(operation.request);
    default:
      return 0;
  }
}

/**
 * The entry bytes of `request`. A TypeError for a malformed request (a caller bug: an unknown
 * operation, a non-bcrypt password hash, a bad token prefix); ERR_APPLY_ENTRY_TOO_LARGE above the
 * size limit.
 */
export function encodeApplyRequest(request: ApplyRequest, options: EntryCodecOptions = {}): Uint8Array {
  const maxBytes = limitOf(options);
  const writer = new BinaryWriter({ maxBytes, initialCapacityBytes: Math.min(ENTRY_HEAD_BYTES + operationBytesHint(request.operation), maxBytes) });
  try {
    const { header, operation } = request;
    if (typeof header.id !== 'bigint') throw new TypeError('header.id is a uint64 bigint');
    writer.uint8(FORMAT_MARKER).uint8(ENTRY_FORMAT_VERSION);
    writer.uvarint64(header.id).string(header.username).uvarint(header.authRevision);
    const tag = OPERATION_TAGS[operation.type];
    if (tag === undefined) throw new TypeError(`unknown operation ${String(operation.type)}`);
    writer.uint8(tag);
    writeOperation(writer, operation);
    return writer.finish();
  } catch (error) {
    if (error instanceof BinaryLimitError) {
      throw new ApplyError('ERR_APPLY_ENTRY_TOO_LARGE', `entry above ${maxBytes} bytes`, { cause: error });
    }
    throw error;
  }
}

/**
 * The request in entry bytes. Untrusted input: anything but a canonical version-1 entry within the
 * size limit throws ApplyError (ERR_APPLY_ENTRY_INVALID with the offset, or ERR_APPLY_ENTRY_TOO_LARGE).
 */
export function decodeApplyRequest(bytes: Uint8Array, options: EntryCodecOptions = {}): ApplyRequest {
  const maxBytes = limitOf(options);
  if (bytes.length > maxBytes) throw new ApplyError('ERR_APPLY_ENTRY_TOO_LARGE', `entry above ${maxBytes} bytes`);
  const reader = new BinaryReader(bytes);
  try {
    if (reader.uint8() !== FORMAT_MARKER) throw new BinaryDecodeError('invalid-value', 0, 'not a request entry');
    const version = reader.uint8();
    if (version !== ENTRY_FORMAT_VERSION) throw new BinaryDecodeError('invalid-value', 1, `unknown entry version ${version}`);
    const header = { id: reader.uvarint64(), username: readName(reader), authRevision: reader.uvarint() };
    const at = reader.offset;
    const type = TYPE_BY_TAG.get(reader.uint8());
    if (type === undefined) throw new BinaryDecodeError('invalid-value', at, 'unknown operation tag');
    const operation = readOperation(reader, type);
    reader.expectEnd();
    return { header, operation };
  } catch (error) {
    if (error instanceof BinaryDecodeError) {
      throw new ApplyError('ERR_APPLY_ENTRY_INVALID', `invalid entry: ${error.reason}`, { offset: error.offset, cause: error });
    }
    throw error;
  }
}

function writeOperation(writer: BinaryWriter, operation: ApplyOperation): void {
  switch (operation.type) {
    case 'range':
      return writeRange(writer, operation.request);
    case 'put':
      return writePut(writer, operation.request);
    case 'deleteRange':
      return writeDeleteRange(writer, operation.request);
    case 'txn':
      return writeTxn(writer, operation.request);
    case 'compact':
      writeInt(writer, operation.request.revision);
      writer.bool(operation.request.physical === true);
      return;
    case 'leaseGrant':
      writeInt64(writer, operation.request.id);
      return writeInt(writer, operation.request.ttlSeconds);
    case 'leaseRevoke':
      return writeInt64(writer, operation.request.id);
    case 'authEnable':
    case 'authDisable':
    case 'authStatus':
    case 'userList':
    case 'roleList':
    case 'signingKeyList':
      return;
    case 'signingKeyPublish': {
      const { key, nowSeconds } = operation.request;
      writer.string(key.keyId).string(key.alg).string(key.publicJwk).uvarint(key.notBeforeSeconds).uvarint(key.retireAfterSeconds).uvarint(nowSeconds);
      return;
    }
    case 'signingKeyRevoke':
      writer.string(operation.request.keyId);
      return;
    default:
      return writeAuthOperation(writer, operation);
  }
}

function writeAuthOperation(writer: BinaryWriter, operation: ApplyOperation): void {
  switch (operation.type) {
    case 'authenticate':
      writer.string(operation.request.name);
      return writeSimpleTokenPrefix(writer, operation.request.simpleTokenPrefix);
    case 'simpleTokenExpire':
      writer.uvarint(operation.request.tokens.length);
      for (const token of operation.request.tokens) writer.string(token);
      return;
    case 'userAdd':
      writer.string(operation.request.name).bool(operation.request.noPassword);
      return writePasswordHash(writer, operation.request.passwordHash);
    case 'userChangePassword':
      writer.string(operation.request.name);
      return writePasswordHash(writer, operation.request.passwordHash);
    case 'userDelete':
    case 'userGet':
    case 'roleAdd':
      writer.string(operation.request.name);
      return;
    case 'roleDelete':
    case 'roleGet':
      writer.string(operation.request.role);
      return;
    case 'userGrantRole':
      writer.string(operation.request.user).string(operation.request.role);
      return;
    case 'userRevokeRole':
      writer.string(operation.request.name).string(operation.request.role);
      return;
    case 'roleGrantPermission':
      return writePermissionGrant(writer, operation.request);
    case 'roleRevokePermission':
      return writePermissionRevoke(writer, operation.request);
    default:
      throw new TypeError(`unknown operation ${String(operation.type)}`);
  }
}

function readOperation(reader: BinaryReader, type: ApplyOperationType): ApplyOperation {
  switch (type) {
    case 'range':
      return { type, request: readRange(reader) };
    case 'put':
      return { type, request: readPut(reader) };
    case 'deleteRange':
      return { type, request: readDeleteRange(reader) };
    case 'txn':
      return { type, request: readTxn(reader) };
    case 'compact':
      return { type, request: { revision: readInt(reader), physical: reader.bool() } };
    case 'leaseGrant':
      return { type, request: { id: reader.svarint64(), ttlSeconds: readInt(reader) } };
    case 'leaseRevoke':
      return { type, request: { id: reader.svarint64() } };
    case 'authEnable':
    case 'authDisable':
    case 'authStatus':
    case 'userList':
    case 'roleList':
    case 'signingKeyList':
      return { type };
    case 'signingKeyPublish': {
      const keyId = reader.string(SIGNING_KEY_ID_MAX_BYTES);
      const alg = reader.string(SIGNING_KEY_ALG_MAX_BYTES);
      const publicJwk = reader.string(MAX_PUBLIC_JWK_CHARS * 4);
      const notBeforeSeconds = reader.uvarint();
      const retireAfterSeconds = reader.uvarint();
      return { type, request: { key: { keyId, alg, publicJwk, notBeforeSeconds, retireAfterSeconds }, nowSeconds: reader.uvarint() } };
    }
    case 'signingKeyRevoke':
      return { type, request: { keyId: reader.string(SIGNING_KEY_ID_MAX_BYTES) } };
    default:
      return readAuthOperation(reader, type);
  }
}

function readAuthOperation(reader: BinaryReader, type: ApplyOperationType): ApplyOperation {
  switch (type) {
    case 'authenticate':
      return { type, request: { name: readName(reader), simpleTokenPrefix: readSimpleTokenPrefix(reader) } };
    case 'simpleTokenExpire': {
      const count = reader.count(reader.remaining);
      const tokens: string[] = [];
      for (let i = 0; i < count; i++) tokens.push(readName(reader));
      return { type, request: { tokens } };
    }
    case 'userAdd': {
      const name = readName(reader);
      const noPassword = reader.bool();
      return { type, request: { name, noPassword, passwordHash: readPasswordHash(reader) } };
    }
    case 'userChangePassword':
      return { type, request: { name: readName(reader), passwordHash: readPasswordHash(reader) } };
    case 'userDelete':
    case 'userGet':
    case 'roleAdd':
      return { type, request: { name: readName(reader) } };
    case 'roleDelete':
    case 'roleGet':
      return { type, request: { role: readName(reader) } };
    case 'userGrantRole':
      return { type, request: { user: readName(reader), role: readName(reader) } };
    case 'userRevokeRole':
      return { type, request: { name: readName(reader), role: readName(reader) } };
    case 'roleGrantPermission':
      return { type, request: readPermissionGrant(reader) };
    case 'roleRevokePermission':
      return { type, request: readPermissionRevoke(reader) };
    default:
      throw new BinaryDecodeError('invalid-value', reader.offset, `unknown operation ${type}`);
  }
}
