// Reading and damaging a member's WAL files (the frame layout of @ward/raft/storage's README).
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Segment paths of a member's WAL, in order. */
export async function walSegments(dataDir: string): Promise<string[]> {
  const dir = join(dataDir, 'wal');
  return (await readdir(dir)).filter((name) => name.endsWith('.wal')).sort().map((name) => join(dir, name));
}

/** Offsets and lengths of the frames written in a segment (up to the zero word ending the data). */
export async function frames(segment: string): Promise<{ offset: number; bytes: number }[]> {
  const data = await readFile(segment);
  const result: { offset: number; bytes: number }[] = [];
  let offset = 0;
  while (offset + 8 <= data.length) {
    const body = data.readUInt32LE(offset);
    if (body === 0) break;
    const bytes = (8 + body + 7) & ~7;
    result.push({ offset, bytes });
    offset += bytes;
  }
  return result;
}

/** The last JSON log line of a member whose `msg` is `message` (logs are appended across runs). */
export async function lastLogLine(logFile: string, message: string): Promise<Record<string, unknown> | undefined> {
  const lines = (await readFile(logFile, 'utf8')).split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.startsWith('{')) continue;
    const line = JSON.parse(lines[i]!) as Record<string, unknown>;
    if (line.msg === message) return line;
  }
  return undefined;
}
