import { describe, expect, it } from 'vitest';
import { FrameInvalidError } from './errors';
import { FrameStreamReader } from './frame-stream';

function framed(frames: readonly Buffer[]): Buffer {
  return Buffer.concat(
    frames.flatMap((frame) => {
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32LE(frame.length, 0);
      return [prefix, frame];
    }),
  );
}

/** A deterministic generator (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('FrameStreamReader', () => {
  it('gives back every frame whole and in order, however the bytes are cut into chunks', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const random = rng(seed);
      const frames = Array.from({ length: 1 + Math.floor(random() * 20) }, (_, i) => Buffer.from(Array.from({ length: Math.floor(random() * 3000) }, (_, j) => (i * 31 + j) & 0xff)));
      const bytes = framed(frames);
      const reader = new FrameStreamReader(4096);
      const out: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        // Chunks of 1 byte to a few KiB: cuts inside length prefixes and frames alike.
        const size = 1 + Math.floor(random() * (random() < 0.3 ? 5 : 5000));
        out.push(...reader.push(bytes.subarray(at, at + size)));
        at += size;
      }
      expect(out.map((frame) => frame.toString('hex')), `seed ${seed}`).toEqual(frames.map((frame) => frame.toString('hex')));
    }
  });

  it('refuses a frame over its bound as soon as the length prefix is in', () => {
    const reader = new FrameStreamReader(100);
    expect(reader.push(framed([Buffer.alloc(100)]))).toHaveLength(1);
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32LE(101, 0);
    expect(reader.push(prefix.subarray(0, 2))).toEqual([]);
    expect(() => reader.push(prefix.subarray(2))).toThrow(FrameInvalidError);
  });
});
