import {
  EntryType,
  MemoryStorage,
  SnapshotOutOfDateError,
  decodeSnapshotHead,
  encodeSnapshotChunks,
  encodeSnapshotHead,
  isEmptySnapshot,
  type ConfState,
  type DecodeLimits,
  type Entry,
  type HardState,
  type Index,
  type Ready,
  type Snapshot,
  type SnapshotMetadata,
  snapshotHeadMaxBytes,
} from '@ward/raft/core';
import { assert } from '@ward/shared/errors';
import { chunksByteLength, joinChunks } from '@ward/shared/binary';
import { SnapshotCorruptError, SnapshotTooLargeError, StateUnrecoverableError } from './errors';
import { RAFT_STORAGE_DEFAULTS, RaftStorage, chunksOf, type BootReport, type RaftStorageOptions, type RecoveredState } from './raft-storage';
import type { WalEntry, WalRecord } from './record';
import type { SnapshotReceipt, VerifiedSnapshot } from './snapshot-store';

export interface RaftPersistenceOptions extends RaftStorageOptions {
  /**
   * Membership of a brand-new cluster, used while no snapshot exists (the core's MemoryStorage
   * starts from it). Pass the same value at every boot of a member of that cluster.
   */
  readonly bootstrapConfState?: ConfState;
  /** Limits for decoding the snapshot file's content. Default: the core's. */
  readonly decodeLimits?: DecodeLimits;
  /**
   * Whether the core's MemoryStorage keeps the snapshot's data (default true). With false it keeps
   * the snapshot's metadata only and the data stays in its file, from which `snapshotData` streams
   * it to a follower that needs it: a large state is not held in memory twice (once as the state
   * machine, once as the snapshot's bytes), and a local snapshot is never joined into one buffer.
   */
  readonly snapshotDataInMemory?: boolean;
}

/** A snapshot's state-machine data as a follower is sent it: its size and its bytes in order. */
export interface SnapshotDataStream {
  readonly totalBytes: number;
  readonly data: Uint8Array | AsyncIterable<Uint8Array>;
  /**
   * True when `data` is read from the snapshot's file: its iteration throws before it ends unless
   * the file's CRC-32C of the whole data matched, so a reader need not check a checksum of its own.
   */
  readonly checksummed?: boolean;
}

const NO_DATA = new Uint8Array(0);

/** A member rebuilt from disk. */
export interface BootedRaft {
  readonly persistence: RaftPersistence;
  /** The core's Storage, holding the snapshot, the hard state and the log after the snapshot. */
  readonly storage: MemoryStorage;
  /**
   * The snapshot the state machine must be restored from before applying entries (if any). Its
   * data is here with snapshotDataInMemory; otherwise it is empty and `persistence.snapshotData`
   * streams it from the file.
   */
  readonly snapshot: Snapshot | undefined;
  /** The length of that snapshot's state-machine data (0 without one). */
  readonly snapshotBytes: number;
  readonly hardState: HardState | undefined;
  readonly report: BootReport;
}

const ENTRY_TYPES: ReadonlySet<number> = new Set(Object.values(EntryType));

/**
 * The Raft core's durable side: persists each Ready (snapshot file, then entries and hard state in
 * one write + one fdatasync), keeps the core's MemoryStorage in step with what is durable, takes
 * local snapshots with log compaction, and rebuilds everything at boot.
 */
export class RaftPersistence {
  /** The local snapshot being written, by index: its data is read from the file once written. */
  private readonly writing = new Map<Index, Promise<unknown>>();

  private constructor(
    readonly disk: RaftStorage,
    readonly storage: MemoryStorage,
    private readonly catchUpEntries: number,
    private readonly catchUpBytes: number,
    private readonly dataInMemory: boolean,
  ) {}

  /**
   * Boot: newest usable snapshot + the log after it, into a fresh MemoryStorage. Throws
   * WalCorruptError, SnapshotCorruptError or StateUnrecoverableError when that is impossible.
   */
  static async open(options: RaftPersistenceOptions): Promise<BootedRaft> {
    const { storage: disk, state, report } = await RaftStorage.open(options);
    try {
      const dataInMemory = options.snapshotDataInMemory ?? true;
      const { memory, snapshot, snapshotBytes } = await rebuild(disk, state, options, dataInMemory);
      const catchUpBytes = options.catchUpBytes ?? RAFT_STORAGE_DEFAULTS.catchUpBytes;
      if (!Number.isSafeInteger(catchUpBytes) || catchUpBytes < 0) throw new TypeError(`catchUpBytes must be a non-negative integer, got ${catchUpBytes}`);
      const persistence = new RaftPersistence(disk, memory, options.catchUpEntries ?? RAFT_STORAGE_DEFAULTS.catchUpEntries, catchUpBytes, dataInMemory);
      return { persistence, storage: memory, snapshot, snapshotBytes, hardState: state.hardState, report };
    } catch (error) {
      await disk.close();
      throw error;
    }
  }

  /**
   * Step 1 of the Ready contract: makes the Ready's snapshot, entries and hard state durable
   * (fdatasync when `mustSync` or a snapshot is present), then records them in the MemoryStorage.
   * Resolve before a follower sends the Ready's messages.
   */
  async persist(ready: Ready): Promise<void> {
    const records: WalRecord[] = [];
    const snapshot = ready.snapshot !== undefined && !isEmptySnapshot(ready.snapshot) ? ready.snapshot : undefined;
    if (snapshot !== undefined) {
      const { index, term } = snapshot.metadata;
      const hardState = ready.hardState;
      assert(hardState !== undefined && hardState.commit >= index, `an installed snapshot at ${index} must come with a hard state committing it`);
      // Its data is on disk already when it was received through receiveSnapshot (the message the
      // core took carried none); otherwise it is written from the message now.
      if (this.disk.snapshots.hasReceived({ index, term })) {
        await this.disk.snapshots.adopt({ index, term });
      } else {
        assert(this.dataInMemory || snapshot.data.length > 0, `the installed snapshot at ${index} was not received, and its message carries no data`);
        await this.disk.snapshots.save({ index, term }, chunksOf(encodeSnapshotChunks(snapshot)));
      }
      records.push({ kind: 'snapshot', snapshot: { index, term, restartsLog: true, hardState } });
    }
    for (const entry of ready.entries) records.push({ kind: 'entry', entry });
    if (ready.hardState !== undefined) records.push({ kind: 'hardState', hardState: ready.hardState });
    await this.disk.wal.append(records, { sync: ready.mustSync || snapshot !== undefined });
    if (snapshot !== undefined) {
      this.storage.applySnapshot(this.dataInMemory ? snapshot : withoutData(snapshot));
      await this.disk.compact(snapshot.metadata);
    }
    if (ready.hardState !== undefined) this.storage.setHardState(ready.hardState);
    if (ready.entries.length > 0) this.storage.append(ready.entries);
  }

  /**
   * Takes the data of a snapshot the leader is sending, `dataBytes` long, as it arrives, into a file
   * (never whole in memory; snapshotDataInMemory must be off). Once the receipt is finished, a
   * Ready installing that snapshot with no data in it (the leader's message, its data left out)
   * makes the file the snapshot's; `snapshotData` then reads the data from it.
   */
  async receiveSnapshot(metadata: SnapshotMetadata, dataBytes: number): Promise<SnapshotReceipt> {
    assert(!this.dataInMemory, 'receiveSnapshot: the snapshot data is kept in memory; pass it in the message');
    assert(Number.isSafeInteger(dataBytes) && dataBytes >= 0, 'receiveSnapshot: dataBytes must be a non-negative integer');
    const { index, term } = metadata;
    const receipt = await this.disk.snapshots.receive({ index, term });
    let written = 0;
    const refuse = async (reason: string): Promise<never> => {
      await receipt.abort();
      throw new Error(`snapshot at ${index} from the leader: ${reason}`);
    };
    try {
      await receipt.write(encodeSnapshotHead(metadata, dataBytes));
    } catch (error) {
      await receipt.abort();
      throw error;
    }
    return {
      write: async (chunk) => {
        written += chunk.length;
        if (written > dataBytes) await refuse(`more than the ${dataBytes} bytes announced`);
        await receipt.write(chunk);
      },
      finish: async () => {
        if (written !== dataBytes) await refuse(`${written} bytes, not the ${dataBytes} announced`);
        await receipt.finish();
      },
      abort: () => receipt.abort(),
    };
  }

  /**
   * Records a snapshot of the state machine taken at applied index `index`, its data whole or as
   * chunks in order: the file, its marker (synced), then compaction of the log and the
   * MemoryStorage, keeping behind the snapshot, for slow followers, at most `catchUpEntries`
   * entries and at most `catchUpBytes` of entry data. The core learns of the snapshot at once.
   */
  async createSnapshot(index: Index, confState: ConfState | undefined, data: Uint8Array | readonly Uint8Array[]): Promise<Snapshot> {
    const chunks = data instanceof Uint8Array ? [data] : data;
    const snapshot = this.storage.createSnapshot(index, confState, this.dataInMemory ? joinChunks(chunks) : NO_DATA);
    const keepFrom = this.catchUpStart(index);
    const fileHead = encodeSnapshotHead(snapshot.metadata, chunksByteLength(chunks));
    const written = this.disk.saveSnapshot({ index, term: snapshot.metadata.term, data: [fileHead, ...chunks] }, { keepFrom });
    this.writing.set(index, written);
    try {
      await written;
    } finally {
      this.writing.delete(index);
    }
    this.compactMemoryBefore(keepFrom);
    return snapshot;
  }

  /** Drops the MemoryStorage's entries before `keepFrom` (those the log no longer keeps). */
  private compactMemoryBefore(keepFrom: Index): void {
    const compactIndex = keepFrom - 1;
    if (compactIndex >= this.storage.firstIndex()) this.storage.compact(compactIndex);
  }

  /**
   * Records a local snapshot at applied index `index` whose data is made while it is written: a
   * streamed snapshot task, `dataBytes` long, its chunks coming from `pieces` in order (each is
   * written before the next is asked for, so its buffer may be used again). Unlike createSnapshot,
   * the file comes first (under a temporary name until it is whole and synced); only then does the
   * core learn of the snapshot, the WAL get its marker and the logs their compaction. An error from
   * `pieces` (the caller giving the snapshot up) leaves nothing behind. Returns undefined, having
   * recorded nothing, when the core already has a snapshot at or past `index`, or has one by the
   * time the file is written (a snapshot from the leader was installed meanwhile: the file,
   * without its marker in the log, is not trusted at boot and is purged). A snapshot larger than
   * the store takes fails with SnapshotTooLargeError before anything is written or consumed.
   */
  async createSnapshotStreamed(index: Index, confState: ConfState | undefined, dataBytes: number, pieces: AsyncIterable<Uint8Array>): Promise<Snapshot | undefined> {
    assert(Number.isSafeInteger(dataBytes) && dataBytes >= 0, 'createSnapshotStreamed: dataBytes must be a non-negative integer');
    if (index <= this.storage.snapshot().metadata.index) return undefined;
    const term = this.storage.term(index);
    const metadata = { index, term, confState: confState ?? this.storage.snapshot().metadata.confState };
    const head = encodeSnapshotHead(metadata, dataBytes);
    const maxBytes = this.disk.snapshots.maxSnapshotBytes;
    if (head.length + dataBytes > maxBytes) throw new SnapshotTooLargeError(head.length + dataBytes, maxBytes);
    const kept: Uint8Array[] | undefined = this.dataInMemory ? [] : undefined;
    async function* file(): AsyncGenerator<Uint8Array> {
      yield head;
      let written = 0;
      for await (const piece of pieces) {
        written += piece.length;
        if (written > dataBytes) throw new Error(`local snapshot at ${index}: more than the ${dataBytes} bytes announced`);
        kept?.push(piece.slice());
        yield piece;
      }
      if (written !== dataBytes) throw new Error(`local snapshot at ${index}: ${written} bytes, not the ${dataBytes} announced`);
    }
    await this.disk.snapshots.save({ index, term }, file());
    let snapshot: Snapshot;
    try {
      snapshot = this.storage.createSnapshot(index, confState, kept === undefined ? NO_DATA : joinChunks(kept));
    } catch (error) {
      if (error instanceof SnapshotOutOfDateError) return undefined;
      throw error;
    }
    const keepFrom = this.catchUpStart(index);
    await this.disk.recordSnapshot({ index, term }, { keepFrom });
    this.compactMemoryBefore(keepFrom);
    return snapshot;
  }

  /**
   * The state-machine data of `snapshot` (the core's, or one installed from the leader), to send
   * to a follower: from memory when the MemoryStorage keeps it, else streamed from its file (once
   * a local snapshot still being written is on disk). Fails when the file is gone or unusable.
   */
  async snapshotData(snapshot: Snapshot): Promise<SnapshotDataStream> {
    if (this.dataInMemory) return { totalBytes: snapshot.data.length, data: snapshot.data };
    const { index, term } = snapshot.metadata;
    await this.writing.get(index);
    const skipBytes = encodeSnapshotHead(snapshot.metadata, 0).length;
    const { totalBytes, pieces } = await this.disk.snapshots.readData({ index, term }, skipBytes);
    return { totalBytes, data: pieces, checksummed: true };
  }

  /**
   * First index of the catch-up tail behind a snapshot at `index`: at most `catchUpEntries`
   * entries, and no more entries than fit, together, in `catchUpBytes` of data.
   */
  private catchUpStart(index: Index): Index {
    const first = Math.max(this.storage.firstIndex(), index - this.catchUpEntries + 1);
    if (first > index) return index + 1;
    const tail = this.storage.entries(first, index + 1, Number.MAX_SAFE_INTEGER);
    let bytes = 0;
    for (let i = tail.length - 1; i >= 0; i--) {
      bytes += tail[i]!.data.length;
      if (bytes > this.catchUpBytes) return tail[i]!.index + 1;
    }
    return first;
  }

  close(): Promise<void> {
    return this.disk.close();
  }
}

/** The snapshot with its metadata only (what the MemoryStorage keeps when the data stays on disk). */
function withoutData(snapshot: Snapshot): Snapshot {
  return { metadata: snapshot.metadata, data: NO_DATA };
}

async function rebuild(
  disk: RaftStorage,
  state: RecoveredState,
  options: RaftPersistenceOptions,
  dataInMemory: boolean,
): Promise<{ memory: MemoryStorage; snapshot: Snapshot | undefined; snapshotBytes: number }> {
  const memory = new MemoryStorage(options.bootstrapConfState);
  let snapshot: Snapshot | undefined;
  let snapshotBytes = 0;
  if (state.snapshot !== undefined) {
    const { metadata, headBytes, dataBytes } = await readSnapshotHead(disk, state.snapshot, options.decodeLimits);
    snapshotBytes = dataBytes;
    let data: Uint8Array = NO_DATA;
    if (dataInMemory) data = (await disk.snapshots.load(state.snapshot, headBytes)).data;
    snapshot = { metadata, data };
    memory.applySnapshot(snapshot);
  }
  if (state.hardState !== undefined) memory.setHardState(state.hardState);
  memory.append(state.entries.map(toEntry));
  const commit = state.hardState?.commit ?? 0;
  if (commit > memory.lastIndex()) {
    throw new StateUnrecoverableError(`the hard state commits ${commit}, but the log ends at ${memory.lastIndex()}`);
  }
  return { memory, snapshot, snapshotBytes };
}

/**
 * The metadata of a verified snapshot file, from the head of its content (the data after it is
 * read only when asked for); SnapshotCorruptError when the head does not decode, names another
 * index or term, or announces other than the rest of the file.
 */
async function readSnapshotHead(disk: RaftStorage, position: VerifiedSnapshot, limits: DecodeLimits | undefined): Promise<{ metadata: SnapshotMetadata; headBytes: number; dataBytes: number }> {
  const file = `index ${position.index} term ${position.term}`;
  const { pieces } = await disk.snapshots.readData(position, 0, snapshotHeadMaxBytes(limits));
  let prefix: Uint8Array = NO_DATA;
  for await (const piece of pieces) {
    prefix = piece;
    break;
  }
  let head: ReturnType<typeof decodeSnapshotHead>;
  try {
    head = decodeSnapshotHead(prefix, limits);
  } catch (error) {
    throw new SnapshotCorruptError(file, `content does not decode: ${(error as Error).message}`);
  }
  if (head.metadata.index !== position.index || head.metadata.term !== position.term) throw new SnapshotCorruptError(file, 'content names another index or term');
  if (head.headBytes + head.dataBytes !== position.dataBytes) {
    throw new SnapshotCorruptError(file, `content announces ${head.dataBytes} data bytes after a ${head.headBytes}-byte head, in ${position.dataBytes} bytes`);
  }
  return head;
}

function toEntry(entry: WalEntry): Entry {
  if (!ENTRY_TYPES.has(entry.type)) throw new StateUnrecoverableError(`entry ${entry.index} has unknown type ${entry.type}`);
  return entry as Entry;
}

/**
 * WAL metadata identifying a member's log: a format tag, the cluster id and the member id. A log
 * created for one member refuses to open for another.
 */
export function memberWalMetadata(clusterId: bigint, memberId: bigint): Uint8Array {
  const tag = new TextEncoder().encode('ward-raft-wal/1');
  const bytes = new Uint8Array(tag.length + 16);
  bytes.set(tag);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(tag.length, clusterId, true);
  view.setBigUint64(tag.length + 8, memberId, true);
  return bytes;
}
