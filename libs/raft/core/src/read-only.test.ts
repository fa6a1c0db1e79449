import { describe, expect, it } from 'vitest';
import { decodePosition, encodePosition } from './read-only';

describe('ReadIndex request context', () => {
  it('is the position as u64 LE, both halves, and decodes back', () => {
    for (const position of [0, 1, 0xffff_ffff, 2 ** 40 + 5, Number.MAX_SAFE_INTEGER]) {
      const expected = new Uint8Array(8);
      new DataView(expected.buffer).setBigUint64(0, BigInt(position), true);
      expect(encodePosition(position)).toEqual(expected);
      expect(decodePosition(encodePosition(position))).toBe(position);
    }
  });

  it('refuses a context of another length or beyond a safe integer', () => {
    expect(decodePosition(new Uint8Array(7))).toBeUndefined();
    expect(decodePosition(new Uint8Array(8).fill(0xff))).toBeUndefined();
  });
});
