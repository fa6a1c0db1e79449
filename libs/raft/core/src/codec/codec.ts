import { CodecError } from '../errors';
import type { NodeId } from '../ids';
import { MAX_NODE_ID } from '../ids';
import type { Message, MessageType } from '../message';
import { isLocalMessageType, isMessageType, message } from '../message';
import type { ConfChange, ConfChangeSingle, ConfChangeTransition, ConfChangeType, ConfChangeV2 } from '../confchange/conf-change';
import { MAX_CONF_CHANGES, asV2, isConfChangeTransition, isConfChangeType } from '../confchange/conf-change';
import type { ConfState, Entry, HardState, Snapshot, SnapshotMetadata } from '../types';
import { ENTRY_HEADER_BYTES, EntryType } from '../types';
import { ByteReader } from './byte-reader';
import { ByteWriter } from './byte-writer';

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
  /** Largest entry data, context or snapshot data. Default 64 MiB. */
  readonly maxDataBytes: number;
  /** Most entries in one message. Default 1,000,000. */
  readonly maxEntries: number;
  /** Most ids in one ConfState list. Default 10,000. */
  readonly maxMembers: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = Object.freeze({
  maxDataBytes: 64 * 1024 * 1024,
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

function writeEntry(w: ByteWriter, e: Entry): void {
  w.u64(e.term);
  w.u64(e.index);
  w.u8(e.type);
  w.bytesField(e.data);
}

function writeIds(w: ByteWriter, ids: readonly NodeId[]): void {
  w.u32(ids.length);
  for (const id of ids) w.big64(id);
}

function writeConfState(w: ByteWriter, cs: ConfState): void {
  writeIds(w, cs.voters);
  writeIds(w, cs.learners);
  writeIds(w, cs.votersOutgoing);
  writeIds(w, cs.learnersNext);
  w.u8(cs.autoLeave ? 1 : 0);
}

function writeSnapshotMetadata(w: ByteWriter, m: SnapshotMetadata): void {
  w.u64(m.index);
  w.u64(m.term);
  writeConfState(w, m.confState);
}

export function encodeEntry(e: Entry): Uint8Array {
  const w = new ByteWriter(ENTRY_HEADER_BYTES + e.data.length);
  writeEntry(w, e);
  return w.finish();
}

export function encodeHardState(hs: HardState): Uint8Array {
  const w = new ByteWriter(HARD_STATE_BYTES);
  w.u64(hs.term);
  w.big64(hs.vote);
  w.u64(hs.commit);
  return w.finish();
}

export function encodeConfState(cs: ConfState): Uint8Array {
  const w = new ByteWriter(confStateSize(cs));
  writeConfState(w, cs);
  return w.finish();
}

export function encodeSnapshotMetadata(m: SnapshotMetadata): Uint8Array {
  const w = new ByteWriter(16 + confStateSize(m.confState));
  writeSnapshotMetadata(w, m);
  return w.finish();
}

export function encodeSnapshot(s: Snapshot): Uint8Array {
  const w = new ByteWriter(snapshotSize(s));
  writeSnapshotMetadata(w, s.metadata);
  w.bytesField(s.data);
  return w.finish();
}

/** Exact encoded size of a message. */
export function messageSizeBytes(m: Message): number {
  let size = MESSAGE_HEADER_BYTES + 4 + m.context.length + 4;
  for (const e of m.entries) size += ENTRY_HEADER_BYTES + e.data.length;
  if (m.snapshot !== undefined) size += snapshotSize(m.snapshot);
  return size;
}

/** Encodes a message for the wire. Throws TypeError for a local-only kind. */
export function encodeMessage(m: Message): Uint8Array {
  if (isLocalMessageType(m.type)) throw new TypeError(`message type ${m.type} is local and is never encoded`);
  const w = new ByteWriter(messageSizeBytes(m));
  w.u8(MESSAGE_CODEC_VERSION);
  w.u8(m.type);
  w.big64(m.to);
  w.big64(m.from);
  w.u64(m.term);
  w.u64(m.logTerm);
  w.u64(m.index);
  w.u64(m.commit);
  w.u64(m.rejectHint);
  w.u8((m.reject ? FLAG_REJECT : 0) | (m.snapshot !== undefined ? FLAG_SNAPSHOT : 0));
  w.bytesField(m.context);
  w.u32(m.entries.length);
  for (const e of m.entries) writeEntry(w, e);
  if (m.snapshot !== undefined) {
    writeSnapshotMetadata(w, m.snapshot.metadata);
    w.bytesField(m.snapshot.data);
  }
  return w.finish();
}

function readEntry(r: ByteReader, limits: DecodeLimits): Entry {
  const term = r.u64('entry term');
  const index = r.u64('entry index');
  const type = r.u8('entry type');
  if (type > 2) r.fail(`unknown entry type ${type}`);
  const data = r.bytesField('entry data', limits.maxDataBytes);
  return { term, index, type: type as EntryType, data };
}

function readIds(r: ByteReader, field: string, limits: DecodeLimits): NodeId[] {
  const n = r.count(field, limits.maxMembers, 8);
  const ids: NodeId[] = new Array<NodeId>(n);
  for (let i = 0; i < n; i++) {
    const id = r.big64(field);
    if (id === 0n || id > MAX_NODE_ID) r.fail(`${field} holds invalid id ${id}`);
    ids[i] = id;
  }
  return ids;
}

function readConfState(r: ByteReader, limits: DecodeLimits): ConfState {
  const voters = readIds(r, 'voters', limits);
  const learners = readIds(r, 'learners', limits);
  const votersOutgoing = readIds(r, 'votersOutgoing', limits);
  const learnersNext = readIds(r, 'learnersNext', limits);
  const autoLeave = r.u8('autoLeave');
  if (autoLeave > 1) r.fail(`autoLeave must be 0 or 1, got ${autoLeave}`);
  return { voters, learners, votersOutgoing, learnersNext, autoLeave: autoLeave === 1 };
}

function readSnapshotMetadata(r: ByteReader, limits: DecodeLimits): SnapshotMetadata {
  const index = r.u64('snapshot index');
  const term = r.u64('snapshot term');
  return { index, term, confState: readConfState(r, limits) };
}

function decodeWhole<T>(bytes: Uint8Array, what: string, read: (r: ByteReader) => T): T {
  if (!(bytes instanceof Uint8Array)) throw new CodecError(what, 0, 'input must be a Uint8Array');
  const r = new ByteReader(bytes, what);
  const value = read(r);
  r.end();
  return value;
}

export function decodeEntry(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): Entry {
  return decodeWhole(bytes, 'Entry', (r) => readEntry(r, limits));
}

export function decodeHardState(bytes: Uint8Array): HardState {
  return decodeWhole(bytes, 'HardState', (r) => {
    const term = r.u64('term');
    const vote = r.big64('vote');
    return { term, vote, commit: r.u64('commit') };
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
    return { metadata, data: r.bytesField('snapshot data', limits.maxDataBytes) };
  });
}

/** Decodes a message from the wire; any malformation is a CodecError (never another exception). */
export function decodeMessage(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): Message {
  return decodeWhole(bytes, 'Message', (r) => {
    const version = r.u8('version');
    if (version !== MESSAGE_CODEC_VERSION) r.fail(`unsupported codec version ${version}`);
    const type = r.u8('type');
    if (!isMessageType(type) || isLocalMessageType(type)) r.fail(`message type ${type} is not a wire message`);
    const to = r.big64('to');
    const from = r.big64('from');
    const term = r.u64('term');
    const logTerm = r.u64('logTerm');
    const index = r.u64('index');
    const commit = r.u64('commit');
    const rejectHint = r.u64('rejectHint');
    const flags = r.u8('flags');
    if ((flags & ~(FLAG_REJECT | FLAG_SNAPSHOT)) !== 0) r.fail(`unknown flags ${flags}`);
    const context = r.bytesField('context', limits.maxDataBytes);
    const count = r.count('entries', limits.maxEntries, ENTRY_HEADER_BYTES);
    const entries: Entry[] = new Array<Entry>(count);
    for (let i = 0; i < count; i++) entries[i] = readEntry(r, limits);
    let snapshot: Snapshot | undefined;
    if ((flags & FLAG_SNAPSHOT) !== 0) {
      const metadata = readSnapshotMetadata(r, limits);
      snapshot = { metadata, data: r.bytesField('snapshot data', limits.maxDataBytes) };
    }
    const fields = { to, from, term, logTerm, index, commit, rejectHint, reject: (flags & FLAG_REJECT) !== 0, context, entries, snapshot };
    return message(type as MessageType, fields);
  });
}


/** Version byte of the ConfChange and ConfChangeV2 encodings. */
export const CONF_CHANGE_CODEC_VERSION = 1;

/** Entry data of a one-step ConfChange. */
export function encodeConfChange(cc: ConfChange): Uint8Array {
  const w = new ByteWriter(2 + 8 + 4 + cc.context.length);
  w.u8(CONF_CHANGE_CODEC_VERSION);
  w.u8(cc.type);
  w.big64(cc.nodeId);
  w.bytesField(cc.context);
  return w.finish();
}

/** Entry data of a ConfChangeV2. */
export function encodeConfChangeV2(cc: ConfChangeV2): Uint8Array {
  const w = new ByteWriter(2 + 4 + 9 * cc.changes.length + 4 + cc.context.length);
  w.u8(CONF_CHANGE_CODEC_VERSION);
  w.u8(cc.transition);
  w.u32(cc.changes.length);
  for (const c of cc.changes) {
    w.u8(c.type);
    w.big64(c.nodeId);
  }
  w.bytesField(cc.context);
  return w.finish();
}

function readNodeIdOrZero(r: ByteReader, field: string): bigint {
  const id = r.big64(field);
  if (id > MAX_NODE_ID) r.fail(`${field} holds invalid id ${id}`);
  return id;
}

export function decodeConfChange(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): ConfChange {
  return decodeWhole(bytes, 'ConfChange', (r) => {
    const version = r.u8('version');
    if (version !== CONF_CHANGE_CODEC_VERSION) r.fail(`unsupported codec version ${version}`);
    const type = r.u8('type');
    if (!isConfChangeType(type)) r.fail(`unknown change type ${type}`);
    const nodeId = readNodeIdOrZero(r, 'nodeId');
    return { type: type as ConfChangeType, nodeId, context: r.bytesField('context', limits.maxDataBytes) };
  });
}

export function decodeConfChangeV2(bytes: Uint8Array, limits: DecodeLimits = DEFAULT_DECODE_LIMITS): ConfChangeV2 {
  return decodeWhole(bytes, 'ConfChangeV2', (r) => {
    const version = r.u8('version');
    if (version !== CONF_CHANGE_CODEC_VERSION) r.fail(`unsupported codec version ${version}`);
    const transition = r.u8('transition');
    if (!isConfChangeTransition(transition)) r.fail(`unknown transition ${transition}`);
    const n = r.count('changes', MAX_CONF_CHANGES, 9);
    const changes: ConfChangeSingle[] = new Array<ConfChangeSingle>(n);
    for (let i = 0; i < n; i++) {
      const type = r.u8('change type');
      if (!isConfChangeType(type)) r.fail(`unknown change type ${type}`);
      changes[i] = { type: type as ConfChangeType, nodeId: readNodeIdOrZero(r, 'change nodeId') };
    }
    return { transition: transition as ConfChangeTransition, changes, context: r.bytesField('context', limits.maxDataBytes) };
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
