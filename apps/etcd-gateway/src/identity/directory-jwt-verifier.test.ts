// The directory-backed verifier on a manual clock: tokens of published keys verify within their
// window and with the right iss/aud; unknown kids cannot make it read the directory more than once
// per interval; a token newer than the cache always gets a fresh read (the revocation guarantee).
import { describe, expect, it } from 'vitest';
import { generateJwtKeyPem, loadJwtKey, signIssuedToken, type JwtKey } from '@ward/auth/tokens';
import type { SigningKeyRecord } from '@ward/etcd/apply';
import { createLogger } from '@ward/platform/logging';
import { ManualClock } from '@ward/shared/clock';
import { DirectoryJwtVerifier, type SigningKeyDirectoryRead } from './directory-jwt-verifier';

const NOW_MS = 1_700_000_000_000;
const nowSeconds = NOW_MS / 1000;

async function signer(keyId: string): Promise<{ key: JwtKey; record: SigningKeyRecord }> {
  const key = await loadJwtKey({ signMethod: 'EdDSA', privateKeyPem: generateJwtKeyPem('EdDSA').privateKeyPem, keyId });
  return { key, record: { keyId, alg: 'EdDSA', publicJwk: JSON.stringify(key.publicJwk), notBeforeSeconds: nowSeconds - 10, retireAfterSeconds: nowSeconds + 100 } };
}

function token(key: JwtKey, overrides: { revision?: number; issuer?: string; audience?: string; kid?: string } = {}): Promise<string> {
  const withKid = overrides.kid === undefined ? key : { ...key, keyId: overrides.kid };
  return signIssuedToken(withKid, {
    username: 'alice',
    revision: overrides.revision ?? 5,
    issuer: overrides.issuer ?? 'ward-token-service',
    audience: overrides.audience ?? 'ward',
    issuedAtSeconds: nowSeconds,
    expiresAtSeconds: nowSeconds + 60,
    jwtId: 'j',
  });
}

function verifier(clock: ManualClock, directory: { current: SigningKeyDirectoryRead }): DirectoryJwtVerifier {
  return new DirectoryJwtVerifier({
    readDirectory: async () => directory.current,
    clock,
    logger: createLogger({ name: 'test', level: 'silent' }),
    issuer: 'ward-token-service',
    audience: 'ward',
    clockToleranceSeconds: 0,
    maxLifetimeSeconds: 3600,
    minRefreshIntervalMs: 1000,
    maxAgeMs: 60_000,
  });
}

describe('DirectoryJwtVerifier', () => {
  it('verifies a published key’s token, refuses wrong iss/aud and keys outside their window', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = await signer('a');
    const v = verifier(clock, { current: { keys: [a.record], authRevision: 5 } });
    expect(await v.verify(await token(a.key))).toEqual({ username: 'alice', authRevision: 5, cached: false });
    expect(await v.verify(await token(a.key, { issuer: 'someone-else' }))).toBeUndefined();
    expect(await v.verify(await token(a.key, { audience: 'other' }))).toBeUndefined();
    clock.advance(101_000);
    expect(await v.verify(await token(a.key))).toBeUndefined();
  });

  it('unknown kids: one shared directory read per interval, however many arrive', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = await signer('a');
    const v = verifier(clock, { current: { keys: [a.record], authRevision: 5 } });
    await v.verify(await token(a.key));
    const reads = v.readsCount;
    const garbage = await Promise.all(Array.from({ length: 200 }, (_, i) => token(a.key, { kid: `garbage-${i}` })));
    expect(await Promise.all(garbage.map((t) => v.verify(t)))).toEqual(garbage.map(() => undefined));
    expect(v.readsCount - reads).toBe(1);
  });

  it('a key whose window moved since the last read is accepted even right after that read', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = await signer('a');
    const b = await signer('b');
    const later = { ...b.record, notBeforeSeconds: nowSeconds + 3600 };
    const directory = { current: { keys: [a.record, later], authRevision: 5 } as SigningKeyDirectoryRead };
    const v = verifier(clock, directory);
    await v.verify(await token(a.key));
    // b's replica lost its signing key: b signs from now, re-published with its new window.
    directory.current = { keys: [a.record, b.record], authRevision: 5 };
    expect(await v.verify(await token(b.key))).toMatchObject({ username: 'alice' });
  });

  it('a kid no key can have (oversized, injected) is refused without any directory read', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = await signer('a');
    const v = verifier(clock, { current: { keys: [a.record], authRevision: 5 } });
    await v.verify(await token(a.key));
    const reads = v.readsCount;
    clock.advance(5000);
    for (const kid of ['k'.repeat(65), '../../etc/passwd', "x' OR '1'='1"]) expect(await v.verify(await token(a.key, { kid }))).toBeUndefined();
    expect(v.readsCount).toBe(reads);
  });

  it('a key published after the cache was read is found (unknown kid → read)', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = await signer('a');
    const b = await signer('b');
    const directory = { current: { keys: [a.record], authRevision: 5 } as SigningKeyDirectoryRead };
    const v = verifier(clock, directory);
    await v.verify(await token(a.key));
    directory.current = { keys: [a.record, b.record], authRevision: 5 };
    clock.advance(1000);
    expect(await v.verify(await token(b.key))).toMatchObject({ username: 'alice' });
  });

  it('a token newer than the cache is never verified from it: a revoked key is refused at once', async () => {
    const clock = new ManualClock(NOW_MS);
    const a = await signer('a');
    const directory = { current: { keys: [a.record], authRevision: 5 } as SigningKeyDirectoryRead };
    const v = verifier(clock, directory);
    expect(await v.verify(await token(a.key))).toBeDefined();
    // Revocation: the key leaves, the revision moves to 6. A token minted with the stolen key at 6:
    directory.current = { keys: [], authRevision: 6 };
    expect(await v.verify(await token(a.key, { revision: 6 }))).toBeUndefined();
  });
});
