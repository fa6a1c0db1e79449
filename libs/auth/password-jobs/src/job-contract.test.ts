import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import {
  PASSWORD_ERROR_CODES,
  PLAINTEXT_BYTES,
  PasswordError,
  base64UrlLength,
  checkRequestEnvelope,
  checkResultEnvelope,
  decodeRequestPlaintext,
  decodeResultPlaintext,
  encodeRequestPlaintext,
  encodeResultPlaintext,
  sealAssociatedData,
} from './index';

const HASH = utf8('$2b$10$Qj6zJtXGZcQe5Zv2D7TQ1.gUgYc0wqWx8fS9pLx3nQ1k6ZKq0y2aC');
const b64 = (bytes: number): string => 'A'.repeat(base64UrlLength(bytes));

const request = {
  v: 1,
  requestId: b64(16),
  keyId: 'k1',
  deadlineMs: 1_700_000_000_000,
  nonce: b64(12),
  sealed: b64(PLAINTEXT_BYTES.verify.request + 16),
};

describe('checkRequestEnvelope', () => {
  it('accepts a well-formed verify and hash envelope', () => {
    expect(checkRequestEnvelope('verify', request).ok).toBe(true);
    expect(checkRequestEnvelope('hash', { ...request, sealed: b64(PLAINTEXT_BYTES.hash.request + 16) }).ok).toBe(true);
  });

  it.each([
    ['unknown job name', 'rehash', request],
    ['non-object data', 'verify', 'hello'],
    ['array data', 'verify', []],
    ['null data', 'verify', null],
    ['a plaintext password field', 'verify', { ...request, password: 'hunter2' }],
    ['a missing field', 'verify', { ...request, nonce: undefined }],
    ['version 2', 'verify', { ...request, v: 2 }],
    ['version as string', 'verify', { ...request, v: '1' }],
    ['short requestId', 'verify', { ...request, requestId: 'abc' }],
    ['requestId with padding', 'verify', { ...request, requestId: `${b64(16).slice(0, -2)}==` }],
    ['keyId with a space', 'verify', { ...request, keyId: 'k 1' }],
    ['keyId too long', 'verify', { ...request, keyId: 'k'.repeat(33) }],
    ['fractional deadline', 'verify', { ...request, deadlineMs: 1.5 }],
    ['deadline as string', 'verify', { ...request, deadlineMs: '1700000000000' }],
    ['nonce of 16 bytes', 'verify', { ...request, nonce: b64(16) }],
    ['sealed of the hash size on a verify job', 'verify', { ...request, sealed: b64(PLAINTEXT_BYTES.hash.request + 16) }],
    ['sealed with a non-base64url character', 'verify', { ...request, sealed: `${request.sealed.slice(0, -1)}+` }],
    ['oversized sealed', 'verify', { ...request, sealed: 'A'.repeat(1_000_000) }],
  ])('rejects %s', (_name, name, data) => {
    const checked = checkRequestEnvelope(name, data);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problem).not.toContain('hunter2');
  });
});

describe('checkResultEnvelope', () => {
  const result = { v: 1, requestId: b64(16), keyId: 'k1', nonce: b64(12), sealed: b64(1 + 16) };
  it('accepts a verify result and rejects one with a deadline or a clear match flag', () => {
    expect(checkResultEnvelope('verify', result).ok).toBe(true);
    expect(checkResultEnvelope('verify', { ...result, deadlineMs: 1 }).ok).toBe(false);
    expect(checkResultEnvelope('verify', { ...result, match: true }).ok).toBe(false);
    expect(checkResultEnvelope('hash', result).ok).toBe(false);
  });
});

describe('plaintext layouts', () => {
  it('have a fixed size whatever the password length', () => {
    const short = encodeRequestPlaintext({ name: 'verify', password: utf8('a'), hash: HASH });
    const long = encodeRequestPlaintext({ name: 'verify', password: utf8('a'.repeat(72)), hash: HASH });
    expect(short.length).toBe(long.length);
    expect(encodeRequestPlaintext({ name: 'hash', password: new Uint8Array(0) }).length).toBe(PLAINTEXT_BYTES.hash.request);
  });

  it('round-trip requests and results, binary passwords included', () => {
    const password = Uint8Array.of(0, 1, 2, 0xff, 0);
    expect(decodeRequestPlaintext('verify', encodeRequestPlaintext({ name: 'verify', password, hash: HASH }))).toEqual({
      ok: true,
      value: { name: 'verify', password, hash: HASH },
    });
    expect(decodeRequestPlaintext('hash', encodeRequestPlaintext({ name: 'hash', password }))).toEqual({ ok: true, value: { name: 'hash', password } });
    expect(decodeResultPlaintext('verify', encodeResultPlaintext({ name: 'verify', match: true }))).toEqual({ ok: true, value: { name: 'verify', match: true } });
    expect(decodeResultPlaintext('hash', encodeResultPlaintext({ name: 'hash', hash: HASH }))).toEqual({ ok: true, value: { name: 'hash', hash: HASH } });
  });

  it('reject non-canonical plaintexts', () => {
    const bytes = encodeRequestPlaintext({ name: 'hash', password: utf8('abc') });
    bytes[10] = 7; // non-zero padding
    expect(decodeRequestPlaintext('hash', bytes).ok).toBe(false);
    const tooLong = encodeRequestPlaintext({ name: 'hash', password: utf8('abc') });
    tooLong[0] = 73;
    expect(decodeRequestPlaintext('hash', tooLong).ok).toBe(false);
    expect(decodeRequestPlaintext('hash', new Uint8Array(5)).ok).toBe(false);
    const badHash = encodeRequestPlaintext({ name: 'verify', password: utf8('abc'), hash: HASH });
    badHash[1 + 72] = 0x41;
    expect(decodeRequestPlaintext('verify', badHash).ok).toBe(false);
    expect(decodeResultPlaintext('verify', Uint8Array.of(2)).ok).toBe(false);
    expect(decodeResultPlaintext('hash', new Uint8Array(60)).ok).toBe(false);
  });
});

describe('sealAssociatedData', () => {
  it('differs in every bound field', () => {
    const base = { direction: 'request' as const, name: 'verify' as const, requestId: 'r', keyId: 'k', deadlineMs: 5 };
    const variants = [
      base,
      { ...base, direction: 'result' as const },
      { ...base, name: 'hash' as const },
      { ...base, requestId: 'r2' },
      { ...base, keyId: 'k2' },
      { ...base, deadlineMs: 6 },
    ].map(sealAssociatedData);
    expect(new Set(variants).size).toBe(variants.length);
  });
});

describe('PasswordError', () => {
  it('has a fixed message per code and carries no secret', () => {
    for (const code of PASSWORD_ERROR_CODES) {
      const error = new PasswordError(code, { reason: 'expired' });
      expect(error.code).toBe(code);
      expect(error.name).toBe('PasswordError');
      expect(error.message.length).toBeGreaterThan(0);
    }
  });
});
