import { BinaryDecodeError, BinaryReader, BinaryWriter, spliceRuns, type Placed } from '@ward/shared/binary';
import { assert } from '@ward/shared/errors';
import { CodecError } from '../errors';
import type { NodeId } from '../ids';
import { MAX_NODE_ID } from '../ids';
import type { Message, MessageType } from '../message';
import { isLocalMessageType, isMessageType, message } from '../message';
import type { ConfChange, ConfChangeSingle, ConfChangeTransition, ConfChangeType, ConfChangeV2 } from '../confchange/conf-change';
import { MAX_CONF_CHANGES, asV2, isConfChangeTransition, isConfChangeType } from '../confchange/conf-change';
import type { ConfState, Entry, HardState, Snapshot, SnapshotMetadata } from '../types';
import { ENTRY_HEADER_BYTES, EntryType } from '../types';

/**
 * The binary encoding of raft's persistent and wire types: deterministic (one encoding per
 * value), little-endian, length-prefixed. Layouts (u64 = 8 bytes LE, bytes = u32 length + data):
 *
 * - Entry: term u64, index u64, type u8, data bytes (21 + data bytes).
 * - HardState: term u64, vote u64, commit u64 (24 bytes).
 * - ConfState: voters, learners, votersOutgoing, learnersNext (each u32 count + u64 ids), autoLeave u8.
 * - SnapshotMetadata: index u64, term u64, ConfState. Snapshot: SnapshotMetadata, data bytes.
 * - ConfChange (data of a ConfChange entry): version u8 (=1), type u8, nodeId u64, context bytes.
 * - ConfChangeV2 (data of a ConfChangeV2 entry): version u8 (=1), transition u8, u32 count +
 *   (type u8, nodeId u64) per change, context bytes.
 * - Message: version u8 (=1), type u8, to, from, term, logTerm, index, commit, rejectHint (u64
 *   each), flags u8 (bit 0 reject, bit 1 snapshot present), context bytes, u32 entry count +
 *   entries, then the Snapshot if present. Local-only kinds are refused both ways.
 */
export const MESSAGE_CODEC_VERSION = 1;

/** Decoder limits: untrusted input can never make the decoder allocate beyond them. */
export interface DecodeLimits {
  /** Largest entry data, context, or snapshot data inside a message. Default 64 MiB. */
  readonly maxDataBytes: number;
  /**
   * Largest state-machine data of a snapshot decoded on its own (a member's snapshot file at boot).
   * Default MAX_SNAPSHOT_BYTES, the snapshot store's and the transport's own bound.
   */
  readonly maxSnapshotBytes: number;
  /** Most entries in one message. Default 1,000,000. */
  readonly maxEntries: number;
  /** Most ids in one ConfState list. Default 10,000. */
  readonly maxMembers: number;
}

/**
 * The largest snapshot a member writes, sends, receives or loads (4 GiB less 1 MiB for the file's
 * header and the snapshot's metadata): a snapshot's head carries the data's length in 32 bits.
 * Nothing holds a snapshot whole on the way (a member's own, one from its leader, a backup
 * restored by `snapshot-restore`: each is read and written in pieces). A state that would encode
 * to more is not written (the member logs it and keeps its log); the backend quota keeps a store
 * below it.
 */
export const MAX_SNAPSHOT_BYTES = 4 * 1024 ** 3 - 1024 ** 2;

export const DEFAULT_DECODE_LIMITS: DecodeLimits = Object.freeze({
  maxDataBytes: 64 * 1024 * 1024,
  maxSnapshotBytes: MAX_SNAPSHOT_BYTES,
  maxEntries: 1_000_000,
  maxMembers: 10_000,
});

const HARD_STATE_BYTES = 24;
const MESSAGE_HEADER_BYTES = 2 + 7 * 8 + 1;
const FLAG_REJECT = 1;
const FLAG_SNAPSHOT = 2;

function confStateSize(cs: ConfState): number {
  return 4 * 4 + 8 * (cs.voters.length + cs.learners.length + cs.votersOutgoing.length + cs.learnersNext.length) + 1;
}

function snapshotSize(s: Snapshot): number {
  return 16 + confStateSize(s.metadata.confState) + 4 + s.data.length;
}

/** A writer for exactly `size` bytes (the encoders compute sizes up front). */
function sized(size: number): BinaryWriter {
  return new BinaryWriter({ initialCapacityBytes: Math.max(size, 1), maxBytes: Math.max(size, 1) });
}

/** The bytes, asserting the precomputed size was exact. */
function finish(w: BinaryWriter, size: number): Uint8Array {
  assert(w.length === size, `codec size mismatch: wrote ${w.length} of ${size}`);
  return w.finish();
}

/** u32 length, then the bytes. */
function writeBytesField(w: BinaryWriter, value: Uint8Array): void {
  w.uint32le(value.length).raw(value);
}

/** An entry's fields up to its data (its data's length last). */
function writeEntryHeader(w: BinaryWriter, e: Entry): void {
  w.uint64le(e.term);
  w.uint64le(e.index);
  w.uint8(e.type);
  w.uint32le(e.data.length);
}

function writeEntry(w: BinaryWriter, e: Entry): void {
  writeEntryHeader(w, e);
  w.raw(e.data);
}

function writeIds(w: BinaryWriter, ids: readonly NodeId[]): void {
  w.uint32le(ids.length);
  for (const id of ids) w.biguint64le(id);
}

function writeConfState(w: BinaryWriter, cs: ConfState): void {
  writeIds(w, cs.voters);
  writeIds(w, cs.learners);
  writeIds(w, cs.votersOutgoing);
  writeIds(w, cs.learnersNext);
  w.uint8(cs.autoLeave ? 1 : 0);
}

function writeSnapshotMetadata(w: BinaryWriter, m: SnapshotMetadata): void {
  w.uint64le(m.index);
  w.uint64le(m.term);
  writeConfState(w, m.confState);
}

export function encodeEntry(e: Entry): Uint8Array {
  const size = ENTRY_HEADER_BYTES + e.data.length;
  const w = sized(size);
  writeEntry(w, e);
  return finish(w, size);
}

export function encodeHardState(hs: HardState): Uint8Array {
  const w = sized(HARD_STATE_BYTES);
  w.uint64le(hs.term);
  w.biguint64le(hs.vote);
  w.uint64le(hs.commit);
  return finish(w, HARD_STATE_BYTES);
}

export function encodeConfState(cs: ConfState): Uint8Array {
  const size = confStateSize(cs);
  const w = sized(size);
  writeConfState(w, cs);
  return finish(w, size);
}

export function encodeSnapshotMetadata(m: SnapshotMetadata): Uint8Array {
  const size = 16 + confStateSize(m.confState);
  const w = sized(size);
  writeSnapshotMetadata(w, m);
  return finish(w, size);
}

/**
 * encodeSnapshot's bytes as two chunks, the head (metadata and the data's length) and the data
 * itself, uncopied: a large state is written out without a whole-state copy.
 */
export function encodeSnapshotChunks(s: Snapshot): [Uint8Array, Uint8Array] {
  return [encodeSnapshotHead(s.metadata, s.data.length), s.data];
}

/**
 * The head of encodeSnapshot's bytes for data of `dataBytes` bytes: what precedes the data (its
 * metadata and length). Head + data = encodeSnapshot's bytes.
 */
export function encodeSnapshotHead(metadata: SnapshotMetadata, dataBytes: number): Uint8Array {
  const size = 16 + confStateSize(metadata.confState) + 4;
  const w = sized(size);
  writeSnapshotMetadata(w, metadata);
  w.uint32le(dataBytes);
  return finish(w, size);
}

export function encodeSnapshot(s: Snapshot): Uint8Array {
  const size = snapshotSize(s);
  const w = sized(size);
  writeSnapshotMetadata(w, s.metadata);
  writeBytesField(w, s.data);
  return finish(w, size);
}

/** Bytes of a message before its entries: the fixed header, the context and the entry count. */
function messageHeadSize(m: Message): number {
  return MESSAGE_HEADER_BYTES + 4 + m.context.length + 4;
}

/** Exact encoded size of a message. */
export function messageSizeBytes(m: Message): number {
  let size = messageHeadSize(m);
  const entries = m.entries;
  for (let i = 0; i < entries.length; i++) size += ENTRY_HEADER_BYTES + entries[i]!.data.length;
  if (m.snapshot !== undefined) size += snapshotSize(m.snapshot);
  return size;
}

function writeMessageHead(w: BinaryWriter, m: Message): void {
  if (isLocalMessageType(m.type)) throw new TypeError(`message type ${m.type} is local and is never encoded`);
  w.uint8(MESSAGE_CODEC_VERSION);
  w.uint8(m.type);
  w.biguint64le(m.to);
  w.biguint64le(m.from);
  w.uint64le(m.term);
  w.uint64le(m.logTerm);
  w.uint64le(m.index);
  w.uint64le(m.commit);
  w.uint64le(m.rejectHint);
  w.uint8((m.reject ? FLAG_REJECT : 0) | (m.snapshot !== undefined ? FLAG_SNAPSHOT : 0));
  writeBytesField(w, m.context);
  w.uint32le(m.entries.length);
}

/** Encodes a message for the wire. Throws TypeError for a local-only kind. */
export function encodeMessage(m: Message): Uint8Array {
  const size = messageSizeBytes(m);
  const w = sized(size);
  writeMessageHead(w, m);
  // Indexed loops here and in messageSizeBytes: measurably cheaper than for-of for many entries.
  const entries = m.entries;
  for (let i = 0; i < entries.length; i++) writeEntry(w, entries[i]!);
  if (m.snapshot !== undefined) {
    writeSnapshotMetadata(w, m.snapshot.metadata);
    writeBytesField(w, m.snapshot.data);
  }
  return finish(w, size);
}

/**
 * encodeMessage's bytes as pieces to be written back to back, for a message without a snapshot:
 * entry data of `uncopiedFromBytes` or more is left where it is (one of the pieces), the rest is
 * encoded into one buffer cut around it. The appends of one entry to every follower then share
 * its data instead of copying it once per follower.
 */
export function encodeMessagePieces(m: Message, uncopiedFromBytes: number): Uint8Array[] {
  if (m.snapshot !== undefined) throw new TypeError('a message with a snapshot is encoded whole');
  const entries = m.entries;
  let size = messageHeadSize(m);
  for (let i = 0; i < entries.length; i++) {
    const length = entries[i]!.data.length;
    size += ENTRY_HEADER_BYTES + (length < uncopiedFromBytes ? length : 0);
  }
  const w = sized(size);
  writeMessageHead(w, m);
  const placed: Placed[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.data.length < uncopiedFromBytes) {
      writeEntry(w, e);
      continue;
    }
    writeEntryHeader(w, e);
    placed.push({ at: w.length, bytes: e.data });
  }
  return spliceRuns(finish(w, size), placed);
}

/** A format rule broken at the reader's offset (decodeWhole turns it into a CodecError). */
function fail(r: BinaryReader, reason: string): never {
  throw new BinaryDecodeError('invalid-value', r.offset, reason);
}

/** u32 length then bytes, copied (decoded values never alias the input), or `asView` a view of the input. */
function readBytesField(r: BinaryReader, field: string, maxBytes: number, asView = false): Uint8Array {
  const length = r.uint32le();
  if (length > maxBytes) fail(r, `${field} of ${length} bytes exceeds the limit of ${maxBytes}`);
  return asView ? r.rawView(length) : r.raw(length);
}

/** A u32 count that must not exceed `max` nor what the remaining bytes could hold. */
function readCount(r: BinaryReader, field: string, max: number, minItemBytes: number): number {
  const n = r.uint32le();
  if (n > max) fail(r, `${field} count ${n} exceeds the limit of ${max}`);
  if (n * minItemBytes > r.remaining) fail(r, `${field} count ${n} exceeds the remaining input`);
  return n;
}

function readEntry(r: BinaryReader, limits: DecodeLimits, dataAsView = false): Entry {
  const term = r.uint64le();
  const index = r.uint64le();
  const type = r.uint8();
  if (type > 2) fail(r, `unknown entry type ${type}`);
  const data = readBytesField(r, 'entry data', limits.maxDataBytes, dataAsView);
  return { term, index, type: type as EntryType, data };
}

function readIds(r: BinaryReader, field: string, limits: DecodeLimits): NodeId[] {
  const n = readCount(r, field, limits.maxMembers, 8);
  const ids: NodeId[] = new Array<NodeId>(n);
  for (let i = 0; i < n; i++) {
    const id = r.biguint64le();
    if (id === 0n || id > MAX_NODE_ID) fail(r, `${field} holds invalid id ${id}`);
    ids[i] = id;
  }
  return ids;
}

function readConfState(r: BinaryReader, limits: DecodeLimits): ConfState {
  const voters = readIds(r, 'voters', limits);
  const learners = readIds(r, 'learners', limits);
  const votersOutgoing = readIds(r, 'votersOutgoing', limits);
  const learnersNext = readIds(r, 'learnersNext', limits);
  const autoLeave = r.uint8();
  if (autoLeave > 1) fail(r, `autoLeave must be 0 or 1, got ${autoLeave}`);
  return { voters, learners, votersOutgoing, learnersNext, autoLeave: autoLeave === 1 };
}

function readSnapshotMetadata(r: BinaryReader, limits: DecodeLimits): SnapshotMetadata {
  const index = r.uint64le();
  const term = r.uint64le();
  return { index, term, confState: readConfState(r, limits) };
}

/** Reads all of `bytes`; any malformation, the reader's or a format rule's, is a CodecError. */
function decodeWhole<T>(bytes: Uint8Array, what: string, read: (r: BinaryReader) => T): T {
  if (!(bytes instanceof Uint8Array)) throw new CodecError(what, 0, 'input must be a Uint8Array');
  const r = new BinaryReader(bytes);
  try {
    const value = read(r);
    r.expectEnd();
    return value;
  } catch (error) {
    throw asCodecError(error, what);
  }
}

/** A reader's or format rule's BinaryDecodeError as the CodecError of `what`; anything else as is. */
function asCodecError(error: unknown, what: string): unknown {
  if (!(error instanceof BinaryDecodeError)) return error;
  return new CodecError(what, error.offset, error.reason === 'invalid-value' ? error.detail : `${error.reason}: ${error.detail}`);
}

export function decodeEntry(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): Entry {
  return decodeWhole(bytes, 'Entry', (r) => readEntry(r, limits));
}

export function decodeHardState(bytes: Uint8Array): HardState {
  return decodeWhole(bytes, 'HardState', (r) => {
    const term = r.uint64le();
    const vote = r.biguint64le();
    return { term, vote, commit: r.uint64le() };
  });
}

export function decodeConfState(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): ConfState {
  return decodeWhole(bytes, 'ConfState', (r) => readConfState(r, limits));
}

export function decodeSnapshotMetadata(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): SnapshotMetadata {
  return decodeWhole(bytes, 'SnapshotMetadata', (r) => readSnapshotMetadata(r, limits));
}

export function decodeSnapshot(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): Snapshot {
  return decodeWhole(bytes, 'Snapshot', (r) => {
    const metadata = readSnapshotMetadata(r, limits);
    // A view of the input, not a copy: a snapshot holds a whole state (a copy costs seconds).
    return { metadata, data: readBytesField(r, 'snapshot data', limits.maxSnapshotBytes, true) };
  });
}

/** Most bytes encodeSnapshotHead writes for metadata within `limits` (four lists of maxMembers ids). */
export function snapshotHeadMaxBytes(limits: DecodeLimits = DEFAULT_DECODE_LIMITS): number {
  return 16 + 4 * (4 + 8 * limits.maxMembers) + 1 + 4;
}

/**
 * The head of encodeSnapshot's bytes read from `prefix`, their first bytes (any number past the
 * head): the metadata, the head's length and the data's announced length. A prefix shorter than
 * the head, or a data length over maxSnapshotBytes, is a CodecError.
 */
export function decodeSnapshotHead(prefix: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): { metadata: SnapshotMetadata; headBytes: number; dataBytes: number } {
  if (!(prefix instanceof Uint8Array)) throw new CodecError('Snapshot', 0, 'input must be a Uint8Array');
  const r = new BinaryReader(prefix);
  try {
    const metadata = readSnapshotMetadata(r, limits);
    const dataBytes = r.uint32le();
    if (dataBytes > limits.maxSnapshotBytes) fail(r, `snapshot data of ${dataBytes} bytes exceeds the limit of ${limits.maxSnapshotBytes}`);
    return { metadata, headBytes: r.offset, dataBytes };
  } catch (error) {
    throw asCodecError(error, 'Snapshot');
  }
}

/**
 * Decodes a message from the wire; any malformation is a CodecError (never another exception).
 * Decoded values own their bytes, except entry data with `entryDataAsViews`: views of `bytes`
 * then, for a receiver whose input is never reused (it spares a copy of every entry received).
 */
export function decodeMessage(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS, entryDataAsViews = false): Message {
  return decodeWhole(bytes, 'Message', (r) => {
    const version = r.uint8();
    if (version !== MESSAGE_CODEC_VERSION) fail(r, `unsupported codec version ${version}`);
    const type = r.uint8();
    if (!isMessageType(type) || isLocalMessageType(type)) fail(r, `message type ${type} is not a wire message`);
    const to = r.biguint64le();
    const from = r.biguint64le();
    const term = r.uint64le();
    const logTerm = r.uint64le();
    const index = r.uint64le();
    const commit = r.uint64le();
    const rejectHint = r.uint64le();
    const flags = r.uint8();
    if ((flags & ~(FLAG_REJECT | FLAG_SNAPSHOT)) !== 0) fail(r, `unknown flags ${flags}`);
    const context = readBytesField(r, 'context', limits.maxDataBytes);
    const count = readCount(r, 'entries', limits.maxEntries, ENTRY_HEADER_BYTES);
    const entries: Entry[] = new Array<Entry>(count);
    for (let i = 0; i < count; i++) entries[i] = readEntry(r, limits, entryDataAsViews);
    let snapshot: Snapshot | undefined;
    if ((flags & FLAG_SNAPSHOT) !== 0) {
      const metadata = readSnapshotMetadata(r, limits);
      snapshot = { metadata, data: readBytesField(r, 'snapshot data', limits.maxDataBytes) };
    }
    const fields = { to, from, term, logTerm, index, commit, rejectHint, reject: (flags & FLAG_REJECT) !== 0, context, entries, snapshot };
    return message(type as MessageType, fields);
  });
}


/** Version byte of the ConfChange and ConfChangeV2 encodings. */
export const CONF_CHANGE_CODEC_VERSION = 1;

/** Entry data of a one-step ConfChange. */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const size = 2 + 8 + 4 + cc.context.length;
  const w = sized(size);
  w.uint8(CONF_CHANGE_CODEC_VERSION);
  w.uint8(cc.type);
  w.biguint64le(cc.nodeId);
  writeBytesField(w, cc.context);
  return finish(w, size);
}

/** Entry data of a ConfChangeV2. */
export function encodeConfChangeV2(cc: ConfChangeV2): Uint8Array {
  const size = 2 + 4 + 9 * cc.changes.length + 4 + cc.context.length;
  const w = sized(size);
  w.uint8(CONF_CHANGE_CODEC_VERSION);
  w.uint8(cc.transition);
  w.uint32le(cc.changes.length);
  for (const c of cc.changes) {
    w.uint8(c.type);
    w.biguint64le(c.nodeId);
  }
  writeBytesField(w, cc.context);
  return finish(w, size);
}

function readNodeIdOrZero(r: BinaryReader, field: string): bigint {
  const id = r.biguint64le();
  if (id > MAX_NODE_ID) fail(r, `${field} holds invalid id ${id}`);
  return id;
}

export function decodeConfChange(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): ConfChange {
  return decodeWhole(bytes, 'ConfChange', (r) => {
    const version = r.uint8();
    if (version !== CONF_CHANGE_CODEC_VERSION) fail(r, `unsupported codec version ${version}`);
    const type = r.uint8();
    if (!isConfChangeType(type)) fail(r, `unknown change type ${type}`);
    const nodeId = readNodeIdOrZero(r, 'nodeId');
    return { type: type as ConfChangeType, nodeId, context: readBytesField(r, 'context', limits.maxDataBytes) };
  });
}

export function decodeConfChangeV2(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): ConfChangeV2 {
  return decodeWhole(bytes, 'ConfChangeV2', (r) => {
    const version = r.uint8();
    if (version !== CONF_CHANGE_CODEC_VERSION) fail(r, `unsupported codec version ${version}`);
    const transition = r.uint8();
    if (!isConfChangeTransition(transition)) fail(r, `unknown transition ${transition}`);
    const n = readCount(r, 'changes', MAX_CONF_CHANGES, 9);
    const changes: ConfChangeSingle[] = new Array<ConfChangeSingle>(n);
    for (let i = 0; i < n; i++) {
      const type = r.uint8();
      if (!isConfChangeType(type)) fail(r, `unknown change type ${type}`);
      changes[i] = { type: type as ConfChangeType, nodeId: readNodeIdOrZero(r, 'change nodeId') };
    }
    return { transition: transition as ConfChangeTransition, changes, context: readBytesField(r, 'context', limits.maxDataBytes) };
  });
}

/**
 * The membership change carried by a ConfChange or ConfChangeV2 entry, as a ConfChangeV2 (what
 * `RawNode.applyConfChange` takes). Throws CodecError for bad data, TypeError for a normal entry.
 */
export function decodeConfChangeEntry(e: Entry, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): ConfChangeV2 {
  if (e.type === EntryType.ConfChange) return asV2(decodeConfChange(e.data, limits));
  if (e.type === EntryType.ConfChangeV2) return decodeConfChangeV2(e.data, limits);
  throw new TypeError(`entry ${e.index} is not a membership change`);
}
