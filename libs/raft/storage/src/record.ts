import { setUint32le, setUint64le } from '@ward/shared/binary';
import { assert } from '@ward/shared/errors';

/**
 * Record types of the write-ahead log (numbers are part of the file format; never reuse one).
 * Payloads are little-endian; u64 fields holding indexes and terms must be safe integers.
 */
export const RecordType = {
  /** Opaque bytes the log was created with (cluster and member identity); in every segment. */
  Metadata: 1,
  /** A log entry: index u64, term u64, entry type u8, data. */
  Entry: 2,
  /** Raft's durable state: term u64, vote u64, commit u64. */
  HardState: 3,
  /** First record of every segment: the running checksum at the end of the previous one. */
  Crc: 4,
  /**
   * A snapshot position: index u64, term u64, flags u8 (bit 0: the log restarts after it; bit 1:
   * a hard state follows), then optionally term u64, vote u64, commit u64.
   */
  Snapshot: 5,
} as const;
export type RecordType = (typeof RecordType)[keyof typeof RecordType];

/** A log entry as the log stores it; `data` is opaque. Structurally a Raft core `Entry`. */
export interface WalEntry {
  readonly index: number;
  readonly term: number;
  /** Entry kind (0..255), opaque to the log: the core's normal / conf-change types. */
  readonly type: number;
  readonly data: Uint8Array;
}

/** Raft's durable state. Structurally a Raft core `HardState` (`vote` is a uint64 member id). */
export interface WalHardState {
  readonly term: number;
  readonly vote: bigint;
  readonly commit: number;
}

/**
 * The log position of a snapshot that was written to disk. `restartsLog` marks a snapshot
 * installed from the leader, which replaces every entry the log held; a snapshot taken locally
 * for compaction keeps the entries after it.
 */
export interface WalSnapshotMarker {
  readonly index: number;
  readonly term: number;
  readonly restartsLog: boolean;
  /**
   * The hard state that goes with an installed snapshot, written in the same record so that a
   * torn write can never keep the restart without the commit index that vouches for it.
   */
  readonly hardState?: WalHardState;
}

/** What callers append. Metadata and checksum records are written by the log itself. */
export type WalRecord =
  | { readonly kind: 'entry'; readonly entry: WalEntry }
  | { readonly kind: 'hardState'; readonly hardState: WalHardState }
  | { readonly kind: 'snapshot'; readonly snapshot: WalSnapshotMarker };

export const ENTRY_PAYLOAD_HEADER_BYTES = 17;
export const HARD_STATE_PAYLOAD_BYTES = 24;
export const SNAPSHOT_PAYLOAD_BYTES = 17;
const FLAG_RESTARTS_LOG = 1;
const FLAG_HARD_STATE = 2;
export const CRC_PAYLOAD_BYTES = 4;

const TWO_POW_32 = 0x1_0000_0000;
const MAX_SAFE_HIGH_WORD = 0x1f_ffff;
const UINT64_MAX = (1n << 64n) - 1n;

/** Writes a safe non-negative integer as u64 LE. */
export function writeU64(view: DataView, offset: number, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, `u64 field must be a safe non-negative integer, got ${value}`);
  view.setUint32(offset, value % TWO_POW_32, true);
  view.setUint32(offset + 4, Math.floor(value / TWO_POW_32), true);
}

/** writeU64 into a byte array, without a DataView (see shared/binary's setUint64le). */
function setU64(target: Uint8Array, offset: number, value: number): void {
  assert(Number.isSafeInteger(value) && value >= 0, `u64 field must be a safe non-negative integer, got ${value}`);
  setUint64le(target, offset, value);
}

/** Reads a u64 LE that must be a safe integer; undefined when it is not. */
export function readU64(view: DataView, offset: number): number | undefined {
  const high = view.getUint32(offset + 4, true);
  if (high > MAX_SAFE_HIGH_WORD) return undefined;
  return high * TWO_POW_32 + view.getUint32(offset, true);
}

/**
 * Type and payload of a caller record, validated. An entry's payload is its header, with its data
 * as `payloadTail` (the frame copies it in after the header). Throws TypeError on a malformed record.
 */
export function encodeRecordPayload(record: WalRecord): { type: RecordType; payload: Uint8Array; payloadTail?: Uint8Array } {
  switch (record.kind) {
    case 'entry':
      return { type: RecordType.Entry, payload: encodeEntryHeader(record.entry), payloadTail: record.entry.data };
    case 'hardState':
      return { type: RecordType.HardState, payload: encodeHardState(record.hardState) };
    case 'snapshot':
      return { type: RecordType.Snapshot, payload: encodeSnapshotMarker(record.snapshot) };
    default:
      throw new TypeError(`unknown WAL record kind ${JSON.stringify((record as { kind: unknown }).kind)}`);
  }
}

function checkPosition(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${name} must be a safe non-negative integer, got ${value}`);
}

/** An entry's payload up to its data (index, term, type); the data follows it in the frame. */
function encodeEntryHeader(entry: WalEntry): Uint8Array {
  checkPosition('entry.index', entry.index);
  checkPosition('entry.term', entry.term);
  if (!Number.isInteger(entry.type) || entry.type < 0 || entry.type > 255) throw new TypeError(`entry.type must be in [0, 255], got ${entry.type}`);
  if (!(entry.data instanceof Uint8Array)) throw new TypeError('entry.data must be a Uint8Array');
  const payload = new Uint8Array(ENTRY_PAYLOAD_HEADER_BYTES);
  setU64(payload, 0, entry.index);
  setU64(payload, 8, entry.term);
  payload[16] = entry.type;
  return payload;
}

function encodeHardState(hardState: WalHardState): Uint8Array {
  checkPosition('hardState.term', hardState.term);
  checkPosition('hardState.commit', hardState.commit);
  if (typeof hardState.vote !== 'bigint' || hardState.vote < 0n || hardState.vote > UINT64_MAX) {
    throw new TypeError(`hardState.vote must be a uint64 bigint, got ${String(hardState.vote)}`);
  }
  const payload = new Uint8Array(HARD_STATE_PAYLOAD_BYTES);
  setU64(payload, 0, hardState.term);
  setUint32le(payload, 8, Number(hardState.vote & 0xffff_ffffn));
  setUint32le(payload, 12, Number(hardState.vote >> 32n));
  setU64(payload, 16, hardState.commit);
  return payload;
}

function encodeSnapshotMarker(marker: WalSnapshotMarker): Uint8Array {
  checkPosition('snapshot.index', marker.index);
  checkPosition('snapshot.term', marker.term);
  const hardState = marker.hardState === undefined ? undefined : encodeHardState(marker.hardState);
  const payload = new Uint8Array(SNAPSHOT_PAYLOAD_BYTES + (hardState?.length ?? 0));
  setU64(payload, 0, marker.index);
  setU64(payload, 8, marker.term);
  payload[16] = (marker.restartsLog ? FLAG_RESTARTS_LOG : 0) | (hardState === undefined ? 0 : FLAG_HARD_STATE);
  if (hardState !== undefined) payload.set(hardState, SNAPSHOT_PAYLOAD_BYTES);
  return payload;
}

export function encodeCrcPayload(crc: number): Uint8Array {
  const payload = new Uint8Array(CRC_PAYLOAD_BYTES);
  setUint32le(payload, 0, crc >>> 0);
  return payload;
}

/** A decoded payload, or the reason it is malformed (the caller names file and offset). */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

function viewOf(payload: Uint8Array): DataView {
  return new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
}

/**
 * Decodes an entry payload. `copy`: `data` gets bytes of its own, so the segment buffer can be
 * released; otherwise it is a view of `payload` (keeping that buffer alive as long as the entry).
 */
export function decodeEntry(payload: Uint8Array, copy = true): Decoded<WalEntry> {
  if (payload.length < ENTRY_PAYLOAD_HEADER_BYTES) return { ok: false, reason: `entry payload of ${payload.length} bytes is too short` };
  const view = viewOf(payload);
  const index = readU64(view, 0);
  const term = readU64(view, 8);
  if (index === undefined || term === undefined) return { ok: false, reason: 'entry index or term is not a safe integer' };
  const data = copy ? payload.slice(ENTRY_PAYLOAD_HEADER_BYTES) : payload.subarray(ENTRY_PAYLOAD_HEADER_BYTES);
  return { ok: true, value: { index, term, type: view.getUint8(16), data } };
}

export function decodeHardState(payload: Uint8Array): Decoded<WalHardState> {
  if (payload.length !== HARD_STATE_PAYLOAD_BYTES) return { ok: false, reason: `hard state payload has ${payload.length} bytes, expected ${HARD_STATE_PAYLOAD_BYTES}` };
  const view = viewOf(payload);
  const term = readU64(view, 0);
  const commit = readU64(view, 16);
  if (term === undefined || commit === undefined) return { ok: false, reason: 'hard state term or commit is not a safe integer' };
  return { ok: true, value: { term, vote: view.getBigUint64(8, true), commit } };
}

export function decodeSnapshotMarker(payload: Uint8Array): Decoded<WalSnapshotMarker> {
  if (payload.length < SNAPSHOT_PAYLOAD_BYTES) return { ok: false, reason: `snapshot marker payload of ${payload.length} bytes is too short` };
  const view = viewOf(payload);
  const index = readU64(view, 0);
  const term = readU64(view, 8);
  const flags = view.getUint8(16);
  if (index === undefined || term === undefined) return { ok: false, reason: 'snapshot marker index or term is not a safe integer' };
  if ((flags & ~(FLAG_RESTARTS_LOG | FLAG_HARD_STATE)) !== 0) return { ok: false, reason: `snapshot marker has unknown flags ${flags}` };
  const restartsLog = (flags & FLAG_RESTARTS_LOG) !== 0;
  if ((flags & FLAG_HARD_STATE) === 0) {
    if (payload.length !== SNAPSHOT_PAYLOAD_BYTES) return { ok: false, reason: 'snapshot marker has trailing bytes' };
    return { ok: true, value: { index, term, restartsLog } };
  }
  if (payload.length !== SNAPSHOT_PAYLOAD_BYTES + HARD_STATE_PAYLOAD_BYTES) return { ok: false, reason: 'snapshot marker hard state has the wrong size' };
  const hardState = decodeHardState(payload.subarray(SNAPSHOT_PAYLOAD_BYTES));
  if (!hardState.ok) return hardState;
  return { ok: true, value: { index, term, restartsLog, hardState: hardState.value } };
}

export function decodeCrcPayload(payload: Uint8Array): Decoded<number> {
  if (payload.length !== CRC_PAYLOAD_BYTES) return { ok: false, reason: `checksum record payload has ${payload.length} bytes, expected ${CRC_PAYLOAD_BYTES}` };
  return { ok: true, value: viewOf(payload).getUint32(0, true) };
}
