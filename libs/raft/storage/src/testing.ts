/**
 * Test helpers for the storage library: temporary directories on the real disk and record
 * builders. Only tests import this file (it is not part of the public index).
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WalEntry, WalRecord } from './record';

export interface TempDir {
  readonly path: string;
  remove(): Promise<void>;
}

/** A fresh directory under the OS temp dir (a real file system, real fsync). */
export async function makeTempDir(prefix: string): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), `ward-${prefix}-`));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Deterministic entry data: recognisable, distinct per (index, term), of `sizeBytes`. */
export function entryData(index: number, term: number, sizeBytes = 32): Uint8Array {
  const data = new Uint8Array(sizeBytes);
  for (let i = 0; i < sizeBytes; i++) data[i] = (index * 31 + term * 7 + i * 13 + 1) & 0xff || 1;
  return data;
}

export function entry(index: number, term: number, sizeBytes = 32): WalEntry {
  return { index, term, type: 0, data: entryData(index, term, sizeBytes) };
}

export function entryRecord(index: number, term: number, sizeBytes = 32): WalRecord {
  return { kind: 'entry', entry: entry(index, term, sizeBytes) };
}

/** Entry records for indexes [from, to], all in `term`. */
export function entryRecords(from: number, to: number, term: number, sizeBytes = 32): WalRecord[] {
  const records: WalRecord[] = [];
  for (let index = from; index <= to; index++) records.push(entryRecord(index, term, sizeBytes));
  return records;
}

/** Segment file names of a WAL directory, in order. */
export async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.wal')).sort();
}

/** Reads a file, applies `mutate` to its bytes and writes it back (simulated disk damage). */
export async function mutateFile(path: string, mutate: (bytes: Uint8Array) => Uint8Array): Promise<void> {
  const bytes = new Uint8Array(await readFile(path));
  await writeFile(path, mutate(bytes));
}

/** Offsets of the intact frames of a segment's bytes, in order (stops at the end of the data). */
export function frameOffsets(bytes: Uint8Array): number[] {
  const offsets: number[] = [];
  let offset = 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (offset + 8 <= bytes.length) {
    const bodyBytes = view.getUint32(offset, true);
    if (bodyBytes === 0) break;
    offsets.push(offset);
    offset += (8 + bodyBytes + 7) & ~7;
  }
  return offsets;
}
