// Byte layouts of the member list (little-endian, length-prefixed, one encoding per value):
//
//   member record   id u64, flags u8 (bit 0: learner), name, peer address, api address
//                   (each u16 length + UTF-8)
//   member list     u32 count + records, u32 count + removed ids (u64 each)
//   change context  version u8 (=1), request id u64, u32 count + records
//
// and of a member's snapshot data (what raft snapshots, the leader's MsgSnap and backups carry):
//
//   "WRNS", version u8 (=1), cluster id u64, member list, u64 length + the applier's snapshot
//
// Snapshot data written before the member list was replicated is the applier's snapshot alone
// (it starts with "WAPL"); it still loads, with the member list taken from the configuration.
import { MAX_MEMBERS } from '../members';
import { MAX_REMOVED_MEMBERS, MemberList, type MemberRecord } from './member-list';
import { chunksByteLength, joinChunks } from '@ward/shared/binary';

const MAX_TEXT_BYTES = 300;
const CONTEXT_VERSION = 1;
const SNAPSHOT_MAGIC = Uint8Array.of(0x57, 0x52, 0x4e, 0x53); // "WRNS"
const SNAPSHOT_VERSION = 1;
const APPLIER_MAGIC = Uint8Array.of(0x57, 0x41, 0x50, 0x4c); // "WAPL"

/** Bytes that are not a member list, change context or member snapshot; `reason` says why. */
export class MembershipCodecError extends Error {
  readonly code = 'ERR_MEMBERSHIP_CODEC';
  constructor(reason: string) {
    super(reason);
    this.name = 'MembershipCodecError';
  }
}

class Writer {
  private readonly parts: Buffer[] = [];
  u8(v: number): this {
    this.parts.push(Buffer.of(v));
    return this;
  }
  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.parts.push(b);
    return this;
  }
  u64(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(v);
    this.parts.push(b);
    return this;
  }
  text(s: string): this {
    const b = Buffer.from(s, 'utf8');
    if (b.length > MAX_TEXT_BYTES) throw new RangeError(`text of ${b.length} bytes exceeds ${MAX_TEXT_BYTES}`);
    const len = Buffer.alloc(2);
    len.writeUInt16LE(b.length);
    this.parts.push(len, b);
    return this;
  }
  raw(b: Uint8Array): this {
    this.parts.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    return this;
  }
  done(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.parts));
  }
}

class Reader {
  private offset = 0;
  private readonly buf: Buffer;
  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number, what: string): void {
    if (this.offset + n > this.buf.length) throw new MembershipCodecError(`${what} at byte ${this.offset} runs past the end`);
  }
  u8(what: string): number {
    this.need(1, what);
    return this.buf.readUInt8(this.offset++);
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32LE(this.offset);
    this.offset += 4;
    return v;
  }
  u64(what: string): bigint {
    this.need(8, what);
    const v = this.buf.readBigUInt64LE(this.offset);
    this.offset += 8;
    return v;
  }
  text(what: string): string {
    this.need(2, what);
    const len = this.buf.readUInt16LE(this.offset);
    this.offset += 2;
    if (len > MAX_TEXT_BYTES) throw new MembershipCodecError(`${what} of ${len} bytes exceeds ${MAX_TEXT_BYTES}`);
    this.need(len, what);
    const s = this.buf.toString('utf8', this.offset, this.offset + len);
    this.offset += len;
    return s;
  }
  raw(n: number, what: string): Uint8Array {
    return new Uint8Array(this.view(n, what));
  }
  /** `n` bytes as a view of the input (not a copy). */
  view(n: number, what: string): Uint8Array {
    this.need(n, what);
    const b = new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.offset, n);
    this.offset += n;
    return b;
  }
  end(): void {
    if (this.offset !== this.buf.length) throw new MembershipCodecError(`${this.buf.length - this.offset} trailing bytes`);
  }
  get position(): number {
    return this.offset;
  }
}

function writeRecords(w: Writer, records: readonly MemberRecord[]): void {
  w.u32(records.length);
  for (const r of records) w.u64(r.id).u8(r.isLearner ? 1 : 0).text(r.name).text(r.peerAddress).text(r.apiAddress);
}

function readRecords(r: Reader): MemberRecord[] {
  const count = r.u32('member count');
  if (count > MAX_MEMBERS) throw new MembershipCodecError(`${count} members exceeds ${MAX_MEMBERS}`);
  const records: MemberRecord[] = [];
  for (let i = 0; i < count; i++) {
    const id = r.u64('member id');
    if (id === 0n) throw new MembershipCodecError('member id 0');
    const flags = r.u8('member flags');
    if (flags > 1) throw new MembershipCodecError(`unknown member flags ${flags}`);
    records.push({ id, isLearner: flags === 1, name: r.text('member name'), peerAddress: r.text('peer address'), apiAddress: r.text('api address') });
  }
  return records;
}

function writeList(w: Writer, list: MemberList): void {
  writeRecords(w, list.members);
  const removed = list.removed;
  w.u32(removed.length);
  for (const id of removed) w.u64(id);
}

function readList(r: Reader): MemberList {
  const records = readRecords(r);
  const count = r.u32('removed count');
  if (count > MAX_REMOVED_MEMBERS) throw new MembershipCodecError(`${count} removed ids exceeds ${MAX_REMOVED_MEMBERS}`);
  const removed: bigint[] = [];
  for (let i = 0; i < count; i++) removed.push(r.u64('removed id'));
  return MemberList.of(records, removed);
}

/** What a membership-change entry carries besides the change itself. */
export interface ChangeContext {
  /** The proposer's request id (0: none waits). */
  readonly requestId: bigint;
  /** Records of the members the change adds or updates. */
  readonly records: readonly MemberRecord[];
}

export function encodeChangeContext(context: ChangeContext): Uint8Array {
  const w = new Writer().u8(CONTEXT_VERSION).u64(context.requestId);
  writeRecords(w, context.records);
  return w.done();
}

export function decodeChangeContext(bytes: Uint8Array): ChangeContext {
  if (bytes.length === 0) return { requestId: 0n, records: [] };
  const r = new Reader(bytes);
  const version = r.u8('context version');
  if (version !== CONTEXT_VERSION) throw new MembershipCodecError(`unknown change context version ${version}`);
  const requestId = r.u64('request id');
  const records = readRecords(r);
  r.end();
  return { requestId, records };
}

/** A member's snapshot data: the cluster, its member list and the applier's state. */
export interface NodeSnapshot {
  readonly clusterId: bigint;
  readonly members: MemberList;
  readonly applier: Uint8Array;
}

export function encodeNodeSnapshot(snapshot: NodeSnapshot): Uint8Array {
  return joinChunks(encodeNodeSnapshotChunks({ ...snapshot, applier: [snapshot.applier] }));
}

/** The same bytes as chunks, in order: the applier's chunks follow a head written here, uncopied. */
export function encodeNodeSnapshotChunks(snapshot: Omit<NodeSnapshot, 'applier'> & { readonly applier: readonly Uint8Array[] }): Uint8Array[] {
  return [encodeNodeSnapshotHead(snapshot, chunksByteLength(snapshot.applier)), ...snapshot.applier];
}

/** The bytes before the applier's state of `applierBytes` (the head encodeNodeSnapshotChunks puts first). */
export function encodeNodeSnapshotHead(snapshot: Omit<NodeSnapshot, 'applier'>, applierBytes: number): Uint8Array {
  const w = new Writer().raw(SNAPSHOT_MAGIC).u8(SNAPSHOT_VERSION).u64(snapshot.clusterId);
  writeList(w, snapshot.members);
  return w.u64(BigInt(applierBytes)).done();
}

function startsWith(bytes: Uint8Array, magic: Uint8Array): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/** The most bytes a member snapshot's head takes (a full member list of the longest texts). */
export const NODE_SNAPSHOT_HEAD_MAX_BYTES = SNAPSHOT_MAGIC.length + 1 + 8 + 4 + MAX_MEMBERS * (8 + 1 + 3 * (2 + MAX_TEXT_BYTES)) + 4 + MAX_REMOVED_MEMBERS * 8 + 8;

/** What precedes the applier's state in a member's snapshot data. */
export interface NodeSnapshotHead {
  readonly clusterId: bigint | undefined;
  readonly members: MemberList | undefined;
  /** Where the applier's state begins. */
  readonly headBytes: number;
}

/**
 * The head of member snapshot data of `totalBytes` bytes, read from `prefix` (its first bytes,
 * the whole head at least). The applier's bytes alone (the format before this one) give
 * `members: undefined` and no head: the caller supplies the configured list.
 */
export function decodeNodeSnapshotHead(prefix: Uint8Array, totalBytes: number): NodeSnapshotHead {
  if (startsWith(prefix, APPLIER_MAGIC)) return { clusterId: undefined, members: undefined, headBytes: 0 };
  if (!startsWith(prefix, SNAPSHOT_MAGIC)) throw new MembershipCodecError('not a member snapshot (neither WRNS nor WAPL)');
  const r = new Reader(prefix);
  r.raw(SNAPSHOT_MAGIC.length, 'magic');
  const version = r.u8('snapshot version');
  if (version !== SNAPSHOT_VERSION) throw new MembershipCodecError(`unknown member snapshot version ${version} (this build reads ${SNAPSHOT_VERSION})`);
  const clusterId = r.u64('cluster id');
  const members = readList(r);
  const length = r.u64('state length');
  const stateBytes = totalBytes - r.position;
  if (length !== BigInt(stateBytes)) throw new MembershipCodecError(`state length ${length} does not match the ${stateBytes} bytes left`);
  return { clusterId, members, headBytes: r.position };
}

/** Decodes snapshot data whole (see decodeNodeSnapshotHead); the applier's state is a view of it. */
export function decodeNodeSnapshot(bytes: Uint8Array): { clusterId: bigint | undefined; members: MemberList | undefined; applier: Uint8Array } {
  const { clusterId, members, headBytes } = decodeNodeSnapshotHead(bytes, bytes.length);
  // A view, not a copy: the state is decoded from it at once (a copy of a large state costs seconds).
  return { clusterId, members, applier: bytes.subarray(headBytes) };
}

/**
 * Member snapshot data of `totalBytes` bytes pushed in pieces, in order: the head is read once it
 * is in (at most NODE_SNAPSHOT_HEAD_MAX_BYTES are held for it), and the applier's bytes go on to
 * `applier` as they come, never joined. MembershipCodecError for bytes that are no such data.
 * What it keeps of a piece it copies, so the caller may reuse its buffer once `push` returns (if
 * `applier` copies what it keeps too, as the applier's own decoder does).
 */
export class NodeSnapshotDecoder {
  private head: NodeSnapshotHead | undefined;
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private received = 0;

  constructor(
    private readonly totalBytes: number,
    private readonly applier: { push(piece: Uint8Array): void },
  ) {}

  push(piece: Uint8Array): void {
    this.received += piece.length;
    if (this.received > this.totalBytes) throw new MembershipCodecError(`more than the ${this.totalBytes} bytes announced`);
    if (this.head !== undefined) {
      this.applier.push(piece);
      return;
    }
    this.held.push(piece);
    this.heldBytes += piece.length;
    if (this.heldBytes >= Math.min(this.totalBytes, NODE_SNAPSHOT_HEAD_MAX_BYTES)) this.readHead();
    // Kept for a later push: a copy, so the caller may reuse its buffer.
    else this.held[this.held.length - 1] = new Uint8Array(piece);
  }

  /** The head, once every announced byte was pushed (the applier's own decoder finishes after). */
  finish(): NodeSnapshotHead {
    if (this.received !== this.totalBytes) throw new MembershipCodecError(`${this.received} of the ${this.totalBytes} bytes announced`);
    if (this.head === undefined) this.readHead();
    return this.head!;
  }

  private readHead(): void {
    const prefix = joinChunks(this.held);
    this.held = [];
    const head = decodeNodeSnapshotHead(prefix, this.totalBytes);
    this.head = head;
    if (prefix.length > head.headBytes) this.applier.push(prefix.subarray(head.headBytes));
  }
}
