import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecError } from '../errors';
import { MAX_NODE_ID } from '../ids';
import type { Message } from '../message';
import { MessageType, isLocalMessageType, message } from '../message';
import type { ConfState, Entry, Snapshot } from '../types';
import { entrySizeBytes } from '../types';
import {
  decodeConfState,
  decodeEntry,
  decodeHardState,
  decodeMessage,
  decodeSnapshot,
  encodeConfState,
  encodeEntry,
  encodeHardState,
  encodeMessage,
  encodeMessagePieces,
  encodeSnapshot,
  encodeSnapshotChunks,
  encodeSnapshotHead,
  MAX_SNAPSHOT_BYTES,
  decodeSnapshotHead,
  messageSizeBytes,
  snapshotHeadMaxBytes,
} from './codec';

const position = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const nodeId = fc.bigInt({ min: 1n, max: MAX_NODE_ID });
const bytes = fc.uint8Array({ maxLength: 64 });
const entryArb: fc.Arbitrary<Entry> = fc.record({ term: position, index: position, type: fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>, data: bytes });
const confStateArb: fc.Arbitrary<ConfState> = fc.record({
  voters: fc.array(nodeId, { maxLength: 5 }),
  learners: fc.array(nodeId, { maxLength: 3 }),
  votersOutgoing: fc.array(nodeId, { maxLength: 3 }),
  learnersNext: fc.array(nodeId, { maxLength: 3 }),
  autoLeave: fc.boolean(),
});
const snapshotArb: fc.Arbitrary<Snapshot> = fc.record({ data: bytes, metadata: fc.record({ index: position, term: position, confState: confStateArb }) });
const wireTypes = Object.values(MessageType).filter((t) => !isLocalMessageType(t));
const messageArb: fc.Arbitrary<Message> = fc
  .record({
    type: fc.constantFrom(...wireTypes),
    to: fc.oneof(nodeId, fc.constant(0n)),
    from: fc.oneof(nodeId, fc.constant(0n)),
    term: position,
    logTerm: position,
    index: position,
    commit: position,
    rejectHint: position,
    reject: fc.boolean(),
    context: bytes,
    entries: fc.array(entryArb, { maxLength: 4 }),
    snapshot: fc.option(snapshotArb, { nil: undefined }),
  })
  .map(({ type, ...fields }) => message(type, fields));

function codecErrorOrValue(decode: () => unknown): void {
  try {
    decode();
  } catch (error) {
    expect(error).toBeInstanceOf(CodecError);
  }
}

describe('binary codec', () => {
  it('round-trips every message exactly and deterministically', () => {
    fc.assert(
      fc.property(messageArb, (m) => {
        const encoded = encodeMessage(m);
        expect(encoded.length).toBe(messageSizeBytes(m));
        const decoded = decodeMessage(encoded);
        expect(decoded).toEqual(m);
        expect(encodeMessage(decoded)).toEqual(encoded);
      }),
      { numRuns: 1000, seed: 7 },
    );
  });

  it('a message in pieces is the bytes of encodeMessage, with entry data from the given size on left uncopied', () => {
    fc.assert(
      fc.property(messageArb, fc.integer({ min: 0, max: 70 }), (m, uncopiedFrom) => {
        if (m.snapshot !== undefined) {
          expect(() => encodeMessagePieces(m, uncopiedFrom)).toThrow(TypeError);
          return;
        }
        const pieces = encodeMessagePieces(m, uncopiedFrom);
        expect(new Uint8Array(Buffer.concat(pieces))).toEqual(encodeMessage(m));
        for (const e of m.entries) expect(pieces.includes(e.data)).toBe(e.data.length >= uncopiedFrom);
      }),
      { numRuns: 500, seed: 9 },
    );
  });

  it('round-trips entries (encoded size = entrySizeBytes), hard states, conf states and snapshots', () => {
    fc.assert(
      fc.property(entryArb, confStateArb, snapshotArb, position, fc.oneof(nodeId, fc.constant(0n)), position, (e, cs, snap, term, vote, commit) => {
        expect(encodeEntry(e).length).toBe(entrySizeBytes(e));
        expect(decodeEntry(encodeEntry(e))).toEqual(e);
        expect(decodeConfState(encodeConfState(cs))).toEqual(cs);
        expect(decodeSnapshot(encodeSnapshot(snap))).toEqual(snap);
        const [head, data] = encodeSnapshotChunks(snap);
        expect(data).toBe(snap.data);
        expect(Uint8Array.from([...head, ...data])).toEqual(encodeSnapshot(snap));
        // The head read back from any prefix that holds it, however much of the data follows.
        const whole = encodeSnapshot(snap);
        expect(decodeSnapshotHead(whole.subarray(0, head.length + (snap.data.length >> 1)))).toEqual({ metadata: snap.metadata, headBytes: head.length, dataBytes: snap.data.length });
        expect(head.length).toBeLessThanOrEqual(snapshotHeadMaxBytes());
        expect(decodeHardState(encodeHardState({ term, vote, commit }))).toEqual({ term, vote, commit });
      }),
      { numRuns: 1000, seed: 11 },
    );
  });

  it('a snapshot head cut short, or announcing data over maxSnapshotBytes, is a CodecError', () => {
    const metadata = { index: 7, term: 2, confState: { voters: [1n, 2n, 3n], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } };
    const head = encodeSnapshotHead(metadata, 1000);
    expect(decodeSnapshotHead(head)).toEqual({ metadata, headBytes: head.length, dataBytes: 1000 });
    expect(() => decodeSnapshotHead(head.subarray(0, head.length - 1))).toThrow(CodecError);
    const limits = { maxDataBytes: 64, maxSnapshotBytes: 999, maxEntries: 10, maxMembers: 10 };
    expect(() => decodeSnapshotHead(head, limits)).toThrow(/1000 bytes exceeds the limit of 999/);
    // The largest head the limits allow fits their bound exactly.
    const ids = Array.from({ length: 10 }, (_, i) => BigInt(i + 1));
    const widest = encodeSnapshotHead({ index: 1, term: 1, confState: { voters: ids, learners: ids, votersOutgoing: ids, learnersNext: ids, autoLeave: true } }, 0);
    expect(widest.length).toBe(snapshotHeadMaxBytes(limits));
    // The default bound: past 2 GiB, within the head's 32-bit length.
    const large = encodeSnapshotHead(metadata, MAX_SNAPSHOT_BYTES);
    expect(MAX_SNAPSHOT_BYTES).toBeGreaterThan(2 ** 31);
    expect(decodeSnapshotHead(large).dataBytes).toBe(MAX_SNAPSHOT_BYTES);
    expect(() => decodeSnapshotHead(encodeSnapshotHead(metadata, MAX_SNAPSHOT_BYTES + 1))).toThrow(CodecError);
    expect(() => encodeSnapshotHead(metadata, 2 ** 32)).toThrow(/uint32 out of range/);
  });

  it('decoded entry data and context own their bytes, also when the input is a Node Buffer', () => {
    const m = message(MessageType.App, { to: 2n, from: 1n, term: 3, index: 4, context: Uint8Array.of(7, 7), entries: [{ term: 3, index: 5, type: 0, data: Uint8Array.of(1, 2, 3) }] });
    const input = Buffer.from(encodeMessage(m));
    const decoded = decodeMessage(input);
    input.fill(0xee);
    expect(decoded).toEqual(m);
    // With entryDataAsViews, entry data is a view of the input (and the context still a copy).
    const viewed = new Uint8Array(encodeMessage(m));
    const decodedViews = decodeMessage(viewed, undefined, true);
    expect(decodedViews).toEqual(m);
    expect(decodedViews.entries[0]!.data.buffer).toBe(viewed.buffer);
    viewed.fill(0xee);
    expect(decodedViews.entries[0]!.data).toEqual(Uint8Array.of(0xee, 0xee, 0xee));
    expect(decodedViews.context).toEqual(Uint8Array.of(7, 7));
  });

  it('never fails with anything but a CodecError on truncated, flipped or random input', () => {
    fc.assert(
      fc.property(messageArb, fc.nat(), fc.nat({ max: 7 }), (m, at, bit) => {
        const encoded = encodeMessage(m);
        const cut = at % (encoded.length + 1);
        codecErrorOrValue(() => decodeMessage(encoded.subarray(0, cut)));
        const flipped = encoded.slice();
        flipped[at % encoded.length]! ^= 1 << bit;
        codecErrorOrValue(() => decodeMessage(flipped));
      }),
      { numRuns: 3000, seed: 13 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (random) => {
        codecErrorOrValue(() => decodeMessage(random));
        codecErrorOrValue(() => decodeEntry(random));
        codecErrorOrValue(() => decodeSnapshot(random));
      }),
      { numRuns: 3000, seed: 17 },
    );
  });

  it('refuses local message kinds, unknown versions, trailing bytes and oversized claims', () => {
    expect(() => encodeMessage(message(MessageType.Hup))).toThrow(TypeError);
    const good = encodeMessage(message(MessageType.Heartbeat, { to: 2n, from: 1n, term: 3 }));
    const badVersion = good.slice();
    badVersion[0] = 9;
    expect(() => decodeMessage(badVersion)).toThrow(/unsupported codec version/);
    const local = good.slice();
    local[1] = MessageType.Hup;
    expect(() => decodeMessage(local)).toThrow(/not a wire message/);
    expect(() => decodeMessage(new Uint8Array([...good, 0]))).toThrow(/trailing/);
    const huge = encodeMessage(message(MessageType.App, { to: 2n, from: 1n, entries: [{ term: 1, index: 1, type: 0, data: new Uint8Array(100) }] }));
    expect(() => decodeMessage(huge, { maxDataBytes: 10, maxSnapshotBytes: 10, maxEntries: 10, maxMembers: 10 })).toThrow(/exceeds the limit/);
    const manyEntries = good.slice();
    new DataView(manyEntries.buffer).setUint32(good.length - 4, 0xffffffff, true);
    expect(() => decodeMessage(manyEntries)).toThrow(CodecError);
  });

  it('keeps ids exact across the full uint64 range and rejects terms beyond 2^53 - 1', () => {
    const m = message(MessageType.Vote, { to: MAX_NODE_ID, from: 0x8e9e05c52164694dn, term: Number.MAX_SAFE_INTEGER });
    expect(decodeMessage(encodeMessage(m))).toEqual(m);
    const tooBig = encodeMessage(m);
    tooBig[2 + 16 + 7] = 0xff;
    expect(() => decodeMessage(tooBig)).toThrow(/exceeds 2\^53/);
  });
});
