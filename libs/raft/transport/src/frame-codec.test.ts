import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hasCode } from '@ward/shared/errors';
import {
  BATCH_HEADER_BYTES,
  COPY_BELOW_BYTES,
  batchFrameBytes,
  byteLength,
  decodeBatch,
  decodeSnapshotFrame,
  encodeBatch,
  encodeBatchPieces,
  type MessageBytes,
  encodeSnapshotChunk,
  encodeSnapshotHeader,
  encodeSnapshotTrailer,
} from './frame-codec';

const limits = { maxMessageBytes: 1000, maxBatchMessages: 50 };
const route = { clusterId: 0xabcdef0123456789n, from: 0xfedcba9876543210n, to: 1n };

describe('batch frames', () => {
  it('round-trip any messages with their route, sized as documented', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { minLength: 1, maxLength: 50 }), (messages) => {
        const frame = encodeBatch(route, messages);
        expect(frame.length).toBe(batchFrameBytes(messages.reduce((n, m) => n + m.length, 0), messages.length));
        const decoded = decodeBatch(frame, limits);
        expect(decoded).toMatchObject(route);
        expect(decoded.messages).toEqual(messages);
      }),
    );
  });

  it('in pieces: the frame of the joined messages, with every piece of COPY_BELOW_BYTES or more left uncopied', () => {
    const piece = fc.oneof(fc.uint8Array({ maxLength: 60 }), fc.integer({ min: COPY_BELOW_BYTES - 1, max: COPY_BELOW_BYTES + 100 }).map((n) => new Uint8Array(n).fill(n & 0xff)));
    const messageArb: fc.Arbitrary<MessageBytes> = fc.oneof(piece, fc.array(piece, { maxLength: 4 }));
    const wide = { maxMessageBytes: 5 * (COPY_BELOW_BYTES + 100), maxBatchMessages: 50 };
    fc.assert(
      fc.property(fc.array(messageArb, { minLength: 1, maxLength: 6 }), (messages) => {
        const pieces = encodeBatchPieces(route, messages);
        const frame = Buffer.concat(pieces);
        const joined = messages.map((m) => (m instanceof Uint8Array ? m : new Uint8Array(Buffer.concat(m))));
        expect(byteLength(pieces)).toBe(batchFrameBytes(joined.reduce((n, m) => n + m.length, 0), messages.length));
        expect(decodeBatch(frame, wide).messages).toEqual(joined);
        const large = messages.flatMap((m) => (m instanceof Uint8Array ? [m] : m)).filter((p) => p.length >= COPY_BELOW_BYTES);
        for (const p of large) expect(pieces.includes(p)).toBe(true);
        expect(pieces.length).toBeLessThanOrEqual(2 * large.length + 1);
        expect(pieces.every((p) => p.length > 0)).toBe(true);
      }),
      { numRuns: 100, seed: 11 },
    );
  });

  it('encodes a sub-range of a message list', () => {
    const messages = [1, 2, 3, 4].map((n) => Uint8Array.of(n));
    expect(decodeBatch(encodeBatch(route, messages, 1, 3), limits).messages).toEqual([Uint8Array.of(2), Uint8Array.of(3)]);
  });

  it('detects any single flipped bit', () => {
    const frame = encodeBatch(route, [Uint8Array.of(1, 2, 3), new Uint8Array(40).fill(9)]);
    for (let bit = 0; bit < frame.length * 8; bit += 3) {
      const damaged = frame.slice();
      damaged[bit >> 3]! ^= 1 << (bit & 7);
      expect(() => decodeBatch(damaged, limits)).toThrow();
    }
  });

  it('refuses frames over the limits, empty batches, truncation and trailing bytes with FrameInvalidError', () => {
    const refused = (frame: Uint8Array): boolean => {
      try {
        decodeBatch(frame, limits);
        return false;
      } catch (error) {
        return hasCode(error, 'ERR_TRANSPORT_FRAME_INVALID');
      }
    };
    expect(refused(encodeBatch(route, Array.from({ length: 51 }, () => new Uint8Array(1))))).toBe(true);
    expect(refused(encodeBatch(route, [new Uint8Array(1001)]))).toBe(true);
    expect(refused(encodeBatch(route, []))).toBe(true);
    expect(refused(new Uint8Array(BATCH_HEADER_BYTES))).toBe(true);
    expect(refused(Uint8Array.of(2, 1, 0, 0, 0, 0, 0, 0))).toBe(true);
    expect(refused(encodeSnapshotTrailer(1, 2))).toBe(true);
  });

  it('rejects ids outside uint64 at encode time', () => {
    expect(() => encodeBatch({ ...route, from: -1n }, [Uint8Array.of(1)])).toThrow(TypeError);
    expect(() => encodeBatch({ ...route, to: 1n << 64n }, [Uint8Array.of(1)])).toThrow(TypeError);
  });
});

describe('snapshot frames', () => {
  it('round-trip header, chunk and trailer', () => {
    const header = { ...route, totalBytes: 2 ** 40, metadata: Uint8Array.of(1, 2, 3) };
    expect(decodeSnapshotFrame(encodeSnapshotHeader(header), 10)).toEqual({ kind: 'header', ...header });
    expect(decodeSnapshotFrame(encodeSnapshotChunk(7, Uint8Array.of(4, 5)), 10)).toEqual({ kind: 'chunk', seq: 7, data: Uint8Array.of(4, 5) });
    expect(decodeSnapshotFrame(encodeSnapshotTrailer(9, 0xdeadbeef), 10)).toEqual({ kind: 'trailer', chunkCount: 9, dataCrc: 0xdeadbeef });
  });

  it('refuses oversized metadata and batch frames in a snapshot stream', () => {
    expect(() => decodeSnapshotFrame(encodeSnapshotHeader({ ...route, totalBytes: 1, metadata: new Uint8Array(11) }), 10)).toThrow('metadata');
    expect(() => decodeSnapshotFrame(encodeBatch(route, [Uint8Array.of(1)]), 10)).toThrow('unexpected frame kind');
  });
});
