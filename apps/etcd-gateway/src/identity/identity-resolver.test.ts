import { describe, expect, it } from 'vitest';
import { ManualClock } from '@ward/shared/clock';
import { isWireError } from '@ward/etcd/wire-errors';
import { IdentityResolver } from './identity-resolver';
import type { TokenVerifier } from './token-verifier';

function setup(options: { valid?: Record<string, { username: string; authRevision: number }>; enabled: boolean }) {
  const probes: number[] = [];
  const verified: string[] = [];
  const verifier: TokenVerifier = {
    verify: async (token) => {
      verified.push(token);
      const hit = options.valid?.[token];
      return hit === undefined ? undefined : { ...hit, cached: false };
    },
    forget: () => undefined,
  };
  const clock = new ManualClock(1000);
  const state = { enabled: options.enabled };
  const resolver = new IdentityResolver(verifier, { authEnabled: async () => (probes.push(1), state.enabled) }, clock, 1000);
  return { resolver, probes, verified, clock, state };
}

describe('IdentityResolver (etcd 3.7 AuthInfoFromCtx)', () => {
  it('no token: no identity, nothing asked', async () => {
    const { resolver, probes, verified } = setup({ enabled: true });
    expect(await resolver.identify(undefined)).toMatchObject({ username: '', authRevision: 0 });
    expect(probes).toHaveLength(0);
    expect(verified).toHaveLength(0);
  });

  it('a valid token gives its identity without asking whether auth is enabled', async () => {
    const { resolver, probes } = setup({ enabled: true, valid: { good: { username: 'alice', authRevision: 7 } } });
    expect(await resolver.identify('good')).toMatchObject({ username: 'alice', authRevision: 7 });
    expect(probes).toHaveLength(0);
  });

  it('an invalid token while auth is enabled: invalid auth token', async () => {
    const { resolver } = setup({ enabled: true });
    const error = await resolver.identify('garbage').catch((e: unknown) => e);
    expect(isWireError(error, 'InvalidAuthToken')).toBe(true);
  });

  it('an invalid token while auth is disabled is ignored (3.4.28+/3.5.10+/3.7)', async () => {
    const { resolver } = setup({ enabled: false });
    expect(await resolver.identify('garbage')).toMatchObject({ username: '', authRevision: 0 });
  });

  it('reuses a "disabled" answer for at most the cache time, then asks again', async () => {
    const { resolver, probes, clock, state } = setup({ enabled: false });
    await resolver.identify('a');
    await resolver.identify('b');
    expect(probes).toHaveLength(1);
    state.enabled = true;
    clock.advance(1000);
    await expect(resolver.identify('c')).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
    expect(probes).toHaveLength(2);
  });

  it('never caches "enabled": every invalid token re-asks (enabling must bite at once)', async () => {
    const { resolver, probes } = setup({ enabled: true });
    await resolver.identify('x').catch(() => undefined);
    await resolver.identify('y').catch(() => undefined);
    expect(probes).toHaveLength(2);
  });

  it('refuses over-long tokens without a lookup', async () => {
    const { resolver, verified } = setup({ enabled: true });
    await expect(resolver.identify('x'.repeat(10_000))).rejects.toMatchObject({ wireName: 'InvalidAuthToken' });
    expect(verified).toHaveLength(0);
  });
});
