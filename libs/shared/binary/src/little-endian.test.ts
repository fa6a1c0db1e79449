import { describe, expect, it } from 'vitest';
import { setUint32le, setUint64le } from './little-endian';

describe('little-endian writes', () => {
  it('write what a DataView writes, both halves of a u64, at an offset, touching nothing else', () => {
    for (const value of [0, 1, 0xff, 0x1234_5678, 0xffff_ffff]) {
      const bytes = new Uint8Array(6).fill(0xaa);
      const expected = new Uint8Array(6).fill(0xaa);
      setUint32le(bytes, 1, value);
      new DataView(expected.buffer).setUint32(1, value, true);
      expect(bytes).toEqual(expected);
    }
    for (const value of [0, 0xffff_ffff, 2 ** 32, 2 ** 40 + 5, Number.MAX_SAFE_INTEGER]) {
      const bytes = new Uint8Array(10).fill(0xaa);
      const expected = new Uint8Array(10).fill(0xaa);
      setUint64le(bytes, 1, value);
      new DataView(expected.buffer).setBigUint64(1, BigInt(value), true);
      expect(bytes).toEqual(expected);
    }
  });
});
