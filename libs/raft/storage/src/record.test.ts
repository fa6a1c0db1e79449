import { describe, expect, it } from 'vitest';
import { ENTRY_PAYLOAD_HEADER_BYTES, HARD_STATE_PAYLOAD_BYTES, RecordType, decodeEntry, decodeHardState, encodeRecordPayload } from './record';

// The payloads are written byte by byte (no DataView over a fresh array); these pin them to the
// little-endian layout a DataView writes, with values that fill both 32-bit halves.

const BIG = 2 ** 52 + 0x1234_5678;

function reference(fields: readonly ['u64' | 'big64' | 'u8', number | bigint][]): Uint8Array {
  const bytes = new Uint8Array(fields.reduce((sum, [kind]) => sum + (kind === 'u8' ? 1 : 8), 0));
  const view = new DataView(bytes.buffer);
  let offset = 0;
  for (const [kind, value] of fields) {
    if (kind === 'u8') view.setUint8(offset++, Number(value));
    else {
      view.setBigUint64(offset, BigInt(value), true);
      offset += 8;
    }
  }
  return bytes;
}

describe('WAL record payloads', () => {
  it("writes an entry's header as u64 LE index and term and its type byte, and decodes it back", () => {
    const data = new Uint8Array([1, 2, 3]);
    const { type, payload, payloadTail } = encodeRecordPayload({ kind: 'entry', entry: { index: BIG, term: 0xffff_ffff + 2, type: 7, data } });
    expect(type).toBe(RecordType.Entry);
    expect(payload.length).toBe(ENTRY_PAYLOAD_HEADER_BYTES);
    expect(payload).toEqual(reference([['u64', BIG], ['u64', 0xffff_ffff + 2], ['u8', 7]]));
    expect(payloadTail).toBe(data);
    const joined = new Uint8Array([...payload, ...data]);
    expect(decodeEntry(joined)).toEqual({ ok: true, value: { index: BIG, term: 0xffff_ffff + 2, type: 7, data } });
  });

  it('writes a hard state with a vote that fills 64 bits, and decodes it back', () => {
    const hardState = { term: 0xffff_ffff, vote: 0xfedc_ba98_7654_3210n, commit: BIG };
    const { type, payload } = encodeRecordPayload({ kind: 'hardState', hardState });
    expect(type).toBe(RecordType.HardState);
    expect(payload.length).toBe(HARD_STATE_PAYLOAD_BYTES);
    expect(payload).toEqual(reference([['u64', 0xffff_ffff], ['big64', hardState.vote], ['u64', BIG]]));
    expect(decodeHardState(payload)).toEqual({ ok: true, value: hardState });
  });
});
