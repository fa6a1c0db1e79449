/**
 * Segment files are named `<seq:16 hex>-<firstIndex:16 hex>.wal`: `seq` counts segments from 0
 * without gaps, `firstIndex` is the index the segment's first entry was expected to have when it
 * was cut (one past the last entry written before it). Every entry of a segment has a lower index
 * than the next segment's `firstIndex`, which is what log compaction relies on.
 */
export interface SegmentName {
  readonly seq: number;
  readonly firstIndex: number;
  readonly name: string;
}

const SEGMENT_NAME = /^([0-9a-f]{16})-([0-9a-f]{16})\.wal$/;
const HEX_DIGITS = 16;

export function formatSegmentName(seq: number, firstIndex: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new TypeError(`segment seq must be a safe non-negative integer, got ${seq}`);
  if (!Number.isSafeInteger(firstIndex) || firstIndex < 0) throw new TypeError(`segment firstIndex must be a safe non-negative integer, got ${firstIndex}`);
  return `${seq.toString(16).padStart(HEX_DIGITS, '0')}-${firstIndex.toString(16).padStart(HEX_DIGITS, '0')}.wal`;
}

/** The parsed name, or undefined when `name` is not a segment file name. */
export function parseSegmentName(name: string): SegmentName | undefined {
  const match = SEGMENT_NAME.exec(name);
  if (match === null) return undefined;
  const seq = Number.parseInt(match[1]!, 16);
  const firstIndex = Number.parseInt(match[2]!, 16);
  if (!Number.isSafeInteger(seq) || !Number.isSafeInteger(firstIndex)) return undefined;
  return { seq, firstIndex, name };
}
