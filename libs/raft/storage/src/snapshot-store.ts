import { mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
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
const BROKEN_SUFFIX = '.broken';

/**
 * Snapshot files of the state machine, written atomically: a temporary file is written and
 * fsynced, renamed into place, and the directory fsynced. A crash at any point leaves the old
 * snapshot, or the old and the new one, never a half-written file under a snapshot name.
 */
export class SnapshotStore {
  readonly dir: string;
  readonly maxSnapshotBytes: number;

  private constructor(dir: string, maxSnapshotBytes: number) {
    this.dir = dir;
    this.maxSnapshotBytes = maxSnapshotBytes;
  }

  /** Opens the directory and removes temporary files of interrupted saves (returned). */
  static async open(options: SnapshotStoreOptions): Promise<{ store: SnapshotStore; removedTempFiles: string[] }> {
    const maxSnapshotBytes = options.maxSnapshotBytes ?? MAX_SNAPSHOT_BYTES;
    if (!Number.isSafeInteger(maxSnapshotBytes) || maxSnapshotBytes <= 0) throw new TypeError(`SnapshotStore: maxSnapshotBytes must be a positive integer, got ${maxSnapshotBytes}`);
    await mkdir(options.dir, { recursive: true });
    const removedTempFiles = (await readdir(options.dir)).filter((name) => name.endsWith(TEMP_SUFFIX));
    for (const name of removedTempFiles) await unlink(join(options.dir, name));
    if (removedTempFiles.length > 0) await fsyncDirectory(options.dir);
    return { store: new SnapshotStore(options.dir, maxSnapshotBytes), removedTempFiles };
  }

  /**
   * Writes a snapshot atomically and returns its file. `data` is a buffer or a stream of chunks
   * (a snapshot received from the leader); more than `maxSnapshotBytes` fails with
   * SnapshotTooLargeError and leaves nothing behind.
   */
  async save(position: SnapshotPosition, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<SnapshotFileInfo> {
    checkPosition(position);
    const file = formatSnapshotName(position);
    const tempPath = join(this.dir, `${file}${TEMP_SUFFIX}`);
    const handle = await open(tempPath, 'w');
    try {
      let dataBytes = 0;
      let dataCrc = 0;
      const chunks = data instanceof Uint8Array ? [data] : data;
      for await (const chunk of chunks) {
        if (!(chunk instanceof Uint8Array)) throw new TypeError('SnapshotStore.save: data chunks must be Uint8Arrays');
        if (dataBytes + chunk.length > this.maxSnapshotBytes) throw new SnapshotTooLargeError(dataBytes + chunk.length, this.maxSnapshotBytes);
        await writeFully(handle, chunk, SNAPSHOT_HEADER_BYTES + dataBytes);
        dataCrc = crc32c(chunk, dataCrc);
        dataBytes += chunk.length;
      }
      await writeFully(handle, encodeSnapshotHeader(position, dataBytes, dataCrc), 0);
      await fsyncFile(handle);
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(tempPath).catch(() => undefined);
      throw error;
    }
    await handle.close();
    await rename(tempPath, join(this.dir, file));
    await fsyncDirectory(this.dir);
    return { file, ...position };
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

  /** Reads and verifies a snapshot's data whole (for a small state; a member streams with readData). */
  async load(info: SnapshotPosition | SnapshotFileInfo): Promise<StoredSnapshot> {
    const { pieces } = await this.readData(info, 0);
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

  /** Deletes all but the newest `keep` snapshot files; returns the deleted names. */
  async purge(keep: number): Promise<string[]> {
    if (!Number.isSafeInteger(keep) || keep < 1) throw new TypeError(`SnapshotStore.purge: keep must be a positive integer, got ${keep}`);
    const doomed = (await this.list()).slice(keep);
    for (const info of doomed) await unlink(join(this.dir, info.file));
    if (doomed.length > 0) await fsyncDirectory(this.dir);
    return doomed.map((info) => info.file);
  }
}

function checkPosition(position: SnapshotPosition): void {
  for (const [name, value] of [['index', position.index], ['term', position.term]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`snapshot ${name} must be a safe non-negative integer, got ${value}`);
  }
}
