import { fromUtf8, utf8 } from '@ward/shared/bytes';
import { describe, expect, it } from 'vitest';
import { PasswordError, type PasswordVerifier } from '@ward/auth/password-jobs';
import { BcryptPasswordVerifier, EmbeddedPasswordPool } from './index';

/** An inner verifier whose calls finish only when the test says so (to observe the bounds). */
class GatedVerifier implements PasswordVerifier {
  readonly started: { password: string; finish: (ok: boolean) => void; fail: (error: unknown) => void }[] = [];
  hash(): Promise<Uint8Array> {
    return Promise.reject(new Error('unused'));
  }
  verify(password: Uint8Array): Promise<boolean> {
    return new Promise((resolve, reject) => this.started.push({ password: fromUtf8(password), finish: resolve, fail: reject }));
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const HASH = new Uint8Array(60);

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PasswordError) return error.code;
    throw error;
  }
  return undefined;
}

describe('EmbeddedPasswordPool', () => {
  it('runs at most maxConcurrent at once and starts queued work as slots free', async () => {
    const inner = new GatedVerifier();
    const pool = new EmbeddedPasswordPool(inner, { maxConcurrent: 2, maxQueued: 5, requestTimeoutMs: 10_000 });
    const results = ['a', 'b', 'c', 'd'].map((password) => pool.verify(utf8(password), HASH));
    await settle();
    expect(inner.started.map((s) => s.password)).toEqual(['a', 'b']);
    expect(pool.stats).toEqual({ running: 2, queued: 2 });
    inner.started[0]!.finish(true);
    await settle();
    expect(inner.started.map((s) => s.password)).toEqual(['a', 'b', 'c']);
    for (const started of inner.started.slice(1)) started.finish(false);
    await settle();
    inner.started[3]!.finish(true);
    expect(await Promise.all(results)).toEqual([true, false, false, true]);
    expect(pool.stats).toEqual({ running: 0, queued: 0 });
  });

  it('sheds load with TIER_BUSY once running and queued are full', async () => {
    const inner = new GatedVerifier();
    const pool = new EmbeddedPasswordPool(inner, { maxConcurrent: 1, maxQueued: 1, requestTimeoutMs: 10_000 });
    const first = pool.verify(utf8('a'), HASH);
    const second = pool.verify(utf8('b'), HASH);
    expect(await codeOf(pool.verify(utf8('c'), HASH))).toBe('ERR_AUTH_PASSWORD_TIER_BUSY');
    inner.started[0]!.finish(true);
    await settle();
    inner.started[1]!.finish(true);
    expect(await Promise.all([first, second])).toEqual([true, true]);
  });

  it('times out a queued request (it never starts) and a running one (which keeps its slot)', async () => {
    const inner = new GatedVerifier();
    const pool = new EmbeddedPasswordPool(inner, { maxConcurrent: 1, maxQueued: 1, requestTimeoutMs: 50 });
    const running = pool.verify(utf8('running'), HASH);
    const queued = pool.verify(utf8('queued'), HASH);
    expect(await codeOf(running)).toBe('ERR_AUTH_PASSWORD_TIER_TIMEOUT');
    expect(await codeOf(queued)).toBe('ERR_AUTH_PASSWORD_TIER_TIMEOUT');
    expect(inner.started.map((s) => s.password)).toEqual(['running']);
    expect(pool.stats).toEqual({ running: 1, queued: 0 });
    inner.started[0]!.finish(true); // the late answer is dropped, the slot freed
    await settle();
    expect(pool.stats).toEqual({ running: 0, queued: 0 });
  });

  it('passes the inner error through unchanged', async () => {
    const inner = new GatedVerifier();
    const pool = new EmbeddedPasswordPool(inner, { maxConcurrent: 1, maxQueued: 0, requestTimeoutMs: 10_000 });
    const result = pool.verify(utf8('a'), HASH);
    await settle();
    inner.started[0]!.fail(new PasswordError('ERR_AUTH_PASSWORD_HASH_MALFORMED'));
    expect(await codeOf(result)).toBe('ERR_AUTH_PASSWORD_HASH_MALFORMED');
  });

  it('close fails queued requests, waits for running ones, and refuses new ones', async () => {
    const inner = new GatedVerifier();
    const pool = new EmbeddedPasswordPool(inner, { maxConcurrent: 1, maxQueued: 2, requestTimeoutMs: 10_000 });
    const running = pool.verify(utf8('a'), HASH);
    const queued = pool.verify(utf8('b'), HASH);
    let closed = false;
    const closing = pool.close().then(() => (closed = true));
    expect(await codeOf(queued)).toBe('ERR_AUTH_PASSWORD_TIER_CLOSED');
    await settle();
    expect(closed).toBe(false);
    inner.started[0]!.finish(true);
    await closing;
    expect(await running).toBe(true);
    expect(await codeOf(pool.verify(utf8('c'), HASH))).toBe('ERR_AUTH_PASSWORD_TIER_CLOSED');
  });

  it('rejects invalid options', () => {
    const inner = new GatedVerifier();
    expect(() => new EmbeddedPasswordPool(inner, { maxConcurrent: 0, maxQueued: 1, requestTimeoutMs: 1 })).toThrow(TypeError);
    expect(() => new EmbeddedPasswordPool(inner, { maxConcurrent: 1, maxQueued: -1, requestTimeoutMs: 1 })).toThrow(TypeError);
    expect(() => new EmbeddedPasswordPool(inner, { maxConcurrent: 1, maxQueued: 1, requestTimeoutMs: 0 })).toThrow(TypeError);
  });

  it('hashes and verifies with real bcrypt through the pool', async () => {
    const pool = new EmbeddedPasswordPool(new BcryptPasswordVerifier({ cost: 4 }), { maxConcurrent: 2, maxQueued: 16, requestTimeoutMs: 30_000 });
    const passwords = Array.from({ length: 8 }, (_, i) => `password-${i}`);
    const hashes = await Promise.all(passwords.map((p) => pool.hash(utf8(p))));
    const checks = await Promise.all(passwords.flatMap((p, i) => [pool.verify(utf8(p), hashes[i]!), pool.verify(utf8(`${p}x`), hashes[i]!)]));
    expect(checks).toEqual(passwords.flatMap(() => [true, false]));
    await pool.close();
  });
});
