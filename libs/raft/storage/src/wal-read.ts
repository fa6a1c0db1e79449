import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WalCorruptError } from './errors';
import { parseSegmentName, type SegmentName } from './segment-name';
import { scanSegment, type TornTail } from './segment-scan';
import { WalReplay, type WalReplayState } from './wal-replay';

export interface WalReadOptions {
  readonly dir: string;
  readonly maxPayloadBytes: number;
  readonly tornWindowBytes: number;
  /** When given, every segment's metadata must equal these bytes. */
  readonly expectedMetadata?: Uint8Array;
}

/** Where the intact data of the last segment ends, and what follows it. */
export interface WalTail {
  readonly segment: SegmentName;
  readonly endOffset: number;
  /** Chain value after the last intact record. */
  readonly crc: number;
  /** Chain value the last segment starts from. */
  readonly startCrc: number;
  /** Intact records in the last segment, its checksum record included. */
  readonly recordCount: number;
  readonly fileBytes: number;
  readonly torn: TornTail | undefined;
}

export interface WalReadResult {
  /** Segments in order (seq ascending, no gaps). */
  readonly segments: readonly SegmentName[];
  readonly replay: WalReplayState | undefined;
  readonly tail: WalTail;
}

/** Segment files of `dir` in seq order; throws when a seq is missing between two present ones. */
export async function listSegments(dir: string): Promise<SegmentName[]> {
  const segments = (await readdir(dir)).map(parseSegmentName).filter((s): s is SegmentName => s !== undefined);
  segments.sort((a, b) => a.seq - b.seq);
  for (let i = 1; i < segments.length; i++) {
    const previous = segments[i - 1]!;
    const current = segments[i]!;
    if (current.seq !== previous.seq + 1) {
      throw new WalCorruptError(current.name, 0, `segment seq ${current.seq} follows ${previous.seq}: a segment is missing`);
    }
    if (current.firstIndex < previous.firstIndex) {
      throw new WalCorruptError(current.name, 0, `segment first index ${current.firstIndex} is below the previous segment's ${previous.firstIndex}`);
    }
  }
  return segments;
}

/**
 * Reads and verifies every segment in order and replays their records. Read-only: a torn tail is
 * reported, not repaired. Returns undefined when `dir` holds no segment. Throws
 * {@link WalCorruptError} (file and offset) on anything that is not a torn tail of the last segment.
 */
export async function readWal(options: WalReadOptions): Promise<WalReadResult | undefined> {
  const segments = await listSegments(options.dir);
  if (segments.length === 0) return undefined;
  const replay = new WalReplay(options.expectedMetadata);
  let crc: number | undefined;
  let tail: WalTail | undefined;
  let metadataSeen = false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    // A view of the file's buffer: `new Uint8Array(buffer)` would copy the (preallocated, mostly
    // zero) segment element by element, which took about a second per 64 MiB segment.
    const file = await readFile(join(options.dir, segment.name));
    const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
    const isLast = i === segments.length - 1;
    // A sealed segment is full of records: its entries stay views of the file's buffer (a copy of
    // each costs as much again in fresh memory at boot, 100 MB and more behind a large snapshot).
    // The last one is preallocated and mostly zeros: its entries are copied, so it can go.
    let position = 0;
    const scan = scanSegment({
      file: segment.name,
      bytes,
      isLast,
      expectedStartCrc: crc,
      maxPayloadBytes: options.maxPayloadBytes,
      tornWindowBytes: options.tornWindowBytes,
      onRecord: (type, payload, offset) => replay.apply(type, payload, segment.name, offset, position++, isLast),
    });
    metadataSeen ||= position > 0;
    if (i < segments.length - 1 && position === 0) throw new WalCorruptError(segment.name, scan.endOffset, 'sealed segment has no metadata record');
    crc = scan.crc;
    tail = { segment, endOffset: scan.endOffset, crc: scan.crc, startCrc: scan.startCrc, recordCount: scan.recordCount, fileBytes: bytes.length, torn: scan.torn };
  }
  return { segments, replay: metadataSeen ? replay.state() : undefined, tail: tail! };
}
