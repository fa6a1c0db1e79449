import { mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { joinChunks } from '@ward/shared/binary';
import { crc32c } from '@ward/shared/checksum';
import { MAX_SNAPSHOT_BYTES } from '@ward/raft/core';
import { SnapshotCorruptError, SnapshotTooLargeError } from './errors';
import { fsyncDirectory, fsyncFile, writeFully } from './fs-io';
import {
  SNAPSHOT_HEADER_BYTES,
  decodeSnapshotHeader,
  encodeSnapshotHeader,
  snapshotChecksumMatches,
  formatSnapshotName,
  parseSnapshotName,
  type SnapshotPosition,
} from './snapshot-file';

export interface SnapshotStoreOptions {
  /** Directory of the snapshot files; created when missing. */
  readonly dir: string;
  /** Largest snapshot data written or read. Default MAX_SNAPSHOT_BYTES (@ward/raft/core). */
  readonly maxSnapshotBytes?: number;
}

/** A snapshot file found on disk (not yet verified). */
export interface SnapshotFileInfo extends SnapshotPosition {
  readonly file: string;
}

/** A verified snapshot's data, whole. */
export interface StoredSnapshot extends SnapshotPosition {
  readonly data: Uint8Array;
}

/** A snapshot file whose data verified (read with readData). */
export interface VerifiedSnapshot extends SnapshotPosition {
  readonly dataBytes: number;
}

/** Bytes read per piece when a snapshot's data is streamed from its file. */
const READ_PIECE_BYTES = 1024 * 1024;
const TEMP_SUFFIX = '.tmp';
/** A snapshot received, not (yet) installed: SnapshotStore.receive and adopt. */
const RECEIVED_SUFFIX = '.recv';
const BROKEN_SUFFIX = '.broken';

/**
 * Snapshot files of the state machine, written atomically: a temporary file is written and
 * fsynced, renamed into place, and the directory fsynced. A crash at any point leaves the old
 * snapshot, or the old and the new one, never a half-written file under a snapshot name.
 */
export class SnapshotStore {
  readonly dir: string;
  readonly maxSnapshotBytes: number;
  /** Names of the received files being written. */
  private readonly receiving = new Set<string>();
  /** Received files finished and not yet adopted or made useless, by name. */
  private readonly received = new Map<string, SnapshotPosition>();

  private constructor(dir: string, maxSnapshotBytes: number) {
    this.dir = dir;
    this.maxSnapshotBytes = maxSnapshotBytes;
  }

  /** Opens the directory and removes temporary files of interrupted saves and receipts (returned). */
  static async open(options: SnapshotStoreOptions): Promise<{ store: SnapshotStore; removedTempFiles: string[] }> {
    const maxSnapshotBytes = options.maxSnapshotBytes ?? MAX_SNAPSHOT_BYTES;
    if (!Number.isSafeInteger(maxSnapshotBytes) || maxSnapshotBytes <= 0) throw new TypeError(`SnapshotStore: maxSnapshotBytes must be a positive integer, got ${maxSnapshotBytes}`);
    await mkdir(options.dir, { recursive: true });
    const removedTempFiles = (await readdir(options.dir)).filter((name) => name.endsWith(TEMP_SUFFIX) || name.endsWith(RECEIVED_SUFFIX));
    for (const name of removedTempFiles) await unlink(join(options.dir, name));
    if (removedTempFiles.length > 0) await fsyncDirectory(options.dir);
    return { store: new SnapshotStore(options.dir, maxSnapshotBytes), removedTempFiles };
  }

  /**
   * Writes a snapshot atomically and returns its file. `data` is a buffer or a stream of chunks;
   * more than `maxSnapshotBytes` fails with SnapshotTooLargeError and leaves nothing behind.
   */
  async save(position: SnapshotPosition, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<SnapshotFileInfo> {
    checkPosition(position);
    const file = formatSnapshotName(position);
    const tempPath = join(this.dir, `${file}${TEMP_SUFFIX}`);
    const writer = await SnapshotFileWriter.create(tempPath, this.maxSnapshotBytes);
    try {
      for await (const chunk of data instanceof Uint8Array ? [data] : data) await writer.write(chunk);
      await writer.finish(position);
    } catch (error) {
      await writer.abort();
      throw error;
    }
    await rename(tempPath, join(this.dir, file));
    await fsyncDirectory(this.dir);
    return { file, ...position };
  }

  /**
   * Takes a snapshot's data as it arrives (one from the leader), into a file that is no snapshot
   * yet: `adopt` gives it its name once the snapshot is to be installed; until then a boot removes
   * it. The receipt's `finish` makes it durable; `abort` (or a failed write) leaves nothing.
   * More than `maxSnapshotBytes` fails with SnapshotTooLargeError. One receipt per position at once.
   */
  async receive(position: SnapshotPosition): Promise<SnapshotReceipt> {
    checkPosition(position);
    const name = `${formatSnapshotName(position)}${RECEIVED_SUFFIX}`;
    if (this.receiving.has(name)) throw new Error(`snapshot ${formatSnapshotName(position)} is already being received`);
    this.receiving.add(name);
    this.received.delete(name); // written over
    let writer: SnapshotFileWriter;
    try {
      writer = await SnapshotFileWriter.create(join(this.dir, name), this.maxSnapshotBytes);
    } catch (error) {
      this.receiving.delete(name);
      throw error;
    }
    let settled = false;
    const settle = (): void => {
      settled = true;
      this.receiving.delete(name);
    };
    return {
      write: async (chunk) => {
        if (settled) throw new Error('SnapshotStore.receive: write after the receipt ended');
        try {
          await writer.write(chunk);
        } catch (error) {
          settle();
          await writer.abort();
          throw error;
        }
      },
      finish: async () => {
        if (settled) throw new Error('SnapshotStore.receive: finish after the receipt ended');
        settle();
        try {
          await writer.finish(position);
        } catch (error) {
          await writer.abort();
          throw error;
        }
        this.received.set(name, position);
      },
      abort: async () => {
        if (settled) return;
        settle();
        await writer.abort();
      },
    };
  }

  /**
   * Names the received snapshot at `position` (SnapshotStore.receive, finished) a snapshot file,
   * durably, and removes the other received files it makes useless: the finished ones whose index
   * is not past it (a later one may still be installed). Throws when there is none.
   */
  async adopt(position: SnapshotPosition): Promise<SnapshotFileInfo> {
    checkPosition(position);
    const file = formatSnapshotName(position);
    const name = `${file}${RECEIVED_SUFFIX}`;
    await rename(join(this.dir, name), join(this.dir, file));
    this.received.delete(name);
    for (const [other, received] of this.received) {
      if (received.index > position.index) continue;
      this.received.delete(other);
      await unlink(join(this.dir, other)).catch(() => undefined);
    }
    await fsyncDirectory(this.dir);
    return { file, ...position };
  }

  /** Whether a finished receipt at `position` waits to be adopted (SnapshotStore.receive). */
  hasReceived(position: SnapshotPosition): boolean {
    return this.received.has(`${formatSnapshotName(position)}${RECEIVED_SUFFIX}`);
  }

  /** Snapshot files by name, newest (highest index, then term) first. */
  async list(): Promise<SnapshotFileInfo[]> {
    const infos: SnapshotFileInfo[] = [];
    for (const file of await readdir(this.dir)) {
      const position = parseSnapshotName(file);
      if (position !== undefined) infos.push({ file, ...position });
    }
    return infos.sort((a, b) => b.index - a.index || b.term - a.term);
  }

  /**
   * Verifies a snapshot file (its header, its name, its size and its data's checksum), reading it
   * in pieces: never whole in memory, so no file size limits it but maxSnapshotBytes. Throws
   * SnapshotCorruptError naming the file and the reason.
   */
  async verify(info: SnapshotPosition | SnapshotFileInfo): Promise<VerifiedSnapshot> {
    const { totalBytes, pieces } = await this.readData(info, 0);
    for await (const piece of pieces) void piece;
    return { index: info.index, term: info.term, dataBytes: totalBytes };
  }

  /**
   * Reads and verifies a snapshot's data whole, after its first `skipBytes` (for a small state; a
   * member streams with readData).
   */
  async load(info: SnapshotPosition | SnapshotFileInfo, skipBytes = 0): Promise<StoredSnapshot> {
    const { pieces } = await this.readData(info, skipBytes);
    const chunks: Uint8Array[] = [];
    for await (const piece of pieces) chunks.push(piece);
    return { index: info.index, term: info.term, data: joinChunks(chunks) };
  }

  /**
   * The data of the snapshot file at `position` (or of the file a SnapshotFileInfo names), after
   * its first `skipBytes`, read in pieces of at most `pieceBytes` as they are taken (never whole in
   * memory). The whole data's checksum is checked once the last piece is read: a mismatch, like
   * any read failure, throws from the iteration (SnapshotCorruptError). A missing or unusable file
   * throws at once.
   */
  async readData(position: SnapshotPosition | SnapshotFileInfo, skipBytes: number, pieceBytes = READ_PIECE_BYTES): Promise<{ totalBytes: number; pieces: AsyncIterable<Uint8Array> }> {
    checkPosition(position);
    const file = 'file' in position ? position.file : formatSnapshotName(position);
    const path = join(this.dir, file);
    const header = new Uint8Array(SNAPSHOT_HEADER_BYTES);
    const opened = await open(path, 'r');
    let dataBytes: number;
    try {
      const { bytesRead } = await opened.read(header, 0, SNAPSHOT_HEADER_BYTES, 0);
      const decoded = decodeSnapshotHeader(header.subarray(0, bytesRead));
      if (!decoded.ok) throw new SnapshotCorruptError(file, decoded.reason);
      if (decoded.position.index !== position.index || decoded.position.term !== position.term) throw new SnapshotCorruptError(file, 'header unlike the file name');
      if (decoded.dataBytes > this.maxSnapshotBytes) throw new SnapshotCorruptError(file, `${decoded.dataBytes} data bytes exceed maxSnapshotBytes (${this.maxSnapshotBytes})`);
      const fileBytes = (await opened.stat()).size;
      if (fileBytes !== SNAPSHOT_HEADER_BYTES + decoded.dataBytes) throw new SnapshotCorruptError(file, `header says ${decoded.dataBytes} data bytes, file holds ${fileBytes - SNAPSHOT_HEADER_BYTES}`);
      if (skipBytes > decoded.dataBytes) throw new SnapshotCorruptError(file, `${decoded.dataBytes} data bytes, fewer than the ${skipBytes} to skip`);
      dataBytes = decoded.dataBytes;
    } finally {
      await opened.close();
    }
    // Opened again when the pieces are first asked for, so a stream never read holds no file open.
    // A file is written whole under its name and never rewritten: the header read above is its.
    async function* pieces(): AsyncGenerator<Uint8Array> {
      const handle = await open(path, 'r');
      try {
        let dataCrc = 0;
        for (let offset = 0; offset < dataBytes; ) {
          const piece = new Uint8Array(Math.min(pieceBytes, dataBytes - offset));
          const { bytesRead } = await handle.read(piece, 0, piece.length, SNAPSHOT_HEADER_BYTES + offset);
          if (bytesRead !== piece.length) throw new SnapshotCorruptError(file, `ends after ${offset + bytesRead} of ${dataBytes} data bytes`);
          dataCrc = crc32c(piece, dataCrc);
          const kept = offset + piece.length <= skipBytes ? undefined : piece.subarray(Math.max(0, skipBytes - offset));
          offset += piece.length;
          if (offset === dataBytes && !snapshotChecksumMatches(header, dataCrc)) throw new SnapshotCorruptError(file, 'checksum mismatch');
          if (kept !== undefined) yield kept;
        }
      } finally {
        await handle.close();
      }
    }
    return { totalBytes: dataBytes - skipBytes, pieces: pieces() };
  }

  /** Renames an unusable snapshot to `<file>.broken` (kept for inspection); returns the new name. */
  async markBroken(info: SnapshotFileInfo): Promise<string> {
    const broken = `${info.file}${BROKEN_SUFFIX}`;
    await rename(join(this.dir, info.file), join(this.dir, broken));
    await fsyncDirectory(this.dir);
    return broken;
  }

  /**
   * Deletes all but the newest `keep` snapshot files, and among those any older one below index
   * `olderFrom` (the newest is always kept); returns the deleted names.
   */
  async purge(keep: number, olderFrom = 0): Promise<string[]> {
    if (!Number.isSafeInteger(keep) || keep < 1) throw new TypeError(`SnapshotStore.purge: keep must be a positive integer, got ${keep}`);
    const doomed = (await this.list()).filter((info, rank) => rank >= keep || (rank > 0 && info.index < olderFrom));
    for (const info of doomed) await unlink(join(this.dir, info.file));
    if (doomed.length > 0) await fsyncDirectory(this.dir);
    return doomed.map((info) => info.file);
  }
}

/** A snapshot's data being received (SnapshotStore.receive): written chunk by chunk, in order. */
export interface SnapshotReceipt {
  write(chunk: Uint8Array): Promise<void>;
  /** Writes the header and syncs: the data is whole and durable (not yet a snapshot: see adopt). */
  finish(): Promise<void>;
  /** Gives the receipt up, removing its file (nothing once it has ended). */
  abort(): Promise<void>;
}

/** A snapshot file being written: its data after the header's room, then the header, then fsync. */
class SnapshotFileWriter {
  private dataBytes = 0;
  private dataCrc = 0;

  private constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
    private readonly maxBytes: number,
  ) {}

  static async create(path: string, maxBytes: number): Promise<SnapshotFileWriter> {
    return new SnapshotFileWriter(path, await open(path, 'w'), maxBytes);
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (!(chunk instanceof Uint8Array)) throw new TypeError('SnapshotStore: data chunks must be Uint8Arrays');
    if (this.dataBytes + chunk.length > this.maxBytes) throw new SnapshotTooLargeError(this.dataBytes + chunk.length, this.maxBytes);
    await writeFully(this.handle, chunk, SNAPSHOT_HEADER_BYTES + this.dataBytes);
    this.dataCrc = crc32c(chunk, this.dataCrc);
    this.dataBytes += chunk.length;
  }

  async finish(position: SnapshotPosition): Promise<void> {
    await writeFully(this.handle, encodeSnapshotHeader(position, this.dataBytes, this.dataCrc), 0);
    await fsyncFile(this.handle);
    await this.handle.close();
  }

  async abort(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await unlink(this.path).catch(() => undefined);
  }
}

function checkPosition(position: SnapshotPosition): void {
  for (const [name, value] of [['index', position.index], ['term', position.term]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`snapshot ${name} must be a safe non-negative integer, got ${value}`);
  }
}
