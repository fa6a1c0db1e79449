import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { hasCode } from '@ward/shared/errors';
import { PasswordError, bcryptHashCost } from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier } from './index';

// Openwall crypt_blowfish known answers (the reference implementation's own test vectors), in the
// `$2a$` version Go's x/crypto (and so etcd) writes.
const VECTORS: readonly [string, string][] = [
  ['U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
  ['U*U*', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK'],
  ['U*U*U', '$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a'],
  ['', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
  [
    '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored',
    '$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui',
  ],
];

async function codeOf(run: () => Promise<unknown>): Promise<{ code?: string; reason?: string; message?: string }> {
  try {
    await run();
  } catch (error) {
    if (error instanceof PasswordError) return { code: error.code, reason: error.reason, message: error.message };
    throw error;
  }
  return {};
}

describe('BcryptPasswordVerifier: compatibility', () => {
  const verifier = new BcryptPasswordVerifier({ cost: 4 });

  it.each(VECTORS)('verifies the known answer for %j and rejects a one-character change', async (password, hash) => {
    expect(await verifier.verify(utf8(password), utf8(hash))).toBe(true);
    expect(await verifier.verify(utf8(`!${password.slice(1)}`), utf8(hash))).toBe(false);
  });

  it('hashes to a 60-byte $2b$ hash at the configured cost with a fresh salt each time', async () => {
    const first = await verifier.hash(utf8('correct horse'));
    const second = await verifier.hash(utf8('correct horse'));
    expect(first.length).toBe(60);
    expect(fromUtf8(first)).toMatch(/^\$2b\$04\$/);
    expect(bcryptHashCost(first)).toBe(4);
    expect(first).not.toEqual(second);
    expect(await verifier.verify(utf8('correct horse'), first)).toBe(true);
    expect(await verifier.verify(utf8('correct horsf'), first)).toBe(false);
  });

  it('handles the empty password: it matches only bcrypt("") (etcd: works only if stored so)', async () => {
    const hash = await verifier.hash(utf8(''));
    expect(await verifier.verify(utf8(''), hash)).toBe(true);
    expect(await verifier.verify(utf8(' '), hash)).toBe(false);
  });

  it('treats passwords as bytes: NUL and non-ASCII characters count', async () => {
    const hash = await verifier.hash(utf8('a\u0000b'));
    expect(await verifier.verify(utf8('a'), hash)).toBe(false);
    expect(await verifier.verify(utf8('a\u0000c'), hash)).toBe(false);
    expect(await verifier.verify(utf8('a\u0000b'), hash)).toBe(true);
    const unicode = await verifier.hash(utf8('пароль🔑'));
    expect(await verifier.verify(utf8('пароль🔑'), unicode)).toBe(true);
    expect(await verifier.verify(utf8('пароль'), unicode)).toBe(false);
  });

  it('byte API: hashes and verifies bytes that are not valid UTF-8', async () => {
    const password = Uint8Array.of(0xff, 0xfe, 0x00, 0xc3);
    const hash = await verifier.hashBytes(password.slice());
    expect(await verifier.verifyBytes(password.slice(), hash)).toBe(true);
    expect(await verifier.verifyBytes(Uint8Array.of(0xff, 0xfe, 0x00), hash)).toBe(false);
  });

  it('hashes the exact bytes: invalid UTF-8 is not folded into U+FFFD, and the caller keeps its bytes', async () => {
    const password = Uint8Array.of(0x41, 0xff, 0xfe, 0x80, 0xc3, 0x42, 0x9f, 0xa0);
    const hash = await verifier.hash(password);
    expect(password).toEqual(Uint8Array.of(0x41, 0xff, 0xfe, 0x80, 0xc3, 0x42, 0x9f, 0xa0));
    expect(await verifier.verify(password, hash)).toBe(true);
    expect(await verifier.verify(Uint8Array.of(0x41, 0x80, 0x80, 0x80, 0xc3, 0x42, 0xbf, 0xbf), hash)).toBe(false);
    expect(await verifier.verify(utf8(new TextDecoder().decode(password)), hash)).toBe(false);
    // A long password is cut on a copy: verifying it twice gives the same answer.
    const long = new Uint8Array(80).fill(0xfe);
    const longHash = await verifier.hash(long.subarray(0, 72));
    expect(await verifier.verify(long, longHash)).toBe(true);
    expect(await verifier.verify(long, longHash)).toBe(true);
  });
});

describe('BcryptPasswordVerifier: the 72-byte limit as etcd has it', () => {
  const verifier = new BcryptPasswordVerifier({ cost: 4 });

  it('refuses to hash 73 bytes with the TOO_LONG code and bcrypt text; 72 bytes are fine', async () => {
    expect(await codeOf(() => verifier.hash(utf8('x'.repeat(73))))).toEqual({
      code: 'ERR_AUTH_PASSWORD_TOO_LONG',
      reason: undefined,
      message: 'bcrypt: password length exceeds 72 bytes',
    });
    expect((await codeOf(() => verifier.hashBytes(new Uint8Array(73)))).code).toBe('ERR_AUTH_PASSWORD_TOO_LONG');
    expect(bcryptHashCost(await verifier.hash(utf8('x'.repeat(72))))).toBe(4);
  });

  it('verifies like Go: an 80-byte password matches a hash of its 72-byte prefix (3.4-era users)', async () => {
    const prefix = 'p'.repeat(72);
    const hash = await verifier.hash(utf8(prefix));
    expect(await verifier.verify(utf8(`${prefix}EXTRA!!!`), hash)).toBe(true);
    expect(await verifier.verify(utf8(`${'q'.repeat(72)}EXTRA!!!`), hash)).toBe(false);
  });
});

describe('BcryptPasswordVerifier: validation', () => {
  it.each([3, 32, 0, 10.5, Number.NaN])('refuses cost %s at construction (no fallback to 10)', (cost) => {
    expect(() => new BcryptPasswordVerifier({ cost })).toThrow(TypeError);
  });

  it('defaults to etcd: cost 10, and refuses a verify limit below the cost', () => {
    expect(new BcryptPasswordVerifier().cost).toBe(10);
    expect(() => new BcryptPasswordVerifier({ cost: 12, maxVerifyCost: 11 })).toThrow(TypeError);
  });

  it('rejects a stored hash that is not bcrypt with HASH_MALFORMED', async () => {
    const verifier = new BcryptPasswordVerifier({ cost: 4 });
    for (const bad of ['', 'plaintext-password', '$2a$05$short', VECTORS[0]![1].replace('$2a$', '$2x$')]) {
      expect((await codeOf(() => verifier.verify(utf8('U*U'), utf8(bad)))).code).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED');
    }
  });

  it('refuses a stored hash above maxVerifyCost at once instead of spending minutes on it', async () => {
    const verifier = new BcryptPasswordVerifier({ cost: 4, maxVerifyCost: 12 });
    const startedMs = performance.now();
    const outcome = await codeOf(() => verifier.verify(utf8('x'), utf8(VECTORS[0]![1].replace('$05$', '$31$'))));
    expect(outcome.code).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED');
    expect(outcome.reason).toBe('cost-above-limit');
    expect(performance.now() - startedMs).toBeLessThan(1000);
  });
});

describe('BcryptPasswordVerifier: runs off the event loop', () => {
  it('keeps timers firing while a cost-12 hash runs on the libuv threadpool', async () => {
    const verifier = new BcryptPasswordVerifier({ cost: 12 });
    let ticks = 0;
    const interval = setInterval(() => (ticks += 1), 5);
    const startedMs = performance.now();
    try {
      await verifier.hash(utf8('event loop stays free'));
    } finally {
      clearInterval(interval);
    }
    const elapsedMs = performance.now() - startedMs;
    // A synchronous hash would allow no tick at all; allow generous scheduling slack on a busy machine.
    expect(ticks).toBeGreaterThanOrEqual(Math.min(5, Math.floor(elapsedMs / 50)));
    expect(ticks).toBeGreaterThan(0);
  });
});

describe('error codes', () => {
  it('are PasswordError instances recognisable by code', async () => {
    const verifier = new BcryptPasswordVerifier({ cost: 4 });
    await expect(verifier.hash(utf8('y'.repeat(100)))).rejects.toSatisfy((error: unknown) => hasCode(error, 'ERR_AUTH_PASSWORD_TOO_LONG'));
  });
});
