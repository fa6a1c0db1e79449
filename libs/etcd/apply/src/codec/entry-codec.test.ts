import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { toHex, utf8 } from '@ward/shared/bytes';
import type { TxnRequest } from '@ward/etcd/kv-store';
import { ApplyError } from '../errors';
import { toPasswordHash } from '../password-hash';
import { Applier } from '../applier';
import type { ApplyOperation, ApplyRequest, UserAddRequest } from '../request';
import { b, fakeHash, put, range } from '../testing';
import { DEFAULT_MAX_ENTRY_BYTES, OPERATION_TAGS, decodeApplyRequest, encodeApplyRequest } from './entry-codec';
import { applyRequest } from './testing';

function decodeOutcome(bytes: Uint8Array): ApplyRequest | string {
  try {
    return decodeApplyRequest(bytes);
  } catch (error) {
    if (error instanceof ApplyError) return error.code;
    throw error;
  }
}

describe('entry codec', () => {
  it('round-trips every operation: decode(encode(x)) = x and encode(decode(b)) = b', () => {
    fc.assert(
      fc.property(applyRequest, (request) => {
        const bytes = encodeApplyRequest(request);
        const decoded = decodeApplyRequest(bytes);
        expect(decoded).toEqual(request);
        expect(encodeApplyRequest(decoded)).toEqual(bytes);
      }),
      { numRuns: 5000 },
    );
  });

  it('covers every operation tag', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(applyRequest, (request) => {
        seen.add(request.operation.type);
      }),
      { numRuns: 3000 },
    );
    expect([...seen].sort()).toEqual(Object.keys(OPERATION_TAGS).sort());
  });

  it('rejects random bytes and damaged entries with ApplyError only, and accepts only canonical bytes', () => {
    const damaged = applyRequest.chain((request) => {
      const bytes = encodeApplyRequest(request);
      return fc.oneof(
        fc.uint8Array({ maxLength: 64 }),
        fc.tuple(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 })).map(([at, flip]) => {
          const copy = bytes.slice();
          copy[at]! ^= flip;
          return copy;
        }),
        fc.nat(bytes.length - 1).map((length) => bytes.slice(0, length)),
        fc.uint8Array({ minLength: 1, maxLength: 4 }).map((tail) => Uint8Array.of(...bytes, ...tail)),
      );
    });
    fc.assert(
      fc.property(damaged, (bytes) => {
        const result = decodeOutcome(bytes);
        if (typeof result === 'string') expect(['ERR_APPLY_ENTRY_INVALID', 'ERR_APPLY_ENTRY_TOO_LARGE']).toContain(result);
        else expect(encodeApplyRequest(result)).toEqual(bytes);
      }),
      { numRuns: 5000 },
    );
  });

  it('refuses entries above the size limit on both sides', () => {
    const big: ApplyRequest = { header: { id: 1n, username: 'u', authRevision: 1 }, operation: { type: 'put', request: { key: utf8('k'), value: new Uint8Array(4096) } } };
    expect(() => encodeApplyRequest(big, { maxEntryBytes: 1024 })).toThrow(expect.objectContaining({ code: 'ERR_APPLY_ENTRY_TOO_LARGE' }));
    const bytes = encodeApplyRequest(big);
    expect(() => decodeApplyRequest(bytes, { maxEntryBytes: 1024 })).toThrow(expect.objectContaining({ code: 'ERR_APPLY_ENTRY_TOO_LARGE' }));
    expect(decodeOutcome(new Uint8Array(DEFAULT_MAX_ENTRY_BYTES + 1))).toBe('ERR_APPLY_ENTRY_TOO_LARGE');
  });

  it('bounds txn nesting: too deep to encode, too deep to decode (no stack overflow)', () => {
    let txn: TxnRequest = { compare: [], success: [], failure: [] };
    for (let depth = 0; depth < 300; depth++) txn = { compare: [], success: [{ type: 'txn', request: txn }], failure: [] };
    const request: ApplyRequest = { header: { id: 1n, username: '', authRevision: 0 }, operation: { type: 'txn', request: txn } };
    expect(() => encodeApplyRequest(request)).toThrow(TypeError);
    // Hand-made: header, txn tag, then 300 levels of "0 compares, 1 success op (txn), ..."
    const prefix = [0xe7, 1, 1, 0, 0, OPERATION_TAGS.txn];
    const level = [0, 1, 4];
    const deep = Uint8Array.from([...prefix, ...Array.from({ length: 300 }, () => level).flat(), 0, 0, 0]);
    expect(decodeOutcome(deep)).toBe('ERR_APPLY_ENTRY_INVALID');
  });

  it('keeps format version 1 stable (golden bytes)', () => {
    const request: ApplyRequest = {
      header: { id: 300n, username: 'root', authRevision: 7 },
      operation: { type: 'put', request: { key: utf8('foo'), value: utf8('bar'), lease: -1n, prevKv: true } },
    };
    expect(toHex(encodeApplyRequest(request))).toBe('e701ac0204726f6f740702' + '03666f6f' + '03626172' + '01' + '01');
  });
});

describe('decoded key-value requests are views of the entry', () => {
  const header = { id: 1n, username: '', authRevision: 0 };
  const entryOf = (operation: ApplyOperation): Buffer => Buffer.from(encodeApplyRequest({ header, operation }));

  it('shares the entry bytes, and the state applied from it does not change when the entry does', () => {
    const applier = Applier.create();
    const putEntry = entryOf(put('k', 'first'));
    const decoded = decodeApplyRequest(putEntry);
    if (decoded.operation.type !== 'put') throw new Error('not a put');
    expect(decoded.operation.request.value?.buffer).toBe(putEntry.buffer);
    expect(applier.apply(1, decoded).ok).toBe(true);
    putEntry.fill(0xff);

    // A txn compares against the value and writes another: its operands are views too.
    const txnEntry = entryOf({
      type: 'txn',
      request: { compare: [{ target: 'VALUE', result: 'EQUAL', key: b('k'), value: b('first') }], success: [{ type: 'put', request: { key: b('k'), value: b('second') } }], failure: [] },
    });
    const txn = decodeApplyRequest(txnEntry);
    const result = applier.apply(2, txn);
    expect(result.ok && result.result.type === 'txn' && result.result.response.succeeded).toBe(true);
    txnEntry.fill(0);

    const read = applier.read(decodeApplyRequest(entryOf(range('k'))));
    if (!read.ok || read.result.type !== 'range') throw new Error('range failed');
    expect(Buffer.from(read.result.response.kvs[0]!.key).toString()).toBe('k');
    expect(Buffer.from(read.result.response.kvs[0]!.value).toString()).toBe('second');
    expect(read.result.response.kvs[0]!.version).toBe(2);
  });
});

describe('no plaintext password can enter the log', () => {
  it('the types have no plaintext field and accept only a PasswordHash', () => {
    const ok: UserAddRequest = { name: 'u', passwordHash: fakeHash(1), noPassword: false };
    // @ts-expect-error a plaintext string is not a PasswordHash
    const plainString: UserAddRequest = { name: 'u', passwordHash: 'secret', noPassword: false };
    // @ts-expect-error raw bytes are not a PasswordHash either (only toPasswordHash brands them)
    const plainBytes: UserAddRequest = { name: 'u', passwordHash: utf8('secret'), noPassword: false };
    // @ts-expect-error there is no `password` field at all
    const plainField: UserAddRequest = { name: 'u', password: 'secret', passwordHash: null, noPassword: false };
    expect([ok, plainString, plainBytes, plainField]).toHaveLength(4);
  });

  it('toPasswordHash refuses anything but a bcrypt hash', () => {
    expect(() => toPasswordHash(utf8('secret'))).toThrow(TypeError);
    expect(() => toPasswordHash(utf8('$2b$04$' + 'x'.repeat(52)))).toThrow(TypeError); // one short
    expect(() => toPasswordHash(utf8('$2b$03$' + 'x'.repeat(53)))).toThrow(TypeError); // cost below 4
    expect(() => toPasswordHash(utf8('$2c$10$' + 'x'.repeat(53)))).toThrow(TypeError); // unknown variant
    expect(() => toPasswordHash(utf8('$2b$10$' + 'x'.repeat(52) + '!'))).toThrow(TypeError);
    expect(toPasswordHash(utf8('$2a$10$' + 'x'.repeat(53)))).toHaveLength(60);
  });

  it('toPasswordHash and the decoder copy: overwriting a Buffer input afterwards changes nothing', () => {
    const hash = fakeHash(5);
    const input = Buffer.from(hash);
    const branded = toPasswordHash(input);
    const entry = Buffer.from(encodeApplyRequest({ header: { id: 1n, username: 'root', authRevision: 1 }, operation: { type: 'userAdd', request: { name: 'u', passwordHash: hash, noPassword: false } } }));
    const decoded = decodeApplyRequest(entry);
    input.fill(0);
    entry.fill(0);
    expect(new Uint8Array(branded)).toEqual(new Uint8Array(hash));
    expect(decoded.operation.type === 'userAdd' ? new Uint8Array(decoded.operation.request.passwordHash ?? []) : undefined).toEqual(new Uint8Array(hash));
  });

  it('the encoder refuses a plaintext smuggled past the types, and the decoder refuses one written by hand', () => {
    const smuggled = {
      header: { id: 1n, username: 'root', authRevision: 1 },
      operation: { type: 'userAdd', request: { name: 'u', passwordHash: utf8('hunter2'), noPassword: false } },
    } as unknown as ApplyRequest;
    expect(() => encodeApplyRequest(smuggled)).toThrow(TypeError);
    // header (id 1, "root", rev 1), userAdd tag, name "u", noPassword 0, present 1, "hunter2"
    const handWritten = Uint8Array.from([0xe7, 1, 1, 4, ...utf8('root'), 1, OPERATION_TAGS.userAdd, 1, 0x75, 0, 1, 7, ...utf8('hunter2')]);
    expect(decodeOutcome(handWritten)).toBe('ERR_APPLY_ENTRY_INVALID');
    const withHash = encodeApplyRequest({ header: { id: 1n, username: 'root', authRevision: 1 }, operation: { type: 'userAdd', request: { name: 'u', passwordHash: fakeHash(5), noPassword: false } } });
    expect(decodeOutcome(withHash)).not.toBe('ERR_APPLY_ENTRY_INVALID');
  });
});
