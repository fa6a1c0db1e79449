// The state machine's canonical snapshot:
//
//   magic        4 bytes "WAPL"
//   version      uvarint (1)
//   applied      uvarint: index of the last applied entry
//   auth         bytes: the auth store's snapshot (its own canonical format)
//   kv           bytes: the key space's snapshot (its own canonical format)
//   leases       count, then per lease in ascending ID order: id zigzag varint, TTL zigzag varint
//   tokens       count, then per simple token in ascending token order: token string, user string
//   (version 2 only)
//   signing keys count, then per key in ascending id order: id, alg, public JWK (strings),
//                notBefore uvarint, retireAfter uvarint; then count, then each revoked id (string)
//                oldest first
//
// Version 1 is written while the signing-key directory is empty (so a state without signing keys
// has exactly the bytes, and the hash, it had before the directory existed), version 2 otherwise;
// both are read.
//
// A token's log index is the number after its '.', so it is not stored twice. Decoding accepts only
// this canonical form (sorted, duplicate-free, tokens only while auth is on and only for existing
// users), so a restored state re-encodes to the same bytes and hashes the same.

import type { AuthStore } from '@ward/auth/permissions';
import type { KVStore, KVStoreDecoder, KeySpaceSnapshotTask, SnapshotStepResult, SnapshotStreamOptions } from '@ward/etcd/kv-store';
import { BinaryDecodeError, BinaryReader, BinaryWriter, chunksByteLength, joinChunks } from '@ward/shared/binary';
import { CodedError } from '@ward/shared/errors';
import { ApplyError } from './errors';
import { MAX_REVOKED_KEY_IDS, MAX_SIGNING_KEYS, MAX_PUBLIC_JWK_CHARS, type SigningKeyDirectory } from './key-directory';
import type { LeaseTable } from './lease-table';
import { parseSimpleToken, type SimpleTokenTable } from '@ward/auth/simple-tokens';

const MAGIC = Uint8Array.of(0x57, 0x41, 0x50, 0x4c);
const FORMAT_VERSION = 1;
const FORMAT_VERSION_WITH_SIGNING_KEYS = 2;
/** The largest section read: 4 GiB, as large as a whole member snapshot may be (its length is 32 bits). */
const SECTION_MAX_BYTES = 2 ** 32;

/**
 * The applier's snapshot taken in steps: the auth store, leases, simple tokens and signing keys
 * (small) are written when the task is made, the key space (the bulk of a large state) in steps
 * between which the applier may go on applying; the bytes are those of the state when the task
 * was made. The key space's chunks sit between a head and a tail written here, uncopied.
 *
 * Streamed (SnapshotStreamOptions: the key space is sized first, then written into buffers the
 * consumer hands back), `sizeBytes` tells the length once the key space is sized, and
 * `takeChunks` hands out the head, the key space's chunks as they fill, and the tail, in order.
 */
export class ApplierSnapshotTask {
  private readonly authBytes: Uint8Array;
  private readonly tail: Uint8Array;
  private readonly version: number;
  private readonly kvTask: KeySpaceSnapshotTask;
  private readonly streamed: boolean;
  private chunksValue: Uint8Array[] | undefined;
  private kvDone = false;
  /** Streamed: the head (known once the key space is sized), and what takeChunks has handed out. */
  private headValue: Uint8Array | undefined;
  private headTaken = false;
  private tailTaken = false;

  constructor(
    private readonly appliedIndex: number,
    auth: AuthStore,
    kv: KVStore,
    leases: LeaseTable,
    tokens: SimpleTokenTable,
    signingKeys: SigningKeyDirectory,
    stream?: SnapshotStreamOptions,
  ) {
    this.authBytes = auth.snapshot();
    this.version = formatVersion(signingKeys);
    this.kvTask = kv.snapshotTask(stream);
    this.streamed = stream !== undefined;
    this.tail = encodeTail(leases, tokens, signingKeys);
  }

  /** Writes up to `budget` keys of the key space; see KeySpaceSnapshotTask.step. */
  step(budget?: number): SnapshotStepResult {
    const result = this.kvTask.step(budget);
    if (result === 'done') this.kvDone = true;
    if (result === 'done' && !this.streamed && this.chunksValue === undefined) {
      const kvChunks = this.kvTask.chunks;
      this.chunksValue = [this.head(chunksByteLength(kvChunks)), ...kvChunks, this.tail];
    }
    return result;
  }

  private head(kvBytes: number): Uint8Array {
    return encodeHead(this.version, this.appliedIndex, this.authBytes, kvBytes);
  }

  /** The snapshot's chunks, in order, once `step` returned 'done' (not streamed). */
  get chunks(): Uint8Array[] {
    if (this.chunksValue === undefined) throw new TypeError('applier snapshot: not done (or streamed)');
    return this.chunksValue;
  }

  /** Streamed: the head, once the key space is sized (undefined before). */
  private streamedHead(): Uint8Array | undefined {
    const kvBytes = this.kvTask.sizeBytes;
    if (kvBytes !== undefined) this.headValue ??= this.head(kvBytes);
    return this.headValue;
  }

  /** Streamed: the snapshot's length in bytes, once the key space is sized (undefined before). */
  get sizeBytes(): number | undefined {
    const head = this.streamedHead();
    return head === undefined ? undefined : head.length + this.kvTask.sizeBytes! + this.tail.length;
  }

  /** Streamed: the chunks made since the last call, in order (nothing before the length is known). */
  takeChunks(): Uint8Array[] {
    if (!this.streamed) throw new TypeError('applier snapshot: takeChunks is for a streamed task');
    const head = this.streamedHead();
    if (head === undefined) return [];
    const taken = this.kvTask.takeChunks();
    if (!this.headTaken) {
      this.headTaken = true;
      taken.unshift(head);
    }
    if (this.kvDone && !this.tailTaken) {
      this.tailTaken = true;
      taken.push(this.tail);
    }
    return taken;
  }
}

function formatVersion(signingKeys: SigningKeyDirectory): number {
  return signingKeys.empty ? FORMAT_VERSION : FORMAT_VERSION_WITH_SIGNING_KEYS;
}

/** The bytes before the key space's section of `kvBytes`: magic, version, applied index, the auth store, the section's length. */
function encodeHead(version: number, appliedIndex: number, authBytes: Uint8Array, kvBytes: number): Uint8Array {
  const head = new BinaryWriter({ initialCapacityBytes: authBytes.length + 64 });
  return head.raw(MAGIC).uvarint(version).uvarint(appliedIndex).bytes(authBytes).uvarint(kvBytes).finish();
}

/** The bytes after the key space's section: leases, simple tokens and (version 2) signing keys. */
function encodeTail(leases: LeaseTable, tokens: SimpleTokenTable, signingKeys: SigningKeyDirectory): Uint8Array {
  const writer = new BinaryWriter({ initialCapacityBytes: 1024 });
  const leaseEntries = leases.entries();
  writer.uvarint(leaseEntries.length);
  for (const [id, ttlSeconds] of leaseEntries) writer.svarint64(id).svarint64(BigInt(ttlSeconds));
  const tokenEntries = tokens.entries();
  writer.uvarint(tokenEntries.length);
  for (const [token, owner] of tokenEntries) writer.string(token).string(owner.username);
  if (!signingKeys.empty) {
    const keys = signingKeys.list();
    writer.uvarint(keys.length);
    for (const key of keys) writer.string(key.keyId).string(key.alg).string(key.publicJwk).uvarint(key.notBeforeSeconds).uvarint(key.retireAfterSeconds);
    const revoked = signingKeys.revokedIds();
    writer.uvarint(revoked.length);
    for (const id of revoked) writer.string(id);
  }
  return writer.finish();
}

/** The state machine's snapshot without its key-space section: what comes before it and after it. */
export interface SnapshotAroundKeySpace {
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
}

/**
 * The snapshot's bytes around a key-space section of `kvBytes` (the key space's own canonical
 * bytes go between, unchanged): for a state whose key space is already encoded elsewhere, e.g. a
 * backup's, so it is not encoded again.
 */
export function snapshotAroundKeySpace(parts: Omit<SnapshotParts, 'kv'>, kvBytes: number): SnapshotAroundKeySpace {
  const { auth, leases, tokens, signingKeys, appliedIndex } = parts;
  return { head: encodeHead(formatVersion(signingKeys), appliedIndex, auth.snapshot(), kvBytes), tail: encodeTail(leases, tokens, signingKeys) };
}

/** Where a snapshot's key-space section lies: its first byte's offset from the snapshot's start, and its length. */
export interface KeySpaceSection {
  readonly offset: number;
  readonly length: number;
}

export interface SnapshotParts {
  readonly auth: AuthStore;
  readonly kv: KVStore;
  readonly leases: LeaseTable;
  readonly tokens: SimpleTokenTable;
  readonly signingKeys: SigningKeyDirectory;
  readonly appliedIndex: number;
}

export interface SnapshotRestorers {
  readonly restoreAuth: (bytes: Uint8Array) => AuthStore;
  readonly restoreKv: (bytes: Uint8Array) => KVStore;
  /** Empty tables to fill (the key space is built around `leases`). */
  readonly leases: LeaseTable;
  readonly tokens: SimpleTokenTable;
  readonly signingKeys: SigningKeyDirectory;
}

function invalid(reason: string, cause?: unknown): never {
  throw new ApplyError('ERR_APPLY_SNAPSHOT_INVALID', `invalid snapshot: ${reason}`, { cause });
}

export function decodeApplierSnapshot(bytes: Uint8Array, restorers: SnapshotRestorers): SnapshotParts {
  return asInvalidSnapshot(() => readSnapshot(new BinaryReader(bytes), restorers));
}

/** Runs `decode`; the expected failures of the parts make the whole snapshot invalid. */
function asInvalidSnapshot<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof ApplyError && error.code === 'ERR_APPLY_SNAPSHOT_INVALID') throw error;
    // Expected failures of the parts (bad auth or key-space section, a lease rule) make the whole
    // snapshot invalid; anything else is a bug and propagates.
    if (error instanceof CodedError) return invalid('a section does not decode', error);
    throw error;
  }
}

/** SnapshotRestorers for a snapshot pushed in pieces: the key space comes through a decoder. */
export interface StreamedRestorers extends Omit<SnapshotRestorers, 'restoreKv'> {
  readonly kvDecoder: (totalBytes: number) => KVStoreDecoder;
}

/**
 * The state machine's snapshot decoded from pieces pushed in order (a replica's feed), never joined
 * whole: the head and the auth store are gathered until complete, the key space (the bulk) goes
 * piece by piece into its decoder, and the small tail (leases, tokens, signing keys) is gathered
 * and read by `finish`. Pieces are copied where kept, so the caller may reuse its buffers.
 */
export class ApplierSnapshotDecoder {
  private phase: 'head' | 'kv' | 'tail' = 'head';
  private head: Uint8Array[] = [];
  private headBytes = 0;
  /** Head bytes needed before the next attempt to read it (known once the auth length is). */
  private headNeeded = 0;
  private version = 0;
  private appliedIndex = 0;
  private auth: AuthStore | undefined;
  private kv: KVStoreDecoder | undefined;
  private kvLeft = 0;
  private readonly tail: Uint8Array[] = [];
  private section: KeySpaceSection | undefined;

  constructor(private readonly restorers: StreamedRestorers) {}

  /** Where the key space's section lies in the bytes pushed, once the head was read (undefined before). */
  get keySpaceSection(): KeySpaceSection | undefined {
    return this.section;
  }

  push(piece: Uint8Array): void {
    asInvalidSnapshot(() => {
      if (this.phase !== 'head') return this.feed(piece);
      // Copies (not slice: on a Node Buffer that is a view): the caller may reuse its buffers.
      this.head.push(new Uint8Array(piece));
      this.headBytes += piece.length;
      if (this.headBytes >= this.headNeeded) this.readHead();
    });
  }

  finish(): SnapshotParts {
    return asInvalidSnapshot(() => {
      if (this.phase !== 'tail') invalid('truncated');
      const kv = this.kv!.finish();
      const reader = new BinaryReader(joinChunks(this.tail));
      const { leases, tokens, signingKeys } = this.restorers;
      readLeases(reader, leases);
      readTokens(reader, tokens, this.auth!, this.appliedIndex);
      if (this.version === FORMAT_VERSION_WITH_SIGNING_KEYS) {
        readSigningKeys(reader, signingKeys);
        if (signingKeys.empty) invalid('an empty signing-key section is written as version 1');
      }
      reader.expectEnd();
      return { auth: this.auth!, kv, leases, tokens, signingKeys, appliedIndex: this.appliedIndex };
    });
  }

  /** Reads the head once it is all here (the auth store, the key space's length), then feeds on. */
  private readHead(): void {
    const bytes = this.head.length === 1 ? this.head[0]! : joinChunks(this.head);
    this.head = [bytes];
    const reader = new BinaryReader(bytes);
    let authBytes: Uint8Array;
    let kvLength: number;
    try {
      ({ version: this.version, appliedIndex: this.appliedIndex } = readHeadFields(reader));
      const authLength = reader.uvarint();
      if (authLength > SECTION_MAX_BYTES) invalid('auth section too large');
      // Not read again before the auth store and the key space's length can be here.
      this.headNeeded = reader.offset + authLength + 1;
      authBytes = reader.raw(authLength);
      kvLength = reader.uvarint();
    } catch (error) {
      if (error instanceof BinaryDecodeError && error.reason === 'truncated') return;
      throw error;
    }
    if (kvLength > SECTION_MAX_BYTES) invalid('key-space section too large');
    this.auth = this.restorers.restoreAuth(authBytes);
    this.kv = this.restorers.kvDecoder(kvLength);
    this.kvLeft = kvLength;
    this.section = { offset: reader.offset, length: kvLength };
    this.phase = 'kv';
    this.head = [];
    this.feed(bytes.subarray(reader.offset));
  }

  private feed(bytes: Uint8Array): void {
    let rest = bytes;
    if (this.phase === 'kv') {
      const take = Math.min(this.kvLeft, rest.length);
      if (take > 0) this.kv!.push(take === rest.length ? rest : rest.subarray(0, take));
      this.kvLeft -= take;
      if (this.kvLeft === 0) this.phase = 'tail';
      rest = rest.subarray(take);
    }
    if (rest.length > 0) this.tail.push(new Uint8Array(rest));
  }
}

function readSnapshot(reader: BinaryReader, restorers: SnapshotRestorers): SnapshotParts {
  const { version, appliedIndex } = readHeadFields(reader);
  const auth = restorers.restoreAuth(reader.bytes(SECTION_MAX_BYTES));
  // The key space's section (the bulk of a large state) is decoded from a view: nothing keeps it.
  const kv = restorers.restoreKv(reader.bytesView(SECTION_MAX_BYTES));
  readLeases(reader, restorers.leases);
  readTokens(reader, restorers.tokens, auth, appliedIndex);
  if (version === FORMAT_VERSION_WITH_SIGNING_KEYS) {
    readSigningKeys(reader, restorers.signingKeys);
    if (restorers.signingKeys.empty) invalid('an empty signing-key section is written as version 1');
  }
  reader.expectEnd();
  return { auth, kv, leases: restorers.leases, tokens: restorers.tokens, signingKeys: restorers.signingKeys, appliedIndex };
}

/** The magic, the format version and the applied index. */
function readHeadFields(reader: BinaryReader): { version: number; appliedIndex: number } {
  const magic = reader.raw(MAGIC.length);
  if (!MAGIC.every((byte, i) => magic[i] === byte)) invalid('not a state machine snapshot');
  const version = reader.uvarint();
  if (version !== FORMAT_VERSION && version !== FORMAT_VERSION_WITH_SIGNING_KEYS) invalid('unknown snapshot version');
  return { version, appliedIndex: reader.uvarint() };
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
    const parts = parseSimpleToken(token);
    if (parts === undefined || parts.index > appliedIndex) invalid('malformed simple token');
    if (!auth.hasUser(username)) invalid('simple token of a missing user');
    tokens.restore(token, { username, index: parts.index });
  }
}

function readSigningKeys(reader: BinaryReader, directory: SigningKeyDirectory): void {
  const count = reader.count(MAX_SIGNING_KEYS);
  let previous: string | undefined;
  for (let i = 0; i < count; i++) {
    const keyId = reader.string(64);
    if (previous !== undefined && !(previous < keyId)) invalid('signing keys must ascend');
    previous = keyId;
    const alg = reader.string(16);
    const publicJwk = reader.string(MAX_PUBLIC_JWK_CHARS * 4);
    directory.restoreKey({ keyId, alg, publicJwk, notBeforeSeconds: reader.uvarint(), retireAfterSeconds: reader.uvarint() });
  }
  const revoked = reader.count(MAX_REVOKED_KEY_IDS);
  for (let i = 0; i < revoked; i++) directory.restoreRevoked(reader.string(64));
}
