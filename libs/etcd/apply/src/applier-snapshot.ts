// The state machine's canonical snapshot:
//
//   magic        4 bytes "WAPL"
//   version      uvarint (1)
//   applied      uvarint: index of the last applied entry
//   auth         bytes: the auth store's snapshot (its own canonical format)
//   kv           bytes: the key space's snapshot (its own canonical format)
//   leases       count, then per lease in ascending ID order: id zigzag varint, TTL zigzag varint
//   tokens       count, then per simple token in ascending token order: token string, user string
//
// A token's log index is the number after its '.', so it is not stored twice. Decoding accepts only
// this canonical form (sorted, duplicate-free, tokens only while auth is on and only for existing
// users), so a restored state re-encodes to the same bytes and hashes the same.

import type { AuthStore } from '@ward/auth/permissions';
import type { KVStore } from '@ward/etcd/kv-store';
import { BinaryReader, BinaryWriter } from '@ward/shared/binary';
import { CodedError } from '@ward/shared/errors';
import { ApplyError } from './errors';
import type { LeaseTable } from './lease-table';
import { isSimpleTokenPrefix, type SimpleTokenTable } from './simple-tokens';

const MAGIC = Uint8Array.of(0x57, 0x41, 0x50, 0x4c);
const FORMAT_VERSION = 1;
const SECTION_MAX_BYTES = 0x7fff_ffff;

export function encodeApplierSnapshot(
  appliedIndex: number,
  auth: AuthStore,
  kv: KVStore,
  leases: LeaseTable,
  tokens: SimpleTokenTable,
): Uint8Array {
  const authBytes = auth.snapshot();
  const kvBytes = kv.snapshot();
  const writer = new BinaryWriter({ initialCapacityBytes: authBytes.length + kvBytes.length + 1024 });
  writer.raw(MAGIC).uvarint(FORMAT_VERSION).uvarint(appliedIndex).bytes(authBytes).bytes(kvBytes);
  const leaseEntries = leases.entries();
  writer.uvarint(leaseEntries.length);
  for (const [id, ttlSeconds] of leaseEntries) writer.svarint64(id).svarint64(BigInt(ttlSeconds));
  const tokenEntries = tokens.entries();
  writer.uvarint(tokenEntries.length);
  for (const [token, owner] of tokenEntries) writer.string(token).string(owner.username);
  return writer.finish();
}

export interface SnapshotParts {
  readonly auth: AuthStore;
  readonly kv: KVStore;
  readonly leases: LeaseTable;
  readonly tokens: SimpleTokenTable;
  readonly appliedIndex: number;
}

export interface SnapshotRestorers {
  readonly restoreAuth: (bytes: Uint8Array) => AuthStore;
  readonly restoreKv: (bytes: Uint8Array) => KVStore;
  /** Empty tables to fill (the key space is built around `leases`). */
  readonly leases: LeaseTable;
  readonly tokens: SimpleTokenTable;
}

function invalid(reason: string, cause?: unknown): never {
  throw new ApplyError('ERR_APPLY_SNAPSHOT_INVALID', `invalid snapshot: ${reason}`, { cause });
}

export function decodeApplierSnapshot(bytes: Uint8Array, restorers: SnapshotRestorers): SnapshotParts {
  try {
    return readSnapshot(new BinaryReader(bytes), restorers);
  } catch (error) {
    if (error instanceof ApplyError && error.code === 'ERR_APPLY_SNAPSHOT_INVALID') throw error;
    // Expected failures of the parts (bad auth or key-space section, a lease rule) make the whole
    // snapshot invalid; anything else is a bug and propagates.
    if (error instanceof CodedError) return invalid('a section does not decode', error);
    throw error;
  }
}

function readSnapshot(reader: BinaryReader, restorers: SnapshotRestorers): SnapshotParts {
  const magic = reader.raw(MAGIC.length);
  if (!MAGIC.every((byte, i) => magic[i] === byte)) invalid('not a state machine snapshot');
  if (reader.uvarint() !== FORMAT_VERSION) invalid('unknown snapshot version');
  const appliedIndex = reader.uvarint();
  const auth = restorers.restoreAuth(reader.bytes(SECTION_MAX_BYTES));
  const kv = restorers.restoreKv(reader.bytes(SECTION_MAX_BYTES));
  readLeases(reader, restorers.leases);
  readTokens(reader, restorers.tokens, auth, appliedIndex);
  reader.expectEnd();
  return { auth, kv, leases: restorers.leases, tokens: restorers.tokens, appliedIndex };
}

function readLeases(reader: BinaryReader, leases: LeaseTable): void {
  const count = reader.count(leases.maxLeases);
  let previous: bigint | undefined;
  for (let i = 0; i < count; i++) {
    const id = reader.svarint64();
    const ttl = reader.svarint64();
    if (id === 0n || (previous !== undefined && id <= previous)) invalid('lease IDs must ascend and be non-zero');
    if (ttl < BigInt(Number.MIN_SAFE_INTEGER) || ttl > BigInt(Number.MAX_SAFE_INTEGER)) invalid('lease TTL out of range');
    previous = id;
    leases.grant(id, Number(ttl));
  }
}

function readTokens(reader: BinaryReader, tokens: SimpleTokenTable, auth: AuthStore, appliedIndex: number): void {
  const count = reader.count(tokens.maxTokens);
  if (count > 0 && !auth.enabled) invalid('simple tokens while auth is off');
  let previous: string | undefined;
  for (let i = 0; i < count; i++) {
    const token = reader.string(64);
    const username = reader.string(auth.limits.maxNameBytes);
    if (previous !== undefined && !(previous < token)) invalid('tokens must ascend');
    previous = token;
    const dot = token.indexOf('.');
    const index = Number(token.slice(dot + 1));
    const wellFormed = dot === 16 && isSimpleTokenPrefix(token.slice(0, dot)) && /^[1-9][0-9]*$/.test(token.slice(dot + 1));
    if (!wellFormed || !Number.isSafeInteger(index) || index > appliedIndex) invalid('malformed simple token');
    if (!auth.hasUser(username)) invalid('simple token of a missing user');
    tokens.restore(token, { username, index });
  }
}
