import { BinaryDecodeError, BinaryReader, BinaryWriter, ChunkSink, TeeSink, joinChunks, uvarintBytes } from '@ward/shared/binary';
import type { ByteString } from './byte-string';
import { compactionStep, finishCompaction } from './compaction';
import { KVSnapshotInvalidError } from './errors';
import { EventHistory } from './event-history';
import { KeyRecord } from './key-record';
import { KeySpace, NEVER_COMPACTED, keyIndexBuilder } from './key-space';
import type { SortedMapBuilder } from './ordered-map';
import { assert } from '@ward/shared/errors';
import { crc32c } from '@ward/shared/checksum';
import { LeaseIndex } from './lease-index';
import { StateDigest } from './state-digest';
import { StateHasher } from './state-hash';
import { KEY_SPACE_FORMAT_LATEST, NO_LEASE, type KeySpaceFormat } from './types';

// The canonical binary image of a key space (formats 1 and 2). Equal states encode to equal bytes
// in a format, so the state hash is the hash of the format 1 encoding.
//
//   magic "WKVS" | format u8 (1 or 2)
//   currentRevision varint | compactRevision + 1 varint | eventFloorRevision varint | keyCount varint
//   keyCount x key, ascending:
//     key (varint length + bytes) | recordCount varint | records oldest first:
//       flags u8 (bit 0 tombstone, bit 1 lease) | modRevision varint | subRevision varint
//       live records only: createRevision varint | version varint | [lease int64 LE] | value (varint length + bytes)
//   trailer: CRC-32C u32 LE of every byte before the trailer | format 1: FNV-1a u32 LE of the same
//            bytes; format 2: 0 (reserved)
//
// Format 2 differs only there: the FNV-1a, byte by byte, was most of what a snapshot's checking
// cost its writer (1.1 of 1.3 ns a byte; the CRC-32C runs on the CPU's instruction), and no reader
// checks it since the CRC-32C is checked alone. Readers take both formats; writers write
// KVStoreOptions.snapshotFormat (format 1 for readers of versions that know only format 1).
//
// Derived state (lease attachments, live-key count, the Watch log) is rebuilt on restore: the log
// is every record with revision >= the event floor, in (revision, sub-revision) order.

const MAGIC = [0x57, 0x4b, 0x56, 0x53];
/** The reserved trailer word of format 2. */
const RESERVED_TRAILER_WORD = 0;
const FLAG_TOMBSTONE = 0x01;
const FLAG_LEASE = 0x02;
/** Smallest encoding of one record (flags, mod, sub); bounds counts read from the input. */
const MIN_RECORD_BYTES = 3;

/** The image's head fields (fixed when an encoding starts). */
interface Header {
  readonly currentRevision: number;
  readonly compactRevision: number;
  readonly floorRevision: number;
  keyCount: number;
}

function headOf(space: KeySpace): Header {
  return { currentRevision: space.currentRevision, compactRevision: space.compactRevision, floorRevision: space.history.floorRevision, keyCount: space.index.size };
}

function writeHead(writer: BinaryWriter, head: Header, format: KeySpaceFormat): void {
  for (const byte of MAGIC) writer.uint8(byte);
  writer.uint8(format);
  writer.uvarint(head.currentRevision);
  writer.uvarint(head.compactRevision + 1);
  writer.uvarint(head.floorRevision);
  writer.uvarint(head.keyCount);
}

/**
 * Writes `key` with its records up to `revision` (newer ones are left out: they did not exist at
 * that revision), oldest first; false, and nothing written, when the key has none.
 */
function writeKeyAt(writer: BinaryWriter, key: ByteString, latest: KeyRecord, revision: number, chain: KeyRecord[]): boolean {
  const newest = newestAt(latest, revision);
  if (newest === null) return false;
  writer.uvarint(key.length).latin1(key);
  chain.length = 0;
  for (let record: KeyRecord | null = newest; record !== null; record = record.prev) chain.push(record);
  writer.uvarint(chain.length);
  for (let i = chain.length - 1; i >= 0; i--) encodeRecord(writer, chain[i]!);
  return true;
}

/** Writes the canonical image of `space` (without trailer) with the streaming `writer`, and flushes it. */
function encodeBody(writer: BinaryWriter, space: KeySpace, format: KeySpaceFormat): void {
  finishCompaction(space);
  const head = headOf(space);
  writeHead(writer, head, format);
  const chain: KeyRecord[] = [];
  space.index.scan('', null, (key, latest) => {
    writeKeyAt(writer, key, latest, head.currentRevision, chain);
  });
  writer.flush();
}

/** The newest record of the chain from `latest` at `revision` (null: the key did not exist yet). */
function newestAt(latest: KeyRecord, revision: number): KeyRecord | null {
  let newest: KeyRecord | null = latest;
  while (newest !== null && newest.modRevision > revision) newest = newest.prev;
  return newest;
}

/**
 * The bytes writeKeyAt writes for `key` at `revision`, counted without writing them (0 when it
 * writes nothing): a sizing pass that touches no value's bytes.
 */
function keyBytesAt(key: ByteString, latest: KeyRecord, revision: number): number {
  const newest = newestAt(latest, revision);
  if (newest === null) return 0;
  let bytes = uvarintBytes(key.length) + key.length;
  let records = 0;
  for (let record: KeyRecord | null = newest; record !== null; record = record.prev) {
    records++;
    bytes += recordBytes(record);
  }
  return bytes + uvarintBytes(records);
}

/** The bytes encodeRecord writes for `record`. */
function recordBytes(record: KeyRecord): number {
  const bytes = 1 + uvarintBytes(record.modRevision) + uvarintBytes(record.subRevision);
  if (record.value === null) return bytes;
  const live = bytes + uvarintBytes(record.createRevision) + uvarintBytes(record.version) + uvarintBytes(record.value.length) + record.value.length;
  return record.lease === NO_LEASE ? live : live + 8;
}

/** The bytes writeHead writes for `head`: the magic, the format byte and four varints. */
function headBytes(head: Header): number {
  return MAGIC.length + 1 + uvarintBytes(head.currentRevision) + uvarintBytes(head.compactRevision + 1) + uvarintBytes(head.floorRevision) + uvarintBytes(head.keyCount);
}

function encodeRecord(writer: BinaryWriter, record: KeyRecord): void {
  const hasLease = record.lease !== NO_LEASE;
  writer.uint8((record.value === null ? FLAG_TOMBSTONE : 0) | (hasLease ? FLAG_LEASE : 0));
  writer.uvarint(record.modRevision);
  writer.uvarint(record.subRevision);
  if (record.value === null) return;
  writer.uvarint(record.createRevision);
  writer.uvarint(record.version);
  if (hasLease) writer.bigint64le(record.lease);
  writer.uvarint(record.value.length).latin1(record.value);
}

/**
 * The state hash: 16 hex digits over the canonical image in format 1 (= a format 1 snapshot's
 * trailer), whichever format the store writes: replicas of any version compare alike.
 */
export function hashKeySpace(space: KeySpace): string {
  const hasher = new StateHasher();
  encodeBody(new BinaryWriter({ sink: hasher }), space, 1);
  return hasher.digestHex();
}

/** Chunks of a snapshot: 1 MiB each, so a large state is written once, with no copy to join it. */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

/** The snapshot bytes of `space`. */
export function encodeKeySpace(space: KeySpace, format: KeySpaceFormat = KEY_SPACE_FORMAT_LATEST): Uint8Array {
  return joinChunks(encodeKeySpaceChunks(space, format));
}

/**
 * The snapshot bytes of `space` as chunks, in order: the encoding is written once, into buffers
 * that become the chunks (a whole-state copy costs seconds at millions of keys).
 */
export function encodeKeySpaceChunks(space: KeySpace, format: KeySpaceFormat = KEY_SPACE_FORMAT_LATEST): Uint8Array[] {
  const task = new KeySpaceSnapshotTask(space, undefined, format);
  while (task.step(Number.MAX_SAFE_INTEGER) === 'more');
  return task.chunks;
}

/** Keys written per step unless the caller says otherwise (about a millisecond at 256-byte values). */
export const SNAPSHOT_DEFAULT_STEP = 256;
/**
 * Chains a compaction step cuts per key a snapshot step would write: 2,048 at the default step, as
 * many as a member's compaction turns cut per step (10,000 keys took 6 ms alone on the machine).
 */
const COMPACTION_KEYS_PER_SNAPSHOT_KEY = 8;
/** Bytes after which a step ends even short of its keys (a few keys of large values). */
export const SNAPSHOT_STEP_BYTES = SNAPSHOT_CHUNK_BYTES;

/**
 * How a step of a snapshot task ended: more to do; done (the chunks are ready); or stale, when the
 * state changed in a way the snapshot can no longer be taken at its moment: drop the task (and
 * start another, at the state's new moment, if one is still wanted).
 */
export type SnapshotStepResult = 'more' | 'done' | 'stale';

/** Bytes of the image's trailer (CRC-32C, then FNV-1a or the reserved word). */
const TRAILER_BYTES = 8;

/**
 * Keys the sizing pass counts per key a step would write. Counting touches no value's bytes, but
 * it follows the same pointers (a key's records across a heap of a GB at a million keys): 1.2 µs
 * a key against writing's 2.2 (1,000,000 keys of 256-byte values, two records each, alone on the
 * machine). At 16, a sizing step took 5 ms there (and 35-100 ms of wall time in a member's profile
 * under a bulk load), and a snapshot turn meant to last 10 ms cannot end before its first step has.
 */
const SIZING_KEYS_PER_WRITTEN_KEY = 2;

/**
 * A snapshot task that streams: the image is sized first, so that whoever writes it (a file whose
 * head gives the length) knows its length before the first byte, then written into buffers that
 * come from `nextBuffer` (those the consumer has finished with: see BinaryWriterOptions) and are
 * taken with `takeChunks` as they fill. The whole image is never held.
 */
export interface SnapshotStreamOptions {
  /** A buffer for the next chunk, at least 64 bytes (SNAPSHOT_CHUNK_BYTES is the size to give). */
  readonly nextBuffer: () => Uint8Array;
}

/**
 * The snapshot of a key space as it is when the task is made, written in steps between which the
 * key space may go on changing. The bytes are those `encodeKeySpaceChunks` gives at that moment.
 *
 * Changes after the start carry higher revisions, so every key is written with its records up to
 * the start's revision, and keys made after it (no such records) are left out. Records up to that
 * revision are never changed, except by a compaction, which cuts them: a compaction during the
 * task makes it stale. The head (revisions, event floor, key count) is taken at the start; a
 * compaction still cutting chains then is cut through by the first steps, before any key is
 * written.
 *
 * Streamed (SnapshotStreamOptions), the steps go over the keys twice: first counting the bytes
 * (arithmetic over the records' lengths; nothing is written), then writing them; both passes see
 * the same records, for the same reason, so the length known after the first is the length the
 * second writes (checked).
 */
export class KeySpaceSnapshotTask {
  private readonly head: Header;
  private readonly sink = new ChunkSink();
  private readonly hasher: StateHasher;
  private readonly writer: BinaryWriter;
  private readonly chain: KeyRecord[] = [];
  /** Streamed: the bytes the sizing pass counted so far, while it lasts. */
  private sizedBytes: number | undefined;
  private sizeBytesValue: number | undefined;
  /** Next key to visit; null once every key was. */
  private cursor: ByteString | null = '';
  private keysWritten = 0;
  private state: SnapshotStepResult = 'more';
  private headWritten = false;
  private readonly keysCompactedAwayAtStart: number;

  constructor(
    private readonly space: KeySpace,
    stream?: SnapshotStreamOptions,
    private readonly format: KeySpaceFormat = KEY_SPACE_FORMAT_LATEST,
  ) {
    this.hasher = new StateHasher({ fnv1a: format === 1 });
    this.head = headOf(space);
    this.keysCompactedAwayAtStart = space.keysCompactedAway;
    this.writer = new BinaryWriter({
      sink: new TeeSink([this.sink, this.hasher]),
      initialCapacityBytes: SNAPSHOT_CHUNK_BYTES,
      handsOverChunks: true,
      nextBuffer: stream?.nextBuffer,
    });
    if (stream !== undefined) this.sizedBytes = 0;
  }

  /** Streamed: the image's length in bytes, once the sizing pass is done (undefined before, and when not streamed). */
  get sizeBytes(): number | undefined {
    return this.sizeBytesValue;
  }

  /** Writes (streamed: sizes, then writes) up to `budget` keys (at least 1). */
  step(budget: number = SNAPSHOT_DEFAULT_STEP): SnapshotStepResult {
    assert(Number.isSafeInteger(budget) && budget > 0, 'key-space snapshot: the step budget must be a positive integer');
    if (this.state !== 'more') return this.state;
    if (this.space.compactRevision !== this.head.compactRevision) return (this.state = 'stale');
    if (!this.headWritten) {
      // A compaction still cutting chains is cut through first (in steps of its own): the image
      // holds what the compaction keeps, and the keys it took out of the index since the start
      // are not written.
      if (!compactionStep(this.space, Math.min(budget * COMPACTION_KEYS_PER_SNAPSHOT_KEY, Number.MAX_SAFE_INTEGER))) return 'more';
      this.head.keyCount -= this.space.keysCompactedAway - this.keysCompactedAwayAtStart;
      if (this.sizedBytes === undefined) writeHead(this.writer, this.head, this.format);
      else this.sizedBytes += headBytes(this.head);
      this.headWritten = true;
    }
    const next = this.sizedBytes === undefined ? this.writeKeys(budget) : this.sizeKeys(Math.min(budget * SIZING_KEYS_PER_WRITTEN_KEY, Number.MAX_SAFE_INTEGER));
    if (next !== null) {
      this.cursor = next;
      return 'more';
    }
    // Only a compaction removes keys from the index, and it makes the task stale first.
    assert(this.keysWritten === this.head.keyCount, 'key-space snapshot: keys written differ from the key count at the start');
    if (this.sizedBytes !== undefined) {
      this.sizeBytesValue = this.sizedBytes + TRAILER_BYTES;
      this.sizedBytes = undefined;
      this.cursor = '';
      this.keysWritten = 0;
      writeHead(this.writer, this.head, this.format);
      return 'more';
    }
    this.cursor = null;
    this.writer.flush();
    const trailer = new BinaryWriter({ sink: this.sink, initialCapacityBytes: 16 });
    trailer.uint32le(this.hasher.crc32c).uint32le(this.format === 1 ? this.hasher.fnv1a : RESERVED_TRAILER_WORD).flush();
    assert(this.sizeBytesValue === undefined || this.sink.length === this.sizeBytesValue, 'key-space snapshot: the bytes written differ from the bytes sized');
    return (this.state = 'done');
  }

  /** Writes keys from the cursor: `budget` of them or SNAPSHOT_STEP_BYTES, whichever comes first (large values). */
  private writeKeys(budget: number): ByteString | null {
    const writer = this.writer;
    const startBytes = writer.length;
    const chain = this.chain;
    const revision = this.head.currentRevision;
    return this.visitKeys(
      budget,
      () => writer.length - startBytes >= SNAPSHOT_STEP_BYTES,
      (key, latest) => {
        if (writeKeyAt(writer, key, latest, revision, chain)) this.keysWritten++;
      },
    );
  }

  /** Counts the bytes of `budget` keys from the cursor, as writeKeys would write them. */
  private sizeKeys(budget: number): ByteString | null {
    const revision = this.head.currentRevision;
    return this.visitKeys(
      budget,
      () => false,
      (key, latest) => {
        const bytes = keyBytesAt(key, latest, revision);
        if (bytes === 0) return;
        this.keysWritten++;
        this.sizedBytes! += bytes;
      },
    );
  }

  /**
   * Visits keys from the cursor until `budget` were visited or `full()` (asked before each key);
   * the key to go on from, or null when every key was visited.
   */
  private visitKeys(budget: number, full: () => boolean, visit: (key: ByteString, latest: KeyRecord) => void): ByteString | null {
    let visited = 0;
    let next: ByteString | null = null;
    this.space.index.scan(this.cursor!, null, (key, latest) => {
      if (visited === budget || full()) {
        next = key;
        return false;
      }
      visited++;
      visit(key, latest);
      return true;
    });
    return next;
  }

  /** The snapshot's chunks, in order, once `step` returned 'done' (not streamed). */
  get chunks(): Uint8Array[] {
    assert(this.state === 'done', 'key-space snapshot: not done');
    assert(this.sizeBytesValue === undefined, 'key-space snapshot: a streamed task hands its chunks out with takeChunks');
    return this.sink.chunks;
  }

  /**
   * Streamed: the chunks filled since the last call, in order (the trailer's with the last step).
   * The consumer hands each buffer back to `nextBuffer` once it has finished with it.
   */
  takeChunks(): Uint8Array[] {
    assert(this.sizeBytesValue !== undefined || this.sizedBytes !== undefined, 'key-space snapshot: takeChunks is for a streamed task');
    // What is taken is not kept (the sink's length still counts it).
    return this.sink.chunks.splice(0, this.sink.chunks.length);
  }
}

function fail(reader: BinaryReader, reason: string): never {
  throw new KVSnapshotInvalidError(reason, reader.offset);
}

/** A varint length (at most what is left of the image: `end` is its end in the reader's terms), then that many bytes. */
function readByteString(reader: BinaryReader, end: number): ByteString {
  const length = reader.uvarint();
  if (length > end - reader.offset) fail(reader, 'byte string longer than the rest of the image');
  return reader.latin1(length);
}

/** Rebuilds a key space from snapshot bytes; every inconsistency raises KVSnapshotInvalidError. */
export function decodeKeySpace(bytes: Uint8Array): KeySpace {
  // The trailer first: corruption is reported as such, not as whatever it broke.
  asSnapshotError(() => checkTrailer(bytes));
  const decoder = new KeySpaceDecoder(bytes.length, { checksumChecked: true });
  decoder.push(bytes);
  return decoder.finish();
}

/** Pieces are joined to the next one only as far as the key that straddles them needs: first this much. */
const STRADDLE_FIRST_BYTES = 64 * 1024;
const TRAILER_LENGTH = 8;

/** How a key-space image is decoded. */
export interface KeySpaceDecoding {
  /** The caller checks a checksum of its own over the image before it uses it: the image's CRC-32C is not taken. */
  readonly checksumChecked?: boolean;
}

/**
 * Decodes a key-space image that arrives in pieces (a replica's feed), key by key as each piece is
 * pushed: the state is never held as one buffer, and the work of a piece is bounded by its size.
 * Only a key that straddles two pieces is copied, with as little of the second as it needs. The
 * CRC-32C is taken as the bytes pass and checked by `finish`, which also rebuilds what is derived
 * (the key index, the Watch log). `decodeKeySpace` is the same with the image in one piece.
 * Every inconsistency raises KVSnapshotInvalidError, from `push` or at the latest from `finish`.
 */
export class KeySpaceDecoder {
  private readonly bodyBytes: number;
  private readonly checksumChecked: boolean;
  /** Body bytes pushed, and decoded (the image offset of the next key). */
  private bodySeen = 0;
  private bodyDecoded = 0;
  private crc = 0;
  private readonly trailer = new Uint8Array(TRAILER_LENGTH);
  private trailerSeen = 0;
  /** The start of a key (or of the head) that the pieces so far end inside: a copy. */
  private carry: Uint8Array | undefined;
  private header: Header | undefined;
  /** The key index, built a leaf at a time as the keys come (once the head gave their count). */
  private index: SortedMapBuilder<KeyRecord> | undefined;
  private keysRead = 0;
  private lastKey: ByteString | undefined;
  private readonly leases = new LeaseIndex();
  private readonly eventKeys: ByteString[] = [];
  private readonly eventRecords: KeyRecord[] = [];
  /** The revision and sub-revision of each, kept apart: the log is ordered without visiting the records again. */
  private readonly eventRevisions: number[] = [];
  private readonly eventSubRevisions: number[] = [];
  // Sizes only: the sums are taken from the state when first read (StateDigest.deferred).
  private readonly digest = StateDigest.deferred();
  private liveKeys = 0;
  /** The records of the key being read: committed to the state once the whole key was read. */
  private readonly chain: KeyRecord[] = [];

  /** `totalBytes`: the image's length, trailer included. */
  constructor(totalBytes: number, options: KeySpaceDecoding = {}) {
    if (!Number.isSafeInteger(totalBytes) || totalBytes < MAGIC.length + 1 + TRAILER_LENGTH) throw new KVSnapshotInvalidError('too short', 0);
    this.bodyBytes = totalBytes - TRAILER_LENGTH;
    this.checksumChecked = options.checksumChecked === true;
  }

  /** Decodes what `piece` completes; a piece past the announced length is refused. */
  push(piece: Uint8Array): void {
    asSnapshotError(() => {
      const bodyPart = Math.min(piece.length, this.bodyBytes - this.bodySeen);
      const trailerPart = piece.length - bodyPart;
      if (trailerPart > TRAILER_LENGTH - this.trailerSeen) throw new KVSnapshotInvalidError('longer than announced', this.bodyBytes + TRAILER_LENGTH);
      if (bodyPart > 0) {
        if (!this.checksumChecked) this.crc = crc32c(piece, this.crc, 0, bodyPart);
        this.bodySeen += bodyPart;
        this.decodeBody(bodyPart === piece.length ? piece : piece.subarray(0, bodyPart));
      }
      if (trailerPart > 0) {
        this.trailer.set(piece.subarray(bodyPart), this.trailerSeen);
        this.trailerSeen += trailerPart;
      }
    });
  }

  /** The key space, once every byte was pushed. */
  finish(): KeySpace {
    return asSnapshotError(() => {
      if (this.trailerSeen < TRAILER_LENGTH) throw new KVSnapshotInvalidError('shorter than announced', this.bodySeen + this.trailerSeen);
      if (!this.checksumChecked && new BinaryReader(this.trailer).uint32le() !== this.crc) throw new KVSnapshotInvalidError('checksum mismatch', 0);
      const header = this.header!;
      const history = rebuildHistory(this.bodyBytes, header, { keys: this.eventKeys, records: this.eventRecords, revisions: this.eventRevisions, subRevisions: this.eventSubRevisions });
      return new KeySpace(this.index!.finish(), header.currentRevision, header.compactRevision, history, this.leases, this.liveKeys, this.digest);
    });
  }

  private decodeBody(part: Uint8Array): void {
    let from = 0;
    const carry = this.carry;
    if (carry !== undefined) {
      this.carry = undefined;
      for (let take = Math.min(part.length, STRADDLE_FIRST_BYTES); ; take = Math.min(part.length, take * 4)) {
        const joined = new Uint8Array(carry.length + take);
        joined.set(carry, 0);
        joined.set(part.subarray(0, take), carry.length);
        const used = this.decodeKeys(joined);
        if (take === part.length) {
          if (used < joined.length) this.carry = joined.subarray(used);
          return;
        }
        if (used > carry.length) {
          from = used - carry.length;
          break;
        }
      }
    }
    const rest = from === 0 ? part : part.subarray(from);
    const used = this.decodeKeys(rest);
    // A copy (not slice: on a Node Buffer that is a view): the caller may reuse its buffer.
    if (used < rest.length) this.carry = new Uint8Array(rest.subarray(used));
  }

  /**
   * Decodes the head and whole keys from `bytes` (they start at image offset bodyDecoded); returns
   * the bytes they took. A key cut by the end of `bytes` waits for more, unless the body ends there.
   */
  private decodeKeys(bytes: Uint8Array): number {
    const base = this.bodyDecoded;
    const reader = new BinaryReader(bytes);
    /** The body's end in the reader's terms. */
    const end = this.bodyBytes - base;
    let used = 0;
    try {
      if (this.header === undefined) {
        this.header = readHeader(reader, end);
        this.index = keyIndexBuilder(this.header.keyCount);
      }
      used = reader.offset;
      const header = this.header;
      while (this.keysRead < header.keyCount) {
        this.readKey(reader, header, end);
        used = reader.offset;
      }
      if (used < bytes.length) fail(reader, 'trailing bytes after the last key');
    } catch (error) {
      const cut = error instanceof BinaryDecodeError && error.reason === 'truncated' && bytes.length < end;
      if (!cut) throw atOffset(error, base);
    }
    this.bodyDecoded = base + used;
    return used;
  }

  private readKey(reader: BinaryReader, header: Header, end: number): void {
    const key = readByteString(reader, end);
    if (key.length === 0) fail(reader, 'empty key');
    if (this.lastKey !== undefined && !(this.lastKey < key)) fail(reader, 'keys not strictly ascending');
    const chain = this.chain;
    chain.length = 0;
    const newest = readChain(reader, header, end, chain);
    for (const record of chain) {
      this.digest.add(key, record);
      if (record.modRevision >= header.floorRevision) {
        this.eventKeys.push(key);
        this.eventRecords.push(record);
        this.eventRevisions.push(record.modRevision);
        this.eventSubRevisions.push(record.subRevision);
      }
    }
    this.lastKey = key;
    this.keysRead++;
    this.index!.add(key, newest);
    if (newest.value !== null) {
      this.liveKeys += 1;
      if (newest.lease !== NO_LEASE) this.leases.attach(newest.lease, key);
    }
  }
}

/** Runs `decode`, turning a binary decoding error into KVSnapshotInvalidError. */
function asSnapshotError<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof BinaryDecodeError) throw new KVSnapshotInvalidError(`${error.reason}: ${error.detail}`, error.offset);
    throw error;
  }
}

/** A decoding error of bytes that start at image offset `base`, with its offset in the image. */
function atOffset(error: unknown, base: number): unknown {
  if (base === 0) return error;
  if (error instanceof KVSnapshotInvalidError) return new KVSnapshotInvalidError(error.reason, error.offset + base);
  if (error instanceof BinaryDecodeError) return new BinaryDecodeError(error.reason, error.offset + base, error.detail);
  return error;
}

function checkTrailer(bytes: Uint8Array): void {
  if (bytes.length < MAGIC.length + 1 + TRAILER_LENGTH) throw new KVSnapshotInvalidError('too short', 0);
  // The CRC-32C alone: it catches what corruption does to stored or sent bytes, and FNV-1a's byte
  // loop would cost a second or more at a million keys. Format 1 still carries the FNV-1a (older
  // versions check it); the state hash keeps it.
  const trailer = new BinaryReader(bytes.subarray(bytes.length - TRAILER_LENGTH));
  if (trailer.uint32le() !== crc32c(bytes, 0, 0, bytes.length - TRAILER_LENGTH)) throw new KVSnapshotInvalidError('checksum mismatch', 0);
}

function readHeader(reader: BinaryReader, end: number): Header {
  for (const byte of MAGIC) if (reader.uint8() !== byte) fail(reader, 'not a key-space snapshot');
  const format = reader.uint8();
  if (format !== 1 && format !== 2) fail(reader, `unsupported format ${format}`);
  const currentRevision = reader.uvarint();
  const compactRevision = reader.uvarint() - 1;
  const floorRevision = reader.uvarint();
  const keyCount = reader.uvarint();
  if (currentRevision < 1) fail(reader, 'current revision below 1');
  if (compactRevision > currentRevision) fail(reader, 'compact revision above the current revision');
  if (floorRevision < 1 || floorRevision > currentRevision) fail(reader, 'event floor out of range');
  if (floorRevision < compactRevision) fail(reader, 'event floor below the compact revision');
  if (keyCount > end - reader.offset) fail(reader, 'key count larger than the snapshot');
  return { currentRevision, compactRevision, floorRevision, keyCount };
}

/** Reads one key's records (oldest first, into `chain`), checking that they form a valid MVCC chain. */
function readChain(reader: BinaryReader, header: Header, end: number, chain: KeyRecord[]): KeyRecord {
  const count = reader.uvarint();
  if (count === 0 || count * MIN_RECORD_BYTES > end - reader.offset) fail(reader, 'record count out of range');
  let previous: KeyRecord | null = null;
  for (let i = 0; i < count; i++) {
    const record = readRecord(reader, header, end, previous);
    chain.push(record);
    previous = record;
  }
  const newest = previous!;
  if (newest.value === null && newest.modRevision < header.compactRevision) {
    fail(reader, 'tombstone below the compact revision');
  }
  return newest;
}

function readRecord(reader: BinaryReader, header: Header, end: number, previous: KeyRecord | null): KeyRecord {
  const flags = reader.uint8();
  if ((flags & ~(FLAG_TOMBSTONE | FLAG_LEASE)) !== 0) fail(reader, 'unknown record flags');
  const tombstone = (flags & FLAG_TOMBSTONE) !== 0;
  const modRevision = reader.uvarint();
  const subRevision = reader.uvarint();
  if (modRevision < 2 || modRevision > header.currentRevision) fail(reader, 'mod revision out of range');
  checkOrder(reader, header, previous, modRevision, subRevision);
  if (tombstone) {
    if ((flags & FLAG_LEASE) !== 0) fail(reader, 'tombstone with a lease');
    if (previous === null ? modRevision !== header.compactRevision : previous.value === null) {
      fail(reader, 'tombstone without a live version before it');
    }
    return new KeyRecord(null, modRevision, subRevision, 0, 0, NO_LEASE, previous);
  }
  const createRevision = reader.uvarint();
  const version = reader.uvarint();
  const lease = (flags & FLAG_LEASE) !== 0 ? reader.bigint64le() : NO_LEASE;
  if ((flags & FLAG_LEASE) !== 0 && lease === NO_LEASE) fail(reader, 'lease flag with lease 0');
  const value = readByteString(reader, end);
  checkGeneration(reader, header, previous, modRevision, createRevision, version);
  return new KeyRecord(value, modRevision, subRevision, createRevision, version, lease, previous);
}

function checkOrder(reader: BinaryReader, header: Header, previous: KeyRecord | null, mod: number, sub: number): void {
  if (previous === null) return;
  if (mod < previous.modRevision || (mod === previous.modRevision && sub <= previous.subRevision)) {
    fail(reader, 'records not in revision order');
  }
  // Below the compact revision only a chain's first record may remain, and only when no record
  // sits exactly at it (see compaction.ts).
  if (mod < header.compactRevision) fail(reader, 'two records below the compact revision');
  if (mod === header.compactRevision && previous.modRevision < header.compactRevision) {
    fail(reader, 'a record below the compact revision kept next to one at it');
  }
}

function checkGeneration(
  reader: BinaryReader,
  header: Header,
  previous: KeyRecord | null,
  mod: number,
  create: number,
  version: number,
): void {
  if (previous === null) {
    const fullHistory = header.compactRevision === NEVER_COMPACTED || mod > header.compactRevision;
    const valid = fullHistory ? create === mod && version === 1 : create >= 2 && create <= mod && version >= 1;
    if (!valid) fail(reader, 'first record inconsistent with its history');
    return;
  }
  const valid =
    previous.value === null
      ? create === mod && version === 1
      : create === previous.createRevision && version === previous.version + 1;
  if (!valid) fail(reader, 'create revision or version inconsistent with the previous record');
}

/**
 * Rebuilds the Watch log and checks it is complete: every revision from max(floor, 2) to the
 * current revision present, sub-revisions 0, 1, 2... within each. The records come in key order;
 * each goes to its place by counting (the revisions are a dense range), not by a sort: linear in
 * the log's length, which a snapshot's decoder pays at once when the last key is in.
 */
function rebuildHistory(offset: number, header: Header, events: DecodedEvents): EventHistory {
  const gap = (): never => {
    throw new KVSnapshotInvalidError('change log has a gap', offset);
  };
  const { keys, records, revisions, subRevisions } = events;
  const count = revisions.length;
  const low = Math.max(header.floorRevision, 2);
  // Revisions the log must hold, each with at least one change.
  const span = header.currentRevision - low + 1;
  if (span > count || (span <= 0 && count > 0)) gap();
  if (count === 0) return new EventHistory(header.floorRevision);
  // starts[r] is, once summed, where the changes of revision low + r begin.
  const starts = new Int32Array(span + 1);
  for (let i = 0; i < count; i++) starts[revisions[i]! - low + 1]! += 1;
  for (let r = 1; r <= span; r++) {
    if (starts[r] === 0) gap();
    starts[r]! += starts[r - 1]!;
  }
  const order = new Int32Array(count).fill(-1);
  for (let i = 0; i < count; i++) {
    const r = revisions[i]! - low;
    const slot = starts[r]! + subRevisions[i]!;
    if (slot >= starts[r + 1]! || order[slot] !== -1) gap();
    order[slot] = i;
  }
  const orderedKeys: ByteString[] = [];
  const orderedRecords: KeyRecord[] = [];
  for (let slot = 0; slot < count; slot++) {
    const i = order[slot]!;
    orderedKeys.push(keys[i]!);
    orderedRecords.push(records[i]!);
  }
  return EventHistory.fromOrdered(header.floorRevision, orderedKeys, orderedRecords);
}

/** The changes a decoder met at or above the event floor, in key order, with their revisions. */
interface DecodedEvents {
  readonly keys: ByteString[];
  readonly records: KeyRecord[];
  readonly revisions: number[];
  readonly subRevisions: number[];
}
