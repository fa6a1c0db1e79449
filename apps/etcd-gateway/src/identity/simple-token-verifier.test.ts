import { describe, expect, it } from 'vitest';
import { sealSimpleToken } from '@ward/auth/simple-tokens';
import { ManualClock } from '@ward/shared/clock';
import { MAX_CACHED_TOKENS_COUNT, SimpleTokenVerifier } from './simple-token-verifier';

const TOKEN = 'qLVEbLmctfpktPPy.51';
/** The cluster's tables hold tokens sealed; the lookup is asked with the sealed form. */
const sealed = (token: string): string => sealSimpleToken(token)!;

function setup(cacheMs = 1000) {
  const lookups: string[] = [];
  const answers = new Map<string, { valid: boolean; username: string; authRevision: number }>([[sealed(TOKEN), { valid: true, username: 'alice', authRevision: 3 }]]);
  const clock = new ManualClock(0);
  const verifier = new SimpleTokenVerifier(
    { resolveToken: async (token) => (lookups.push(token), answers.get(token) ?? { valid: false, username: '', authRevision: 0 }) },
    clock,
    cacheMs,
  );
  return { verifier, lookups, answers, clock };
}

describe('SimpleTokenVerifier', () => {
  it.each(['', 'abc', 'qLVEbLmctfpktPPy', 'qLVEbLmctfpktPPy.', 'qLVEbLmctfpktPPy.0', 'qLVEbLmctfpktPPy.01', 'qLVEbLmctfpkt1Py.5', 'Invalid Token', 'Invalid.Token', 'eyJhbGciOiJIUzI1NiJ9.e30.x'])(
    'refuses malformed token %j without asking the cluster',
    async (token) => {
      const { verifier, lookups } = setup();
      expect(await verifier.verify(token)).toBeUndefined();
      expect(lookups).toHaveLength(0);
    },
  );

  it('resolves through the cluster and reuses the answer for at most cacheMs', async () => {
    const { verifier, lookups, clock } = setup(1000);
    expect(await verifier.verify(TOKEN)).toEqual({ username: 'alice', authRevision: 3, cached: false });
    clock.advance(999);
    expect(await verifier.verify(TOKEN)).toEqual({ username: 'alice', authRevision: 3, cached: true });
    expect(lookups).toEqual([sealed(TOKEN)]);
    expect(lookups).not.toContain(TOKEN);
    clock.advance(1);
    expect(await verifier.verify(TOKEN)).toMatchObject({ cached: false });
    expect(lookups).toHaveLength(2);
  });

  it('never caches an invalid answer, and forget() drops a resolution', async () => {
    const { verifier, lookups, answers } = setup(1000);
    answers.set(sealed('abcdefghijklmnop.9'), { valid: false, username: '', authRevision: 0 });
    await verifier.verify('abcdefghijklmnop.9');
    await verifier.verify('abcdefghijklmnop.9');
    expect(lookups).toHaveLength(2);
    await verifier.verify(TOKEN);
    verifier.forget(TOKEN);
    await verifier.verify(TOKEN);
    expect(lookups.filter((t) => t === sealed(TOKEN))).toHaveLength(2);
  });

  it('cacheMs 0 disables the cache; more than 1 s is refused (the contract bound)', async () => {
    const { verifier, lookups } = setup(0);
    await verifier.verify(TOKEN);
    await verifier.verify(TOKEN);
    expect(lookups).toHaveLength(2);
    expect(() => setup(1001)).toThrow(TypeError);
  });

  it('keeps the cache bounded', async () => {
    const { verifier, answers, lookups } = setup(1000);
    const letters = 'abcdefghijklmnop';
    for (let i = 1; i <= MAX_CACHED_TOKENS_COUNT + 1; i++) answers.set(sealed(`${letters}.${i}`), { valid: true, username: 'u', authRevision: 1 });
    for (let i = 1; i <= MAX_CACHED_TOKENS_COUNT + 1; i++) await verifier.verify(`${letters}.${i}`);
    lookups.length = 0;
    await verifier.verify(`${letters}.1`); // the oldest was evicted
    await verifier.verify(`${letters}.${MAX_CACHED_TOKENS_COUNT + 1}`);
    expect(lookups).toEqual([sealed(`${letters}.1`)]);
  });
});
