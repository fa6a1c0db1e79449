// The encodings of membership changes (the data of ConfChange and ConfChangeV2 entries): pinned
// byte layouts, exact round trips, and CodecError (never anything else) on malformed input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecError } from '../errors';
import { MAX_NODE_ID } from '../ids';
import type { ConfChange, ConfChangeV2 } from '../confchange/conf-change';
import { ConfChangeTransition, ConfChangeType } from '../confchange/conf-change';
import { EntryType } from '../types';
import { decodeConfChange, decodeConfChangeEntry, decodeConfChangeV2, decodeEntry, encodeConfChange, encodeConfChangeV2, encodeEntry } from './codec';

const nodeId = fc.oneof(fc.bigInt({ min: 1n, max: MAX_NODE_ID }), fc.constant(0n));
const changeType = fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<ConfChange['type']>;
const bytes = fc.uint8Array({ maxLength: 32 });
const ccArb: fc.Arbitrary<ConfChange> = fc.record({ type: changeType, nodeId, context: bytes });
const cc2Arb: fc.Arbitrary<ConfChangeV2> = fc.record({
  transition: fc.constantFrom(0, 1, 2) as fc.Arbitrary<ConfChangeV2['transition']>,
  changes: fc.array(fc.record({ type: changeType, nodeId }), { maxLength: 6 }),
  context: bytes,
});

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('membership change codec', () => {
  it('pins the ConfChange layout: version, type, node id (u64 LE), context', () => {
    const cc: ConfChange = { type: ConfChangeType.AddLearnerNode, nodeId: 0x0102030405060708n, context: Uint8Array.of(0xaa, 0xbb) };
    expect(hex(encodeConfChange(cc))).toBe('01' + '03' + '0807060504030201' + '02000000' + 'aabb');
  });

  it('pins the ConfChangeV2 layout: version, transition, count, (type, id) per change, context', () => {
    const cc: ConfChangeV2 = {
      transition: ConfChangeTransition.JointExplicit,
      changes: [
        { type: ConfChangeType.AddNode, nodeId: 4n },
        { type: ConfChangeType.RemoveNode, nodeId: 3n },
      ],
      context: new Uint8Array(0),
    };
    expect(hex(encodeConfChangeV2(cc))).toBe('01' + '02' + '02000000' + '00' + '0400000000000000' + '01' + '0300000000000000' + '00000000');
  });

  it('round-trips exactly, and through a log entry of either type as a ConfChangeV2', () => {
    fc.assert(
      fc.property(ccArb, cc2Arb, (cc, cc2) => {
        expect(decodeConfChange(encodeConfChange(cc))).toEqual(cc);
        expect(decodeConfChangeV2(encodeConfChangeV2(cc2))).toEqual(cc2);
        const e1 = decodeEntry(encodeEntry({ term: 2, index: 9, type: EntryType.ConfChange, data: encodeConfChange(cc) }));
        expect(decodeConfChangeEntry(e1)).toEqual({ transition: ConfChangeTransition.Auto, changes: [{ type: cc.type, nodeId: cc.nodeId }], context: cc.context });
        const e2 = decodeEntry(encodeEntry({ term: 2, index: 9, type: EntryType.ConfChangeV2, data: encodeConfChangeV2(cc2) }));
        expect(decodeConfChangeEntry(e2)).toEqual(cc2);
      }),
      { numRuns: 500, seed: 19 },
    );
  });

  it('refuses unknown versions, types, transitions, oversized change lists and trailing bytes', () => {
    const good = encodeConfChange({ type: ConfChangeType.AddNode, nodeId: 2n, context: new Uint8Array(0) });
    expect(() => decodeConfChange(Uint8Array.of(2, ...good.subarray(1)))).toThrow(/unsupported codec version/);
    expect(() => decodeConfChange(Uint8Array.of(1, 4, ...good.subarray(2)))).toThrow(/unknown change type 4/);
    expect(() => decodeConfChange(Uint8Array.of(...good, 0))).toThrow(/trailing/);
    const v2 = encodeConfChangeV2({ transition: ConfChangeTransition.Auto, changes: [], context: new Uint8Array(0) });
    expect(() => decodeConfChangeV2(Uint8Array.of(1, 3, ...v2.subarray(2)))).toThrow(/unknown transition 3/);
    const many = v2.slice();
    new DataView(many.buffer).setUint32(2, 65, true);
    expect(() => decodeConfChangeV2(many)).toThrow(CodecError);
    expect(() => decodeConfChangeEntry({ term: 1, index: 1, type: EntryType.Normal, data: good })).toThrow(TypeError);
  });

  it('never fails with anything but a CodecError on truncated, flipped or random input', () => {
    fc.assert(
      fc.property(cc2Arb, fc.nat(), fc.nat({ max: 7 }), fc.uint8Array({ maxLength: 80 }), (cc, at, bit, random) => {
        const encoded = encodeConfChangeV2(cc);
        const flipped = encoded.slice();
        flipped[at % encoded.length]! ^= 1 << bit;
        for (const input of [encoded.subarray(0, at % (encoded.length + 1)), flipped, random]) {
          for (const decode of [decodeConfChange, decodeConfChangeV2]) {
            try {
              decode(input);
            } catch (error) {
              expect(error).toBeInstanceOf(CodecError);
            }
          }
        }
      }),
      { numRuns: 2000, seed: 23 },
    );
  });
});
