// Little-endian integers written straight into a byte array. A DataView over a new small
// Uint8Array's `buffer` moves the array's bytes out of the heap into a backing store of their own
// (an allocation, and one more thing for the collector to sweep); these index the array instead.

/** Writes `value` (0..2^32-1) as 4 bytes, least significant first. */
export function setUint32le(target: Uint8Array, offset: number, value: number): void {
  target[offset] = value;
  target[offset + 1] = value >>> 8;
  target[offset + 2] = value >>> 16;
  target[offset + 3] = value >>> 24;
}

/** Writes a safe non-negative integer as 8 bytes, least significant first (the caller checks it). */
export function setUint64le(target: Uint8Array, offset: number, value: number): void {
  setUint32le(target, offset, value >>> 0);
  setUint32le(target, offset + 4, Math.floor(value / 0x1_0000_0000));
}
