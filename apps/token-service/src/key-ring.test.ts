// The rotation schedule on a manual clock: a key is published a period before it signs, signs for
// one period, and leaves the set once every token it signed has expired (ttl + tolerance later).
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { KeyRing } from './key-ring';

const PERIOD_MS = 10_000;
const TTL_MS = 15_000;
const TOLERANCE_MS = 1_000;

async function ring(clock: ManualClock): Promise<KeyRing> {
  return KeyRing.create({ signMethod: 'EdDSA', clock, ttlMs: TTL_MS, clockToleranceMs: TOLERANCE_MS, periodMs: PERIOD_MS });
}

describe('KeyRing', () => {
  it('publishes the next key before it signs, and rotates at the period boundary', async () => {
    const clock = new ManualClock(1_000_000);
    const keys = await ring(clock);
    const first = await keys.signingKey();
    expect(keys.published().map((k) => k.keyId)).toHaveLength(2);
    const next = keys.published().find((k) => k.keyId !== first.keyId)!;
    expect(next.notBeforeMs).toBe(first.signUntilMs);
    clock.advance(PERIOD_MS - 1);
    expect((await keys.signingKey()).keyId).toBe(first.keyId);
    clock.advance(1);
    expect((await keys.signingKey()).keyId).toBe(next.keyId);
    // A third key is published ahead again, the first still verifies.
    expect(keys.published().map((k) => k.keyId)).toEqual([first.keyId, next.keyId, expect.any(String)]);
  });

  it('keeps a key until its last token expired (+ tolerance), then drops it', async () => {
    const clock = new ManualClock(2_000_000);
    const keys = await ring(clock);
    const first = await keys.signingKey();
    expect(first.retireAfterMs).toBe(first.signUntilMs + TTL_MS + TOLERANCE_MS);
    clock.advance(PERIOD_MS + TTL_MS + TOLERANCE_MS - 1);
    await keys.maintain();
    expect(keys.published().some((k) => k.keyId === first.keyId)).toBe(true);
    clock.advance(1);
    await keys.maintain();
    expect(keys.published().some((k) => k.keyId === first.keyId)).toBe(false);
  });

  it('the JWKS holds public halves only', async () => {
    const keys = await ring(new ManualClock(3_000_000));
    for (const jwk of keys.jwks().keys) {
      expect(jwk).not.toHaveProperty('d');
      expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    }
  });

  it('a revoked key leaves the set at once and another one signs', async () => {
    const clock = new ManualClock(4_000_000);
    const keys = await ring(clock);
    const first = await keys.signingKey();
    expect(await keys.revoke(first.keyId)).toBe(true);
    expect(keys.published().some((k) => k.keyId === first.keyId)).toBe(false);
    expect((await keys.signingKey()).keyId).not.toBe(first.keyId);
    expect(await keys.revoke('no-such-key')).toBe(false);
  });

  it('after a stall longer than a period, signs with a fresh key rather than an outdated one', async () => {
    const clock = new ManualClock(5_000_000);
    const keys = await ring(clock);
    clock.advance(5 * PERIOD_MS);
    const current = await keys.signingKey();
    expect(current.notBeforeMs).toBeLessThanOrEqual(clock.nowMs());
    expect(current.signUntilMs).toBeGreaterThan(clock.nowMs());
  });
});
