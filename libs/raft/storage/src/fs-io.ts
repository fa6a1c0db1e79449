import { fdatasync as fdatasyncCallback, fsync as fsyncCallback, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Writes all of `bytes` at `position` (positional writes may be partial). */
export async function writeFully(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, position + written);
    if (bytesWritten <= 0) throw new Error(`write made no progress at position ${position + written}`);
    written += bytesWritten;
  }
}

/**
 * writeFully on the calling thread: for small writes into the page cache, where a round trip
 * through libuv's thread pool costs more than the copy itself.
 */
export function writeFullySync(handle: FileHandle, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.length) {
    const bytesWritten = writeSync(handle.fd, bytes, written, bytes.length - written, position + written);
    if (bytesWritten <= 0) throw new Error(`write made no progress at position ${position + written}`);
    written += bytesWritten;
  }
}

/** fdatasync(2) on the handle's descriptor: file data (and the size) reach the disk. */
export function fdatasync(handle: FileHandle): Promise<void> {
  return new Promise((resolve, reject) => fdatasyncCallback(handle.fd, (error) => (error ? reject(error) : resolve())));
}

/** fsync(2) on the handle's descriptor: data and all metadata. */
export function fsyncFile(handle: FileHandle): Promise<void> {
  return new Promise((resolve, reject) => fsyncCallback(handle.fd, (error) => (error ? reject(error) : resolve())));
}

/** Makes renames, creations and deletions in `dir` durable (open the directory, fsync it). */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await fsyncFile(handle);
  } finally {
    await handle.close();
  }
}

const ZERO_CHUNK_BYTES = 1 << 20;

/** Writes zeros over [start, end) in chunks of at most 1 MiB. */
export async function writeZeros(handle: FileHandle, start: number, end: number): Promise<void> {
  const zeros = new Uint8Array(Math.min(ZERO_CHUNK_BYTES, Math.max(0, end - start)));
  for (let position = start; position < end; position += zeros.length) {
    await writeFully(handle, zeros.subarray(0, Math.min(zeros.length, end - position)), position);
  }
}
