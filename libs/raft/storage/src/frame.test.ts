import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c } from '@ward/shared/checksum';
import { computeFrameCrc, endOfNonZero, frameSizeBytes, readFrame, writeFrame } from './frame';
import { hasZeroSector } from './segment-scan';

describe('frames', () => {
  it('are 8-byte aligned with the documented layout and round-trip any payload', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 0xffffffff }), (payload, type, seed) => {
        const size = frameSizeBytes(payload.length);
        expect(size % 8).toBe(0);
        expect(size - 13 - payload.length).toBeLessThan(8);
        const bytes = new Uint8Array(size + 8);
        const crc = writeFrame(bytes, 0, type, payload, seed);
        const view = new DataView(bytes.buffer);
        expect(view.getUint32(0, true)).toBe(5 + payload.length);
        expect(view.getUint8(4)).toBe(size - 8 - 5 - payload.length);
        expect(crc).toBe(crc32c(Uint8Array.of(type, ...payload), seed));
        const read = readFrame(bytes, 0, 1000);
        expect(read.kind).toBe('frame');
        if (read.kind !== 'frame') return;
        expect(read).toMatchObject({ type, storedCrc: crc, next: size });
        expect(bytes.subarray(read.payloadStart, read.bodyEnd)).toEqual(payload);
        expect(computeFrameCrc(bytes, read, seed)).toBe(crc);
        expect(readFrame(bytes, size, 1000)).toEqual({ kind: 'end' });
      }),
    );
  });

  it('frame a payload given as a head and a tail exactly as the joined payload, padding zeroed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(), fc.integer({ min: 0, max: 0xffffffff }), (payload, cut, seed) => {
        const at = cut % (payload.length + 1);
        const whole = new Uint8Array(frameSizeBytes(payload.length)).fill(0xee);
        const split = whole.slice();
        const crc = writeFrame(whole, 0, 3, payload, seed);
        expect(writeFrame(split, 0, 3, payload.subarray(0, at), seed, payload.subarray(at))).toBe(crc);
        expect(split).toEqual(whole);
        expect(whole.subarray(13 + payload.length).every((b) => b === 0)).toBe(true);
      }),
    );
  });

  it('classifies a short file, a bad length word and an oversized record', () => {
    const bytes = new Uint8Array(64);
    writeFrame(bytes, 0, 2, new Uint8Array(30), 0);
    expect(readFrame(bytes.subarray(0, 20), 0, 1000).kind).toBe('short');
    expect(readFrame(bytes.subarray(0, 5), 0, 1000).kind).toBe('short');
    expect(readFrame(bytes, 0, 10)).toMatchObject({ kind: 'badHeader' });
    const flipped = bytes.slice();
    flipped[1]! ^= 1;
    expect(readFrame(flipped, 0, 1000)).toMatchObject({ kind: 'badHeader', reason: 'record length word fails its check' });
    expect(readFrame(new Uint8Array(3), 0, 1000)).toEqual({ kind: 'end' });
  });

  it('endOfNonZero finds the end of the data at any alignment', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 40 }), (length, shift, start) => {
        const backing = new Uint8Array(length + 16);
        const bytes = backing.subarray(shift, shift + length);
        const last = length === 0 ? -1 : (length * 7919) % length;
        if (last >= 0) bytes[last] = 1;
        const from = Math.min(start, length);
        expect(endOfNonZero(bytes, from, length)).toBe(last >= from ? last + 1 : from);
      }),
    );
  });

  it('endOfNonZero finds the end across whole zero chunks (lengths of several 64 KiB chunks)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 200_000 }), fc.nat(), (length, shift, start, seed) => {
        const backing = new Uint8Array(length + 16);
        const bytes = backing.subarray(shift, shift + length);
        const last = length === 0 ? -1 : seed % length;
        if (last >= 0) bytes[last] = 1;
        const from = Math.min(start, length);
        expect(endOfNonZero(bytes, from, length)).toBe(last >= from ? last + 1 : from);
        // data beyond `end` is not looked at
        if (length > 0) expect(endOfNonZero(bytes, 0, Math.min(length, last + 1 + 65_536 * 2))).toBe(last + 1);
      }),
      { numRuns: 60 },
    );
  });

  it('hasZeroSector spots a lost 512-byte sector inside a range', () => {
    const bytes = new Uint8Array(2048).fill(1);
    expect(hasZeroSector(bytes, 100, 1500)).toBe(false);
    bytes.fill(0, 512, 1024);
    expect(hasZeroSector(bytes, 100, 1500)).toBe(true);
    expect(hasZeroSector(bytes, 1024, 1500)).toBe(false);
    // Only part of a sector overlaps the range, and that part is zero.
    expect(hasZeroSector(bytes, 900, 1100)).toBe(true);
  });
});
