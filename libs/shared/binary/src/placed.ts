/** A byte array to appear, uncopied, at an offset of a buffer's bytes (see `spliceRuns`). */
export interface Placed {
  /** Where in the buffer it goes: the buffer's bytes before this offset come before it. */
  readonly at: number;
  readonly bytes: Uint8Array;
}

/**
 * The bytes of `own` with every placed array inserted at its offset (ascending offsets within
 * `own`), as pieces to be written back to back: the runs of `own` between the offsets and the
 * placed arrays themselves, neither copied. Empty runs are left out. For encoders that copy small
 * fields into one buffer of their own and leave large payloads where they are (a writev names
 * them).
 */
export function spliceRuns(own: Uint8Array, placed: readonly Placed[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let runStart = 0;
  for (const { at, bytes } of placed) {
    if (at < runStart || at > own.length) throw new RangeError(`a placed array at ${at} is outside [${runStart}, ${own.length}]`);
    if (at > runStart) pieces.push(own.subarray(runStart, at));
    pieces.push(bytes);
    runStart = at;
  }
  if (own.length > runStart || pieces.length === 0) pieces.push(own.subarray(runStart));
  return pieces;
}
