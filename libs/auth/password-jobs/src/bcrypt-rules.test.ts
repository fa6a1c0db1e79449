import { describe, expect, it } from 'vitest';
import { utf8 } from '@ward/shared/bytes';
import { hasCode } from '@ward/shared/errors';
import {
  PasswordError,
  assertBcryptCost,
  bcryptHashCost,
  checkedBcryptHash,
  isBcryptCost,
  passwordBytesForHashing,
  passwordBytesForVerifying,
} from './index';

// A syntactically valid `$2a$` hash (Go's x/crypto, which etcd uses, writes version 2a), cost 10.
const SAMPLE_HASH = '$2a$10$Qj6zJtXGZcQe5Zv2D7TQ1.gUgYc0wqWx8fS9pLx3nQ1k6ZKq0y2aC';

describe('bcrypt cost bounds', () => {
  it.each([4, 10, 31])('accepts %i', (cost) => {
    expect(isBcryptCost(cost)).toBe(true);
    expect(() => assertBcryptCost(cost, 'test')).not.toThrow();
  });
  it.each([3, 32, 0, -10, 10.5, Number.NaN])('rejects %s instead of falling back to 10', (cost) => {
    expect(isBcryptCost(cost)).toBe(false);
    expect(() => assertBcryptCost(cost, 'test')).toThrow(TypeError);
  });
});

describe('bcryptHashCost', () => {
  it('reads the cost of 2a/2b/2y hashes', () => {
    expect(bcryptHashCost(utf8(SAMPLE_HASH))).toBe(10);
    expect(bcryptHashCost(utf8(SAMPLE_HASH.replace('$2a$10$', '$2b$04$')))).toBe(4);
    expect(bcryptHashCost(utf8(SAMPLE_HASH.replace('$2a$10$', '$2y$31$')))).toBe(31);
    expect(checkedBcryptHash(utf8(SAMPLE_HASH))).toBe(SAMPLE_HASH);
  });
  it.each([
    ['empty', ''],
    ['truncated', SAMPLE_HASH.slice(0, 59)],
    ['extended', `${SAMPLE_HASH}x`],
    ['2x version', SAMPLE_HASH.replace('$2a$', '$2x$')],
    ['cost 03', SAMPLE_HASH.replace('$10$', '$03$')],
    ['cost 32', SAMPLE_HASH.replace('$10$', '$32$')],
    ['bad alphabet', SAMPLE_HASH.slice(0, 59) + '+'],
    ['argon2', '$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA'],
  ])('rejects %s', (_name, text) => {
    expect(bcryptHashCost(utf8(text))).toBeUndefined();
    expect(() => checkedBcryptHash(utf8(text))).toThrow(PasswordError);
  });
  it('rejects non-ASCII bytes', () => {
    const bytes = utf8(SAMPLE_HASH);
    bytes[20] = 0xc3;
    expect(bcryptHashCost(bytes)).toBeUndefined();
  });
});

describe('the 72-byte rule', () => {
  it('hashing: up to 72 bytes passes, 73 fails with etcd text and the TOO_LONG code', () => {
    expect(passwordBytesForHashing(utf8('x'.repeat(72))).length).toBe(72);
    expect(passwordBytesForHashing(utf8('')).length).toBe(0);
    let caught: unknown;
    try {
      passwordBytesForHashing(utf8('x'.repeat(73)));
    } catch (error) {
      caught = error;
    }
    expect(hasCode(caught, 'ERR_AUTH_PASSWORD_TOO_LONG')).toBe(true);
    expect((caught as Error).message).toBe('bcrypt: password length exceeds 72 bytes');
    expect((caught as PasswordError).limit).toBe(72);
  });

  it('counts bytes, not characters: 25 three-byte characters (75 bytes) are too long', () => {
    expect(() => passwordBytesForHashing(utf8('€'.repeat(24)))).not.toThrow();
    expect(() => passwordBytesForHashing(utf8('€'.repeat(25)))).toThrow(PasswordError);
  });

  it("verifying: only the first 72 bytes count, as in Go's CompareHashAndPassword", () => {
    const long = 'a'.repeat(72) + 'tail that bcrypt never reads';
    expect(passwordBytesForVerifying(utf8(long))).toEqual(utf8('a'.repeat(72)));
    expect(passwordBytesForVerifying(utf8('short'))).toEqual(utf8('short'));
    expect(passwordBytesForVerifying(utf8('€'.repeat(25))).length).toBe(72);
  });

  it('takes any bytes (invalid UTF-8, NUL) and never changes the caller\'s bytes', () => {
    const password = Uint8Array.of(0x41, 0xff, 0xfe, 0x80, 0x00, 0xc3, 0x42, 0x9f, 0xa0);
    const forHashing = passwordBytesForHashing(password);
    expect(forHashing).toEqual(password);
    forHashing.fill(0);
    expect(password[0]).toBe(0x41);
    const long = new Uint8Array(80).fill(0xff);
    expect(passwordBytesForVerifying(long)).toEqual(new Uint8Array(72).fill(0xff));
    expect(long).toEqual(new Uint8Array(80).fill(0xff));
    expect(() => passwordBytesForHashing(long)).toThrow(PasswordError);
    expect(long).toEqual(new Uint8Array(80).fill(0xff));
  });

  it('72 bytes of invalid UTF-8 are 72 bytes (not 216 after U+FFFD replacement)', () => {
    expect(passwordBytesForHashing(new Uint8Array(72).fill(0x80)).length).toBe(72);
  });
});
