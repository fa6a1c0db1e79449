import { WalCorruptError } from './errors';
import { computeFrameCrc, endOfNonZero, isZero, readFrame } from './frame';
import { RecordType, decodeCrcPayload } from './record';

/** Disk sector size assumed for torn-write detection: a sector is written whole or not at all. */
export const SECTOR_BYTES = 512;

/** A damaged end of the last segment, left by a crash during an unsynced write. */
export interface TornTail {
  /** Offset of the first damaged byte: everything before it is intact. */
  readonly offset: number;
  readonly reason: string;
  /** Offset just past the last non-zero byte of the file: [offset, dataEnd) is discarded. */
  readonly dataEnd: number;
}

export interface SegmentScanInput {
  readonly file: string;
  readonly bytes: Uint8Array;
  /** Only the last segment may end in a torn write; damage elsewhere is corruption. */
  readonly isLast: boolean;
  /** The chain value the segment must start with (undefined for the first retained segment). */
  readonly expectedStartCrc: number | undefined;
  readonly maxPayloadBytes: number;
  /**
   * Bytes a single unsynced write can span. Damage followed by data further away than this is not
   * a torn write (only the last batch can be unsynced) and is reported as corruption.
   */
  readonly tornWindowBytes: number;
  /** Called for every intact record after the segment's checksum record, in order. */
  readonly onRecord: (type: number, payload: Uint8Array, offset: number) => void;
}

export interface SegmentScanResult {
  /** The chain value the segment starts from (its checksum record's, or the expected one). */
  readonly startCrc: number;
  /** Offset just past the last intact record. */
  readonly endOffset: number;
  /** The chain value after the last intact record: the next record's seed. */
  readonly crc: number;
  /** Intact records, the checksum record included. */
  readonly recordCount: number;
  readonly torn: TornTail | undefined;
}

/**
 * Reads and verifies one segment: frame headers, the chained checksums, the leading checksum
 * record against the previous segment. Returns where the intact data ends; throws
 * {@link WalCorruptError} naming the file and offset of anything that is not a torn tail.
 */
export function scanSegment(input: SegmentScanInput): SegmentScanResult {
  const { bytes, file } = input;
  let offset = 0;
  let crc = input.expectedStartCrc ?? 0;
  let recordCount = 0;
  let startCrc = crc;
  const stop = (reason: string, suspectTorn: boolean): SegmentScanResult => {
    const torn = classifyDamage(input, offset, reason, suspectTorn);
    return { startCrc, endOffset: offset, crc, recordCount, torn };
  };
  for (;;) {
    const frame = readFrame(bytes, offset, input.maxPayloadBytes);
    if (frame.kind === 'end') return endOfData(input, { startCrc, endOffset: offset, crc, recordCount, torn: undefined }, stop);
    if (frame.kind === 'short') return stop('record runs past the end of the file', true);
    if (frame.kind === 'badHeader') return stop(frame.reason, false);
    const payload = bytes.subarray(frame.payloadStart, frame.bodyEnd);
    let seed = crc;
    if (recordCount === 0) {
      const start = frame.type === RecordType.Crc ? decodeCrcPayload(payload) : undefined;
      if (start === undefined || !start.ok) throw new WalCorruptError(file, offset, 'segment does not start with a checksum record');
      seed = start.value;
      startCrc = seed;
    }
    if (computeFrameCrc(bytes, frame, seed) !== frame.storedCrc) {
      return stop('record checksum mismatch', hasZeroSector(bytes, frame.bodyStart, frame.bodyEnd));
    }
    if (recordCount === 0 && input.expectedStartCrc !== undefined && seed !== input.expectedStartCrc) {
      throw new WalCorruptError(file, offset, `checksum chain broken: segment starts from ${hex(seed)}, previous segment ended with ${hex(input.expectedStartCrc)}`);
    }
    if (recordCount > 0) input.onRecord(frame.type, payload, offset);
    crc = frame.storedCrc;
    recordCount++;
    offset = frame.next;
  }
}

function endOfData(
  input: SegmentScanInput,
  clean: SegmentScanResult,
  stop: (reason: string, suspectTorn: boolean) => SegmentScanResult,
): SegmentScanResult {
  const offset = clean.endOffset;
  const dataEnd = endOfNonZero(input.bytes, offset, input.bytes.length);
  if (dataEnd === offset) return clean;
  if (!input.isLast) {
    throw new WalCorruptError(input.file, firstNonZero(input.bytes, offset), 'data after the end of a sealed segment');
  }
  return stop('missing record followed by data', true);
}

function classifyDamage(input: SegmentScanInput, offset: number, reason: string, suspectTorn: boolean): TornTail {
  if (!input.isLast || !suspectTorn) throw new WalCorruptError(input.file, offset, reason);
  const dataEnd = endOfNonZero(input.bytes, offset, input.bytes.length);
  if (dataEnd - offset > input.tornWindowBytes) {
    throw new WalCorruptError(
      input.file,
      offset,
      `${reason}, followed by ${dataEnd - offset} bytes of data: more than one unsynced write, so not a torn tail`,
    );
  }
  return { offset, reason, dataEnd };
}

/** True when some disk sector overlapping [start, end) holds only zeros there: a lost write. */
export function hasZeroSector(bytes: Uint8Array, start: number, end: number): boolean {
  for (let sector = start - (start % SECTOR_BYTES); sector < end; sector += SECTOR_BYTES) {
    if (isZero(bytes, Math.max(sector, start), Math.min(sector + SECTOR_BYTES, end))) return true;
  }
  return false;
}

function firstNonZero(bytes: Uint8Array, start: number): number {
  let i = start;
  while (i < bytes.length && bytes[i] === 0) i++;
  return i;
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`;
}
